"""memwall.calibrate against `memwall calibrate`: the same load check, tables and calibrated file."""

from __future__ import annotations

import csv

import pytest

import memwall

SWEEP = "traces/measured/h200-sweep.csv"


@pytest.fixture
def small_measured(tmp_path):
    """The measured flash2 rows of B = 1, H = 8, d = 64 at N = 512 (fit) and 1024 (held out)."""
    with open(SWEEP, newline="") as f:
        reader = csv.DictReader(f)
        rows = [r for r in reader if r["workload"] == "flash2" and r["batch"] == "1"
                and r["heads"] == "8" and r["head_dim"] == "64" and r["seq"] in ("512", "1024")]
        fields = reader.fieldnames
    path = tmp_path / "m.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    assert len(rows) >= 4
    return path


def test_evaluate_is_the_cli_evaluate(cli, small_measured):
    done = cli("calibrate", "--config", "h200-calibrated", "--measured", str(small_measured),
               "--evaluate", "-j", "2")
    r = memwall.calibrate("h200-calibrated", small_measured, evaluate=True, jobs=2)
    assert done.stdout == r.load_check + "\n" + r.text
    assert r.failures == 0 and r.yaml == ""
    assert r["fit"]["rows"] + r["heldout"]["rows"] > 0


def test_a_fit_writes_the_cli_calibrated_file(cli, small_measured, tmp_path):
    cli_out, py_out = tmp_path / "cli.yaml", tmp_path / "py.yaml"
    done = cli("calibrate", "--config", "h200", "--measured", str(small_measured), "-o", str(cli_out),
               "--params", "mma_sync,launch_overhead", "--max-iterations", "2")
    r = memwall.calibrate("h200", small_measured, output=py_out, params=["mma_sync", "launch_overhead"],
                          max_iterations=2)
    assert r.load_check + "\n" + r.text + f"wrote {cli_out}\n" == done.stdout
    # The same file but for its date and its own name in the command it records.
    def strip(text, name):
        return [l.replace(str(name), "OUT") for l in text.splitlines() if not l.startswith("# date")]
    assert strip(py_out.read_text(), py_out) == strip(cli_out.read_text(), cli_out)
    assert r.yaml == py_out.read_text()
    assert memwall.load_config(py_out)["efficiency.mma_sync"].value == pytest.approx(r.params["mma_sync"])


def test_the_load_check_alone_simulates_no_table(small_measured):
    r = memwall.calibrate("h200", small_measured, load_check=True)
    assert r.failures == 0 and r.text == "" and "load" in r.load_check.lower()
