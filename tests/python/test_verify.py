"""memwall.verify against `memwall verify`: the same comparison, number for number."""

from __future__ import annotations

import re

import pytest

import memwall
from conftest import cli_flags

CASES = [
    ("gemm", {"m": 300, "n": 200, "k": 100}),
    ("flash2", {"seq": 200, "head_dim": 64, "block_kv": 48, "heads": 2, "kv_heads": 1, "causal": True}),
    ("naive", {"seq": 200, "head_dim": 64, "heads": 2, "gemm": "wgmma", "block_kv": 256}),
]


@pytest.mark.parametrize("workload,params", CASES)
def test_verify_is_the_cli_verify(cli, workload, params):
    out = cli("verify", "--workload", workload, *cli_flags(params), "--seed", "7").stdout
    m = re.search(r": (\S+(?:, \S+)*) over (\d+) elements: max abs error (\S+) \(tolerance (\S+)\): (PASS|FAIL)", out)
    assert m, out
    r = memwall.verify(workload, seed=7, **params)
    assert r.output == m.group(1)
    assert r.elements == int(m.group(2))
    assert f"{r.max_abs_error:.3e}" == m.group(3)
    assert r.passed == (m.group(5) == "PASS")
    shape = " ".join(f"{k}={v}" for k, v in r.params.items() if k != "workload")
    assert f"verify {workload} {shape}:" in out


def test_a_wrong_variant_fails_verification_as_the_cli_says():
    # Without the online rescale flash2 computes the wrong function: the error is far above 1e-10.
    r = memwall.verify("flash2", seq=256, head_dim=32, block_kv=32, online_rescale=False)
    assert not r.passed and r.max_abs_error > 1e-3


def test_a_shape_too_large_to_verify_is_a_usage_error():
    with pytest.raises(memwall.UsageError, match="verify"):
        memwall.verify("naive", seq=65536, head_dim=64)
