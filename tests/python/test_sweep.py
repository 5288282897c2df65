"""memwall.sweep against `memwall sweep -o F.csv`: the same rows, cell for cell."""

from __future__ import annotations

import csv
import sys

import pytest

import memwall

AXES = {"seq": [256, 512], "head_dim": 64}
SETS = {"l2.size": ["25 MiB", "50 MiB"]}


def cli_sweep(cli, tmp_path, *args):
    out = tmp_path / "sweep.csv"
    cli("sweep", "--config", "h200", "--workload", "flash2", *args, "-o", str(out))
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def test_sweep_cells_are_the_cli_csv_cells_byte_for_byte_in_parallel(cli, tmp_path):
    header, rows = cli_sweep(cli, tmp_path, "--seq", "256,512", "--head-dim", "64",
                             "--set", "l2.size=25 MiB,50 MiB", "-j", "2")
    config = memwall.load_config("h200")
    axes = memwall._core.sweep_axes()
    values = [""] * len(axes)
    for name, value in [("workload", "flash2"), ("seq", "256,512"), ("head_dim", "64")]:
        values[axes.index(name)] = value
    got = memwall._core.sweep(config._core, values, ["l2.size=25 MiB,50 MiB"], 2, False)
    assert got == (header, rows)


def test_sweep_gives_a_dataframe_with_numbers_as_numbers(cli, tmp_path):
    header, rows = cli_sweep(cli, tmp_path, "--seq", "256,512", "--head-dim", "64",
                             "--set", "l2.size=25 MiB,50 MiB")
    frame = memwall.sweep("h200", "flash2", set=SETS, jobs=2, **AXES)
    assert list(frame.columns) == header
    assert len(frame) == 4
    assert list(frame["seq"]) == [256, 256, 512, 512]
    assert list(frame["l2.size"]) == ["25 MiB", "50 MiB"] * 2
    for i, row in enumerate(rows):
        for name, cell in zip(header, row):
            value = frame[name].iloc[i]
            assert str(value).lower() == cell.lower() or float(value) == float(cell), name


def test_one_job_and_two_jobs_give_the_same_rows():
    one = memwall.sweep("h200", "flash2", set=SETS, jobs=1, **AXES)
    two = memwall.sweep("h200", "flash2", set=SETS, jobs=2, **AXES)
    assert one.equals(two)


def test_without_pandas_a_sweep_is_a_list_of_dicts(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    rows = memwall.sweep("h200", "naive", seq="256..512x2", head_dim=64)
    assert [(r["workload"], r["seq"]) for r in rows] == [("naive", 256), ("naive", 512)]
    assert isinstance(rows[0]["time_s"], float)
    assert rows[0]["flush_l2_between_kernels"] is False


def test_a_config_with_overrides_is_swept_with_them(cli, tmp_path):
    header, rows = cli_sweep(cli, tmp_path, "--seq", "256", "--set", "hbm.bandwidth=1 TB/s")
    config = memwall.load_config("h200", set={"hbm.bandwidth": "1 TB/s"})
    frame = memwall.sweep(config, "flash2", seq=256)
    assert frame["time_s"].iloc[0] == float(rows[0][header.index("time_s")])


def test_sweep_errors_are_the_cli_errors(cli, tmp_path):
    with pytest.raises(memwall.UsageError) as e:
        memwall.sweep("h200", ["naive", "flash2"], seq=256)
    assert str(e.value) == cli.error("sweep", "--config", "h200", "--workload", "naive,flash2",
                                     "--seq", "256", "-o", str(tmp_path / "x.csv"))
    with pytest.raises(memwall.UsageError) as e:
        memwall.sweep("h200", "flash2", seq="1024..256x2")
    assert str(e.value) == cli.error("sweep", "--config", "h200", "--workload", "flash2",
                                     "--seq", "1024..256x2", "-o", str(tmp_path / "x.csv"))
    with pytest.raises(memwall.Error) as e:
        memwall.sweep("h200", "flash2", seq=256, head_dim=256, block_q=[64, 256], block_kv=64)
    assert str(e.value).startswith("point 1 (workload=flash2 seq=256 head_dim=256 block_q=256 ")
    assert str(e.value) == cli.error("sweep", "--config", "h200", "--workload", "flash2",
                                     "--seq", "256", "--head-dim", "256", "--block-q", "64,256",
                                     "--block-kv", "64", "-o", str(tmp_path / "x.csv"))
    with pytest.raises(memwall.UsageError, match="unknown sweep axis"):
        memwall.sweep("h200", "flash2", sequence=256)
