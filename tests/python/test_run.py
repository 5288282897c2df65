"""memwall.run against `memwall run --json`: the same report, byte for byte, and its tables."""

from __future__ import annotations

import json
import threading

import pytest

import memwall
from conftest import SMALL, cli_flags


def cli_run(cli, tmp_path, config, workload, params, *extra):
    out = tmp_path / "report.json"
    done = cli("run", "--config", config, "--workload", workload, *cli_flags(params),
               "--json", str(out), *extra)
    return out.read_text(), done.stdout


def test_a_report_is_the_cli_json_report_byte_for_byte(cli, tmp_path):
    json_text, stdout = cli_run(cli, tmp_path, "h200", "flash2", SMALL)
    report = memwall.run("h200", workload="flash2", **SMALL)
    assert report.json == json_text
    assert report.text == stdout


def test_overrides_and_tiling_reach_the_simulation_as_cli_flags(cli, tmp_path):
    params = {**SMALL, "block_q": 64, "block_kv": 64, "dtype": "fp32"}
    json_text, _ = cli_run(cli, tmp_path, "h100-sxm", "naive", params,
                           "--set", "l2.size=25 MiB", "--flush-l2-between-kernels")
    config = memwall.load_config("h100-sxm", set={"l2.size": "25 MiB"})
    report = memwall.run(config, workload="naive", flush_l2_between_kernels=True, **params)
    assert report.json == json_text
    assert report.flush_l2_between_kernels is True


def test_several_workloads_are_compared_side_by_side_as_the_cli_does(cli, tmp_path):
    json_text, stdout = cli_run(cli, tmp_path, "h200", "naive,flash2", SMALL)
    reports = memwall.run("h200", workload=["naive", "flash2"], **SMALL)
    assert [r.workload.name for r in reports] == ["naive", "flash2"]
    assert reports.json == json_text
    assert reports.text == stdout


def test_report_keys_read_as_attributes_and_tables():
    report = memwall.run("h200", workload="naive", **SMALL)
    assert report.time_s == report["time_s"] > 0
    assert report.workload.params.seq == SMALL["seq"]
    assert [k.name for k in report.kernels] == ["qk", "softmax", "pv"]
    kernels = report.kernel_table()
    assert list(kernels["name"]) == [k.name for k in report.kernels]
    assert list(kernels["stall.compute"]) == [k.stall.compute for k in report.kernels]
    tensors = report.tensor_table()
    assert list(tensors["tensor"]) == list(report.dram_bytes_by_tensor)
    assert list(tensors["read"]) == [t.read for t in report.dram_bytes_by_tensor.values()]
    assert list(tensors["compulsory"] + tensors["reread"]) == list(tensors["read"])
    assert sum(tensors["reread"]) == report.dram_bytes_by_reason.reread


def test_tables_are_lists_of_dicts_without_pandas(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    report = memwall.run("h200", workload="flash2", **SMALL)
    assert report.tensor_table() == [
        {"tensor": name, "read": t.read, "write": t.write, "compulsory": t.compulsory,
         "reread": t.reread}
        for name, t in report.dram_bytes_by_tensor.items()]
    assert report.kernel_table()[0]["name"] == report.kernels[0].name


def test_the_same_run_gives_the_same_bytes_also_from_threads_at_once():
    first = memwall.run("h200", workload="flash2", **SMALL).json
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(
        memwall.run("h200", workload="flash2", **SMALL).json)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [first] * 3


def test_every_parameter_with_a_flag_is_a_keyword_argument():
    declared = {p.name for w in memwall.workloads() for p in w.params if p.flag}
    assert {name for name, _ in memwall._core.parameters()} == declared
    assert all(name in memwall.run.__doc__ for name in declared)


def test_parameters_a_plugin_adds_are_keyword_arguments_as_they_are_cli_flags(cli, tmp_path):
    declared = {p.name for w in memwall.workloads() for p in w.params}
    variant = {k: v for k, v in {"causal": True, "kv_heads": 1, "seq_kv": 1024,
                                 "splits": "auto"}.items() if k in declared}
    params = {**SMALL, **variant}
    json_text, _ = cli_run(cli, tmp_path, "h200", "flash2", params)
    assert memwall.run("h200", workload="flash2", **params).json == json_text


def test_the_wgmma_kernel_is_a_keyword_as_it_is_a_cli_flag(cli, tmp_path):
    params = {**SMALL, "gemm": "wgmma", "block_kv": 256}
    json_text, stdout = cli_run(cli, tmp_path, "h200", "naive", params)
    report = memwall.run("h200", workload="naive", **params)
    assert report.json == json_text
    assert report.text == stdout
    assert report.workload.params["gemm"] == "wgmma"
    # A persistent grid: no more qk CTAs than the chip has SMs.
    assert report.kernels[0]["grid_ctas"] <= memwall.load_config("h200")["sm.count"].value


def test_what_if_variants_are_the_cli_tables_byte_for_byte(cli, tmp_path):
    out = tmp_path / "what-if.json"
    _, stdout = cli_run(cli, tmp_path, "h200", "naive", SMALL, "--what-if", "hbm-x2,perfect-l2",
                        "--what-if-json", str(out))
    report = memwall.run("h200", workload="naive", what_if=["hbm-x2", "perfect-l2"], **SMALL)
    assert memwall.run("h200", workload="naive", **SMALL).json == report.json
    assert report.what_if == json.loads(out.read_text())
    assert report.what_if_text in stdout
    with pytest.raises(memwall.UsageError, match="hbm-x3"):
        memwall.run("h200", workload="naive", what_if="hbm-x3", **SMALL)


def test_a_timeline_is_the_cli_timeline_byte_for_byte(cli, tmp_path):
    cli("run", "--config", "h200", "--workload", "flash2", *cli_flags(SMALL),
        "--timeline", str(tmp_path / "cli.json"), "--timeline-budget", "500")
    memwall.run("h200", workload="flash2", timeline=tmp_path / "py.json", timeline_budget=500, **SMALL)
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    assert json.loads((tmp_path / "py.json").read_text())["traceEvents"]
    with pytest.raises(memwall.UsageError, match="single workload"):
        memwall.run("h200", workload=["naive", "flash2"], timeline=tmp_path / "x.json", **SMALL)
