"""memwall.closed_form, traffic and roofline against `memwall trace --counts`, `traffic`, `roofline`."""

from __future__ import annotations

import json

import memwall
from conftest import SMALL, cli_flags


def test_closed_form_is_the_closed_form_trace_counts_prints(cli, tmp_path):
    for workload, params in [("naive", SMALL), ("flash2", {**SMALL, "block_q": 64}),
                             ("gemm", {"m": 512, "n": 256, "k": 128})]:
        out = tmp_path / f"{workload}.json"
        cli("trace", "--workload", workload, *cli_flags(params), "--counts", "--json", str(out))
        counts = json.loads(out.read_text())
        got = memwall.closed_form(workload, **params)
        assert {k: got[k] for k in counts["closed_form"]} == counts["closed_form"]
        assert got.params == counts["params"]
        assert got.workload == counts["workload"]


def test_closed_form_on_a_config_takes_its_shared_memory(cli, tmp_path):
    out = tmp_path / "f1.json"
    cli("trace", "--workload", "flash1", *cli_flags(SMALL), "--config", "a100-80gb",
        "--counts", "--json", str(out))
    got = memwall.closed_form("flash1", config="a100-80gb", **SMALL)
    assert got.global_read_bytes == json.loads(out.read_text())["closed_form"]["global_read_bytes"]
    assert got.params == json.loads(out.read_text())["params"]


def test_traffic_is_memwall_traffic(cli, tmp_path):
    for args, kwargs in [(["--sram", "100 KiB", "--heads", "4"], {"sram_bytes": "100 KiB", "heads": 4}),
                         (["--config", "h200", "--block-q", "64"], {"config": "h200", "block_q": 64})]:
        out = tmp_path / "traffic.json"
        done = cli("traffic", "--seq", "4096", "--head-dim", "64", *args, "--json", str(out))
        got = memwall.traffic(4096, 64, **kwargs)
        assert got.json == out.read_text()
        assert got.text == done.stdout


def test_roofline_places_the_reports_kernels_as_the_cli_does(cli, tmp_path):
    report = memwall.run("h200", workload="naive", **SMALL)
    (tmp_path / "report.json").write_text(report.json)
    out = tmp_path / "roof.json"
    done = cli("roofline", "--config", "h200", "--from", str(tmp_path / "report.json"),
               "--intensity", "1", "--intensity", "300", "--json", str(out))
    roof = memwall.roofline("h200", reports=[report], intensities=[1, 300])
    assert roof.json == out.read_text()
    assert roof.text.replace("report 0", str(tmp_path / "report.json")) == done.stdout
    assert [k.name for k in roof.kernels][:1] == [k["name"] for k in json.loads(out.read_text())["kernels"]][:1]
