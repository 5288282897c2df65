"""memwall.io against `memwall io --json`: the same points and fits, byte for byte."""

from __future__ import annotations

import memwall


def test_io_is_the_cli_io_byte_for_byte(cli, tmp_path):
    out = tmp_path / "io.json"
    done = cli("io", "--config", "hypothetical/teaching-gpu", "--workload", "gemm",
               "--seq", "256..1024x2", "--sram", "16 KiB", "--ideal", "--json", str(out))
    r = memwall.io("hypothetical/teaching-gpu", "gemm", seq=[256, 512, 1024], sram_bytes="16 KiB",
                   ideal=True)
    assert r.json == out.read_text()
    assert r.text == done.stdout
    assert [p["params"]["m"] for p in r.points] == [256, 512, 1024]  # gemm: m = n = k = seq
    # Hong-Kung: the simulated bytes grow as n^3 at a fixed M.
    fit = next(f for f in r.fits if f["metric"] == "sim_dram_bytes")
    assert abs(fit["exponent"] - 3.0) < 0.1


def test_io_logs_nothing_by_default(capfd):
    memwall.io("hypothetical/teaching-gpu", "gemm", seq=256, sram_bytes="16 KiB", ideal=True)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_io_takes_one_workload(cli):
    try:
        memwall.io("hypothetical/teaching-gpu", "naive,flash2", seq=[256, 512])
    except memwall.UsageError as e:
        assert "one workload" in str(e)
    else:
        raise AssertionError("no UsageError")
