"""memwall.ledger and memwall.race against `memwall ledger` and `memwall race`."""

from __future__ import annotations

import math
import re

import memwall


def _rows(table):
    return table.to_dict("records") if hasattr(table, "to_dict") else table


def test_the_ledger_is_the_cli_ledger(cli):
    text = cli("ledger", "--row-len", "1000", "--tile", "64", "--seed", "3", "--late-max").stdout
    r = memwall.ledger(1000, 64, seed=3, late_max=True)
    assert r.text == text
    steps = _rows(r.steps)
    assert len(steps) == math.ceil(1000 / 64)
    assert steps[-1]["end"] == 1000 and steps[0]["rescale"] == 0
    # The planted maximum in the last tile: the rescaled stream is right, the other is not.
    assert r.argmax >= steps[-1]["begin"]
    assert r.online_error < 1e-12 < r.no_rescale_error
    assert f"max abs error {r.online_error:.3e}" in text


def test_the_race_agrees_with_the_cli_on_memory_and_the_outputs(cli):
    text = cli("race", "--seq", "256,512", "--head-dim", "32", "--tile", "32", "--repeat", "1").stdout
    r = memwall.race([256, 512], head_dim=32, tile=32, repeat=1)
    rows = _rows(r.rows)
    assert [x["seq"] for x in rows] == [256, 512]
    for x in rows:
        line = next(l for l in text.splitlines() if re.match(rf"\s+{x['seq']}\s", l))
        cells = line.split()
        assert f"{x['naive_peak_bytes'] / 2**20:.3f}" == cells[-4]
        assert f"{x['tiled_peak_bytes'] / 2**20:.3f}" == cells[-3]
        assert f"{x['max_abs_diff']:.3e}" == cells[-1]
        assert x["agree"]
        # The naive buffers hold the N x N scores: N^2 x 8 bytes and O.
        assert x["naive_peak_bytes"] == x["seq"] ** 2 * 8 + x["seq"] * 32 * 8
    assert r.text.splitlines()[0] == text.splitlines()[0]
