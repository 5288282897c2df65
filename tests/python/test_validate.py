"""memwall.validate against `memwall validate`: the same tables, byte for byte."""

from __future__ import annotations

import pytest

import memwall

TABLE = "traces/measured/h200-sm-count-validate.csv"


def test_a_committed_table_summarized_again_is_the_cli_summary(cli, tmp_path):
    out = tmp_path / "v.json"
    done = cli("validate", "--table", TABLE, "--summary", "--json", str(out))
    v = memwall.validate(table=TABLE, summary=True)
    assert done.stdout == v.text + f"wrote {out}\n"  # the CLI says where it wrote the JSON
    assert v.json == out.read_text()
    assert v.experiments[0]["experiment"] == "sm-count"


def test_a_simulated_case_is_the_cli_row(cli, tmp_path):
    out = tmp_path / "v.csv"
    cli("validate", "--sm-count", "traces/measured/h200-sm-count.csv", "--cases", "1", "-j", "2",
        "--csv", str(out))
    v = memwall.validate(sm_count="traces/measured/h200-sm-count.csv", cases=1, jobs=2)
    assert v.csv == out.read_text()


def test_validate_needs_measurements_or_a_table():
    with pytest.raises(memwall.UsageError, match="sm_count"):
        memwall.validate()
