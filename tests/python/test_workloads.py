"""memwall.workloads against `memwall workloads`: the plugins' names and parameter tables."""

from __future__ import annotations

import memwall


def test_workloads_are_those_the_cli_lists_with_their_summaries(cli):
    text = cli("workloads").stdout
    names = [w.name for w in memwall.workloads()]
    headers = [line.split(":")[0] for line in text.splitlines() if line and not line[0].isspace()]
    assert names == headers
    for w in memwall.workloads():
        assert f"{w.name}: {w.summary}\n" in text


def test_each_parameter_row_is_the_cli_table_row(cli):
    for w in memwall.workloads():
        rows = [line.split() for line in cli("workloads", w.name).stdout.splitlines()[2:]]
        assert [row[0] for row in rows] == [p.name for p in w.params]
        for row, p in zip(rows, w.params):
            assert row[1] == (p.flag or "-")
            assert row[2] == p.type
            assert " ".join(row).endswith(" ".join(p.help.split()))
