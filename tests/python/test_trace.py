"""memwall.trace and memwall.replay against `memwall trace -o` and `memwall replay --json`."""

from __future__ import annotations

import memwall
from conftest import SMALL, cli_flags


def test_a_trace_is_the_cli_trace_byte_for_byte(cli, tmp_path):
    params = {**SMALL, "gemm": "wgmma", "block_kv": 256}
    cli("trace", "--config", "h200", "--workload", "naive", *cli_flags(params),
        "-o", str(tmp_path / "cli.mwt"))
    t = memwall.trace(tmp_path / "py.mwt", "naive", config="h200", **params)
    assert (tmp_path / "py.mwt").read_bytes() == (tmp_path / "cli.mwt").read_bytes()
    assert t.bytes == (tmp_path / "py.mwt").stat().st_size
    assert t.kernels == 3 and t.params["gemm"] == "wgmma"


def test_a_replay_is_the_cli_replay_and_the_run_it_was_traced_from(cli, tmp_path):
    path = tmp_path / "f2.mwt"
    memwall.trace(path, "flash2", **SMALL)
    cli("replay", "--config", "h200", str(path), "--json", str(tmp_path / "cli.json"))
    replayed = memwall.replay("h200", path)
    assert replayed.json == (tmp_path / "cli.json").read_text()
    run = memwall.run("h200", workload="flash2", **SMALL)
    assert replayed.time_s == run.time_s
    assert replayed.dram_read_bytes == run.dram_read_bytes


def test_a_corrupt_trace_is_a_trace_error_naming_the_file(tmp_path):
    path = tmp_path / "bad.mwt"
    path.write_bytes(b"MWTRACE\0" + b"\x09\0\0\0\0\0\0\0")
    try:
        memwall.replay("h200", path)
    except memwall.TraceError as e:
        assert str(path) in str(e) and "unsupported trace version 9" in str(e)
    else:
        raise AssertionError("no TraceError")
