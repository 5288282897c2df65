#!/usr/bin/python3
"""Draws one figure of docs/figures from memwall's output with memwall.plot (PNG and SVG).

Run it with Debian's python3 (python3-matplotlib) and the memwall module on the path
(PYTHONPATH=build/python); docs/plots/make_figures.sh runs it for every figure:

  plot.py io-seq   OUT IO.json [IO.json ...]    bytes vs N, log-log, a fit per series
  plot.py io-sram  OUT IO.json                  bytes vs SRAM size M, a fit per series
  plot.py measured OUT IO.json                  simulated vs measured bytes, with y = x
  plot.py time     OUT SWEEP.csv [SWEEP.csv ...] simulated time vs N per workload
  plot.py stalls   OUT SWEEP.csv [SWEEP.csv ...] SM-time breakdown per point
  plot.py roofline OUT ROOFLINE.json RUN.json   the run's kernels on the chip's roofline
  plot.py calibration OUT CAL.json              held-out kernel times of a fit, with y = x
  plot.py validate OUT VALIDATE.csv [--quantity time|dram]
                                                a validate table's kernels, with y = x

A sweep CSV and a run's JSON name their config but not its file: `--config FILE_OR_PRESET` (the
one they were made with) adds it to the title, as the io figures' titles have it, after checking
that its name is the one the inputs carry.

OUT is a path without extension; OUT.png and OUT.svg are written, byte-identical for the same
inputs.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any, NoReturn


def fail(message: str) -> NoReturn:
    sys.stderr.write("plot.py: error: " + message + "\n")
    sys.exit(2)


try:
    import memwall
    from memwall import plot
except ImportError as error:  # memwall.plot.MissingDependency says what to install
    fail(str(error) if "matplotlib" in str(error) else
         f"cannot import memwall ({error}); build it and run with PYTHONPATH=build/python")


def load_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def load_csv(path: str) -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: {e}")
    if not rows:
        fail(f"{path}: no rows")
    return rows


def io_fixed(io: dict[str, Any], over: str) -> dict[str, Any]:
    """The parameters every point of an io report shares (the ones not swept)."""
    params = [p["params"] for p in io["points"]]
    return {k: v for k, v in params[0].items()
            if k != over and all(p.get(k) == v for p in params)}


def config_text(io: dict[str, Any]) -> str:
    """The config's name and the file or preset the io report names."""
    text = f"{memwall.load_config(io['config']).name} ({io['config']})"
    if io.get("ideal"):
        text += ", ideal two-level model (one SM, one 128 B L2 line)"
    return text


def io_seq(args: argparse.Namespace) -> None:
    series, titles = [], []
    reports = [load_json(p) for p in args.inputs]
    for io in reports:
        prefix = f"{io['workload']} " if len(reports) > 1 else ""
        series += [s._replace(label=prefix + s.label) for s in plot.io_series(io)]
        titles.append(plot.describe(None, io["workload"], io_fixed(io, "seq"), omit=["seq"]))
    title = f"Global-memory bytes vs N\n{config_text(reports[0])}\n" + "; ".join(titles)
    plot.save(plot.bytes_vs_n(series, title=title), args.out)


def io_sram(args: argparse.Namespace) -> None:
    if len(args.inputs) != 1:
        fail("io-sram takes one io JSON")
    io = load_json(args.inputs[0])
    fixed = io_fixed(io, "sram_bytes")
    fixed.pop("block_kv", None)  # chosen from M at each point
    title = (f"Global-memory bytes vs on-chip memory M\n{config_text(io)}\n"
             + plot.describe(None, io["workload"], fixed))
    plot.save(plot.bytes_vs_n(plot.io_series(io, over="sram_bytes"), title=title,
                              xlabel="on-chip memory M (B)", var="M"), args.out)


def measured(args: argparse.Namespace) -> None:
    if len(args.inputs) != 1:
        fail("measured takes one io JSON (memwall io --measured ... --json)")
    io = load_json(args.inputs[0])
    points = [p for p in io["points"] if p.get("measured")]
    if not points:
        fail(f"{args.inputs[0]}: no point joined a measured row")
    pairs = [
        ("SM→L2: simulated sectors requested vs measured SM-side xbar reads + writes",
         lambda p: p["measured"]["xbar_read_bytes"] + p["measured"]["xbar_write_bytes"],
         "sim_l2_bytes"),
        ("SM→L2: simulated sectors requested vs measured L2-side lts reads + writes "
         "(after the request coalescer)", lambda p: p["measured_l2_bytes"], "sim_l2_bytes"),
        ("HBM: simulated reads + write-backs vs measured dram reads + writes",
         lambda p: p["measured_dram_bytes"], "sim_dram_bytes"),
    ]
    series = [plot.Series(label, [get(p) for p in points], [p[sim] for p in points])
              for label, get, sim in pairs]
    seqs = sorted(p["params"]["seq"] for p in points)
    title = (f"Simulated vs measured bytes\n{config_text(io)}, L2 flushed between kernels\n"
             + plot.describe(None, io["workload"], io_fixed(io, "seq"), omit=["seq"])
             + f", N = {seqs[0]}…{seqs[-1]} (traces/measured/h200-sweep.csv)")
    plot.save(plot.sim_vs_measured(series, title=title), args.out)


# The kernel families of the measured H200 data, in legend order: (label, kernel names).
FAMILIES = [("flash2", ("flash2_fwd",)), ("naive qk", ("qk",)), ("naive softmax", ("softmax",)),
            ("naive pv", ("pv",))]


def family_series(rows: list[dict[str, Any]], kernel_of: Any, x_of: Any, y_of: Any,
                  where: str) -> list[Any]:
    series = []
    for label, kernels in FAMILIES:
        members = [r for r in rows if kernel_of(r) in kernels]
        if members:
            series.append(plot.Series(label, [x_of(r) for r in members],
                                      [y_of(r) for r in members]))
    if not series:
        fail(f"{where}: no row of a known kernel family")
    return series


def calibration(args: argparse.Namespace) -> None:
    if len(args.inputs) != 1:
        fail("calibration takes one JSON (memwall calibrate ... --json)")
    cal = load_json(args.inputs[0])
    try:
        rows = [r for r in cal["rows"] if r["set"] == "heldout"]
        rule, config = cal["heldout_rule"], cal["config"]
    except (KeyError, TypeError) as e:
        fail(f"{args.inputs[0]}: not a memwall calibrate JSON ({e})")
    series = family_series(rows, lambda r: r["kernel"], lambda r: r["meas_time_s"] * 1e6,
                           lambda r: r["sim_time_s"] * 1e6, args.inputs[0])
    fitted = ", ".join(f"{k} {v * 1e6:.3f} µs" if k == "launch_overhead" else f"{k} {v:.4g}"
                       for k, v in sorted(cal.get("params", {}).items()))
    title = (f"Held-out kernels ({rule}): simulated vs measured time\n{config} fitted on the "
             f"other kernels:\n{fitted}\n{cal.get('measured', '')}, L2 flushed between kernels")
    plot.save(plot.sim_vs_measured(series, title=title, unit="µs", quantity="kernel time"),
              args.out)


def validate(args: argparse.Namespace) -> None:
    if len(args.inputs) != 1:
        fail("validate takes one CSV (memwall validate ... --csv, or variants_table.py --csv)")
    rows = load_csv(args.inputs[0])
    for needed in ("experiment", "measured", "config", "case", "family", "kernel", "setting",
                   "meas_time_s", "sim_time_s", "meas_dram_bytes", "sim_dram_bytes"):
        if needed not in rows[0]:
            fail(f"{args.inputs[0]}: no column {needed!r}")
    # A case's kernels one by one; its `total` row only where it has one kernel (flash2).
    split = {r["case"] for r in rows if r["kernel"] != "total"}
    rows = [r for r in rows if r["kernel"] != "total" or r["case"] not in split]
    dram = args.quantity == "dram"
    if dram:
        rows = [r for r in rows if r["meas_dram_bytes"] and r["sim_dram_bytes"]
                and float(r["meas_dram_bytes"]) > 0]
    if not rows:
        fail(f"{args.inputs[0]}: no row to plot")
    key, scale = ("dram_bytes", 1e-6) if dram else ("time_s", 1e6)
    families: list[str] = []
    settings: list[str] = []
    for r in rows:
        if r["family"] not in families:
            families.append(r["family"])
        if r["setting"] not in settings:
            settings.append(r["setting"])
    series = [plot.Series(f, [float(r["meas_" + key]) * scale for r in rows if r["family"] == f],
                          [float(r["sim_" + key]) * scale for r in rows if r["family"] == f])
              for f in families]
    what = "DRAM bytes" if dram else "kernel time"
    title = (f"{rows[0]['experiment']}: simulated vs measured {what}\n{rows[0]['config']}; "
             f"{', '.join(settings)}\n({rows[0]['measured']})")
    plot.save(plot.sim_vs_measured(series, title=title, unit="MB" if dram else "µs",
                                   quantity=what), args.out)


def sweep_rows(path: str) -> list[dict[str, Any]]:
    rows = load_csv(path)
    for needed in ("seq", "time_s", "stall.compute", "config.name"):
        if needed not in rows[0]:
            fail(f"{path}: no column {needed!r}")
    out = []
    for r in sorted(rows, key=lambda r: int(r["seq"])):
        row: dict[str, Any] = dict(r)
        for key in list(row):
            if key in ("seq", "time_s") or key.startswith("stall."):
                row[key] = float(row[key]) if key != "seq" else int(row[key])
        out.append(row)
    return out


def named_config(name: str, config: str | None) -> str:
    """The inputs' config name, with the file or preset `--config` gave, checked against it."""
    if config is None:
        return name
    loaded = memwall.load_config(config).name
    if loaded != name:
        fail(f"--config {config} is {loaded!r}, but the inputs were made with {name!r}")
    return f"{name} ({config})"


def sweep_title(what: str, sweeps: list[list[dict[str, Any]]], config: str | None) -> str:
    first = sweeps[0][0]
    params = {k[len("workload.params."):]: v for k, v in first.items()
              if k.startswith("workload.params.")}
    return (f"{what}: {named_config(first['config.name'], config)}\n"
            + " vs ".join(s[0]["workload"] for s in sweeps) + " "
            + plot.describe(None, None, params, omit=["seq", "block_q", "block_kv"]))


def time_fig(args: argparse.Namespace) -> None:
    sweeps = [sweep_rows(p) for p in args.inputs]
    series = [plot.Series(s[0]["workload"], [r["seq"] for r in s], [r["time_s"] for r in s])
              for s in sweeps]
    plot.save(plot.time_vs_n(series, title=sweep_title("Simulated time vs N", sweeps, args.config)), args.out)


def stalls(args: argparse.Namespace) -> None:
    sweeps = [sweep_rows(p) for p in args.inputs]
    rows = [r for s in sweeps for r in s]
    plot.save(plot.stall_breakdown(rows, title=sweep_title("Where the SM time goes", sweeps,
                                                                   args.config)),
              args.out)


def roofline(args: argparse.Namespace) -> None:
    if len(args.inputs) != 2:
        fail("roofline takes ROOFLINE.json (memwall roofline --from RUN.json --json FILE) and "
             "RUN.json")
    roof, run = load_json(args.inputs[0]), load_json(args.inputs[1])
    runs = run if isinstance(run, list) else [run]
    title = ("Roofline: " + named_config(runs[0]["config"]["name"], args.config) + "\n"
             + " vs ".join(r["workload"]["name"] for r in runs) + " "
             + plot.describe(None, None, runs[0]["workload"]["params"],
                             omit=["block_q", "block_kv"]))
    plot.save(plot.roofline(roof, title=title), args.out)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=(__doc__ or "").split("\n", 2)[2])
    kinds = {"io-seq": io_seq, "io-sram": io_sram, "measured": measured, "time": time_fig,
             "stalls": stalls, "roofline": roofline, "calibration": calibration,
             "validate": validate}
    parser.add_argument("kind", choices=list(kinds), help="which figure")
    parser.add_argument("out", help="output path without extension (.png and .svg are written)")
    parser.add_argument("inputs", nargs="+", help="memwall io JSON, sweep CSV or roofline JSON")
    parser.add_argument("--quantity", choices=["time", "dram"], default="time",
                        help="validate: plot kernel times (default) or DRAM bytes")
    parser.add_argument("--config", metavar="FILE_OR_PRESET",
                        help="time, stalls, roofline: the config the inputs were made with, named "
                             "in the title beside the config's name (checked against it)")
    args = parser.parse_args()
    kinds[args.kind](args)
    print(f"plot.py: wrote {args.out}.png and {args.out}.svg")


if __name__ == "__main__":
    main()
