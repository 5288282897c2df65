"""memwall.plot: what each figure says (titles, units, a fit per series with its own exponent,
legends off the data), byte-identical files, and a clear error without matplotlib."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed")

import memwall  # noqa: E402
import memwall.plot as mplot  # noqa: E402
import numpy  # noqa: E402
from conftest import MEMWALL_EXE, ROOT, SMALL  # noqa: E402

SEQS = [256, 512, 1024]


def legend_texts(fig):
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()] \
        + [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def assert_legends_off_the_data(fig):
    """No legend box overlaps the area of any axes (drawn, in display coordinates)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    assert legends
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            if ax.get_visible():
                assert not box.overlaps(ax.get_window_extent(renderer)), legend


def title_of(fig):
    return fig.axes[0].get_title() or fig._suptitle.get_text()


def test_bytes_vs_n_fits_each_series_alone_and_labels_its_own_exponent():
    frame = memwall.sweep("h200", "flash2", seq=SEQS, head_dim=64, heads=2, jobs=2)
    l2 = mplot.Series("simulated SM→L2", frame["seq"], frame["l2_read_bytes"] + frame["l2_write_bytes"])
    hbm = mplot.Series("simulated HBM", frame["seq"], frame["dram_read_bytes"] + frame["dram_write_bytes"])
    fig = mplot.bytes_vs_n([l2, hbm], title="flash2 on " + mplot.describe("NVIDIA H200", "flash2", SMALL))
    labels = legend_texts(fig)
    for series in (l2, hbm):
        slope = numpy.polyfit(numpy.log(series.x), numpy.log(series.y), 1)[0]
        assert f"{series.label}: fit ∝ N^{slope:.2f}" in labels
    # Each series' dashed line goes through its own fit, not through a common slope.
    lines = [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "--"]
    assert len(lines) == 2
    slopes = [numpy.polyfit(numpy.log(ln.get_xdata()), numpy.log(ln.get_ydata()), 1)[0] for ln in lines]
    assert slopes[0] != pytest.approx(slopes[1], abs=0.05)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"
    assert "(B)" in fig.axes[0].get_ylabel()
    assert "NVIDIA H200" in title_of(fig) and "N=512" in title_of(fig)
    assert_legends_off_the_data(fig)


def test_fit_exponent_recovers_a_power_law():
    k, c = mplot.fit_exponent([2, 4, 8], [3 * 2 ** 1.5, 3 * 4 ** 1.5, 3 * 8 ** 1.5])
    assert k == pytest.approx(1.5) and c == pytest.approx(3)
    with pytest.raises(ValueError):
        mplot.fit_exponent([4, 4], [1, 2])


def test_io_series_names_the_counter_each_measured_series_plots():
    with open(ROOT / "docs/figures/data/io_flash2_h200_measured.json", encoding="utf-8") as f:
        io = json.load(f)
    series = {s.label: s for s in mplot.io_series(io)}
    xbar = series[mplot.IO_LABELS["measured_xbar_bytes"]]
    lts = series[mplot.IO_LABELS["measured_l2_bytes"]]
    assert "SM-side xbar" in xbar.label and "after the request coalescer" in lts.label
    points = sorted(io["points"], key=lambda p: p["params"]["seq"])
    assert list(xbar.y) == [p["measured"]["xbar_read_bytes"] + p["measured"]["xbar_write_bytes"]
                            for p in points]
    assert list(lts.y) == [p["measured_l2_bytes"] for p in points]
    # The closed form's exponent labels the closed form only, never the HBM series.
    assert series[mplot.IO_LABELS["closed_form_bytes"]].expected == 2
    assert series[mplot.IO_LABELS["sim_dram_bytes"]].expected is None


def test_roofline_places_every_kernel_of_the_run_with_its_share_of_the_roof():
    reports = memwall.run("h200", workload=["naive", "flash2"], **SMALL)
    roof = memwall.roofline("h200", reports=list(reports))
    fig = mplot.roofline(roof, title="Roofline: " + mplot.describe("NVIDIA H200", "naive vs flash2", SMALL))
    labels = legend_texts(fig)
    for k in roof.kernels:
        if k.plotted:
            assert f"{k.name}: {k.intensity:.3g} FLOP/B, {100 * k.fraction_of_roof:.1f}% of roof" in labels
    points = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "None"]
    assert sorted((float(p.get_xdata()[0]), float(p.get_ydata()[0])) for p in points) == \
        sorted((k.intensity, k.achieved_flops) for k in roof.kernels if k.plotted)
    assert "FLOP/s" in fig.axes[0].get_ylabel() and "FLOP per HBM byte" in fig.axes[0].get_xlabel()
    assert_legends_off_the_data(fig)


def test_stall_breakdown_stacks_each_runs_shares_from_its_report():
    frame = memwall.sweep("h200", "naive", seq=SEQS, head_dim=64, heads=2)
    fig = mplot.stall_breakdown(frame, title="naive on NVIDIA H200")
    bars = fig.axes[0].patches
    assert len(bars) == 4 * len(SEQS)
    for i, (key, _) in enumerate(mplot.STALL_CAUSES):
        heights = [bars[i * len(SEQS) + j].get_height() for j in range(len(SEQS))]
        assert heights == pytest.approx(list(100 * frame[f"stall.{key}"]))
    assert "(%)" in fig.axes[0].get_ylabel()
    assert_legends_off_the_data(fig)


def test_sim_vs_measured_draws_y_equals_x_and_names_the_ratio_range():
    series = mplot.Series("HBM: simulated vs measured dram reads + writes", [100, 200], [110, 180])
    fig = mplot.sim_vs_measured([series], title="test")
    diagonal = fig.axes[0].get_lines()[0]
    assert list(diagonal.get_xdata()) == list(diagonal.get_ydata())
    assert any("simulated/measured 0.90–1.10" in t for t in legend_texts(fig))
    assert_legends_off_the_data(fig)


def test_memory_bound_sweep_draws_one_panel_per_key():
    frame = memwall.sweep("h200", "flash2", set={"hbm.bandwidth": ["1 TB/s", "4 TB/s"]}, **SMALL)
    fig = mplot.memory_bound_sweep({"hbm.bandwidth": frame}, title="flash2")
    memory = fig.axes[0].get_lines()[0]
    assert list(memory.get_ydata()) == pytest.approx(
        list(100 * (frame["stall.memory_latency"] + frame["stall.memory_bandwidth"])))
    assert fig.axes[0].get_xlabel() == "hbm.bandwidth"
    assert_legends_off_the_data(fig)


def test_save_writes_the_same_bytes_for_the_same_figure(tmp_path):
    def draw(stem):
        fig = mplot.bytes_vs_n([mplot.Series("a", [1, 2, 4], [1, 4, 16])], title="t")
        return mplot.save(fig, str(tmp_path / stem))

    first, second = draw("one"), draw("two")
    for a, b in zip(first, second):
        assert open(a, "rb").read() == open(b, "rb").read()
    assert first[0].endswith(".png") and first[1].endswith(".svg")


def test_a_figure_shows_itself_in_a_notebook_as_png():
    fig = mplot.bytes_vs_n([mplot.Series("a", [1, 2, 4], [1, 4, 16])], title="t")
    assert fig._repr_png_().startswith(b"\x89PNG")


def no_matplotlib(tmp_path):
    """An environment in which `import matplotlib` fails as it does where it is not installed."""
    fake = tmp_path / "fake"
    fake.mkdir(exist_ok=True)
    (fake / "matplotlib.py").write_text("raise ModuleNotFoundError(\"No module named 'matplotlib'\")\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")])}


def test_without_matplotlib_the_error_says_what_to_install(tmp_path):
    env = no_matplotlib(tmp_path)
    done = subprocess.run([sys.executable, "-c", "import memwall.plot"], env=env,
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "memwall.plot needs matplotlib" in done.stderr and "python3-matplotlib" in done.stderr
    assert "MissingDependency" in done.stderr
    # The figure script says it in one line, without a traceback.
    done = subprocess.run([sys.executable, str(ROOT / "docs/plots/plot.py"), "io-seq", "x", "y.json"],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("plot.py: error: memwall.plot needs matplotlib")
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_make_figures_stops_before_simulating_without_matplotlib(tmp_path):
    env = {**no_matplotlib(tmp_path), "PYTHON": sys.executable, "MEMWALL": MEMWALL_EXE,
           "MEMWALL_PYTHONPATH": no_matplotlib(tmp_path)["PYTHONPATH"]}
    out = tmp_path / "figures"
    done = subprocess.run([str(ROOT / "docs/plots/make_figures.sh"), str(out)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "memwall.plot needs matplotlib" in done.stderr
    assert not (out / "data").exists() or not any((out / "data").iterdir())


def test_sweep_figure_titles_name_the_config_file_checked_against_the_csv(tmp_path):
    csv = tmp_path / "sweep.csv"
    subprocess.run([MEMWALL_EXE, "sweep", "--config", "h200", "--workload", "flash2", "--heads",
                    "2", "--head-dim", "64", "--seq", "512,1024", "-o", str(csv)],
                   check=True, capture_output=True)
    script = str(ROOT / "docs/plots/plot.py")
    done = subprocess.run([sys.executable, script, "--config", "h200", "time", str(tmp_path / "t"),
                           str(csv)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "t.png").exists()
    # The title (the figure's text is drawn as paths, so it is read from the script's own call).
    spec = importlib.util.spec_from_file_location("plot_script", script)
    plot_script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot_script)
    title = plot_script.sweep_title("Simulated time vs N", [plot_script.sweep_rows(str(csv))], "h200")
    assert title.startswith("Simulated time vs N: NVIDIA H200 (h200)\n")
    # A config other than the one the sweep ran on is refused, naming both.
    done = subprocess.run([sys.executable, script, "--config", "a100-40gb", "stalls",
                           str(tmp_path / "s"), str(csv)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "a100-40gb" in done.stderr and "'NVIDIA H200'" in done.stderr
    assert not (tmp_path / "s.png").exists()


def test_validation_figures_draw_every_held_out_kernel_and_every_validate_row(tmp_path):
    script = str(ROOT / "docs/plots/plot.py")
    spec = importlib.util.spec_from_file_location("plot_script", script)
    plot_script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot_script)
    cal_path = ROOT / "traces/measured/calibration-h200.json"
    cal = json.loads(cal_path.read_text())
    held = [r for r in cal["rows"] if r["set"] == "heldout"]
    series = plot_script.family_series(held, lambda r: r["kernel"], lambda r: r["meas_time_s"],
                                       lambda r: r["sim_time_s"], "cal")
    # Every held-out kernel is one point of one family, as the fit's summary counts them.
    assert sum(len(s.x) for s in series) == len(held) == cal["heldout"]["rows"]
    done = subprocess.run([sys.executable, script, "calibration", str(tmp_path / "c"),
                           str(cal_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c.png").exists() and (tmp_path / "c.svg").exists()
    for quantity in ("time", "dram"):
        done = subprocess.run([sys.executable, script, "validate", str(tmp_path / quantity),
                               str(ROOT / "traces/measured/h200-l2-size-validate.csv"),
                               "--quantity", quantity], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / f"{quantity}.svg").exists()
    # A JSON that is not a fit's is refused in one line.
    other = tmp_path / "other.json"
    other.write_text('{"points": []}')
    done = subprocess.run([sys.executable, script, "calibration", str(tmp_path / "x"), str(other)],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "not a memwall calibrate JSON" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x.png").exists()


def test_the_committed_variants_rows_are_the_measured_kernels_of_h200_variants_csv():
    # traces/measured/h200-variants-validate.csv (variants_table.py --csv): one row per measured
    # kernel, its measured time and DRAM bytes those of the measured CSV, its error its own ratio.
    import csv as csvmod
    measured = {}
    with open(ROOT / "traces/measured/h200-variants.csv", newline="") as f:
        for line, r in enumerate(csvmod.DictReader(f), start=2):
            if r["kernel"] != "total":
                measured[line] = r
    with open(ROOT / "traces/measured/h200-variants-validate.csv", newline="") as f:
        rows = list(csvmod.DictReader(f))
    assert len(rows) == len(measured) == 71
    for r in rows:
        # A case's first line is its forward kernel's; a split case's combine comes next.
        m = measured[int(r["line"]) + {"flash2_fwd": 0, "flash2_combine": 1}[r["kernel"]]]
        assert m["kernel"] == r["kernel"]
        assert float(r["meas_time_s"]) == float(m["ncu_time_s"])
        assert int(r["meas_dram_bytes"]) == int(m["dram_read_bytes"]) + int(m["dram_write_bytes"])
        assert abs(float(r["time_error"]) - (float(r["sim_time_s"]) / float(r["meas_time_s"]) - 1)) < 1e-12
