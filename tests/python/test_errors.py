"""Errors are Python exceptions with the CLI's message text and the right classes."""

from __future__ import annotations

import pytest

import memwall
from conftest import SMALL


def test_an_unknown_preset_is_a_config_error_with_the_cli_text(cli):
    with pytest.raises(memwall.ConfigError) as e:
        memwall.load_config("h300")
    assert str(e.value) == cli.error("config", "show", "h300")
    assert isinstance(e.value, memwall.Error)


def test_a_bad_override_names_the_override_and_the_key(cli):
    with pytest.raises(memwall.ConfigError) as e:
        memwall.load_config("h200", set={"l2.size": "12 parsecs"})
    assert str(e.value) == cli.error("config", "show", "h200", "--set", "l2.size=12 parsecs")
    assert e.value.key == "l2.size"
    assert e.value.file.startswith("--set")
    assert e.value.reason in str(e.value)


def test_a_bad_file_names_file_line_column_and_key(cli, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: test\nextends: h200\nl2:\n  sise: 50 MiB\n")
    with pytest.raises(memwall.ConfigError) as e:
        memwall.load_config(str(path))
    assert str(e.value) == cli.error("config", "show", str(path))
    assert (e.value.file, e.value.line, e.value.column, e.value.key) == (str(path), 4, 3, "l2.sise")
    assert "l2.size" in e.value.reason  # the did-you-mean


def test_usage_errors_are_value_errors_with_the_cli_text(cli):
    with pytest.raises(memwall.UsageError) as e:
        memwall.run("h200", workload="flash2", seq=512, head_dim=256, block_q=256, block_kv=256)
    assert isinstance(e.value, ValueError)
    assert "shared memory per CTA" in str(e.value)
    assert str(e.value) == cli.error("run", "--config", "h200", "--workload", "flash2",
                                     "--seq", "512", "--head-dim", "256", "--block-q", "256",
                                     "--block-kv", "256")
    with pytest.raises(memwall.UsageError) as e:
        memwall.run("h200", workload="flash9", **SMALL)
    assert str(e.value) == cli.error("run", "--config", "h200", "--workload", "flash9")
    with pytest.raises(memwall.UsageError) as e:
        memwall.run("h200", workload="flash2", seq=0)
    assert str(e.value) == cli.error("run", "--config", "h200", "--seq", "0")


def test_an_unknown_parameter_or_a_value_of_the_wrong_type_is_a_usage_error():
    with pytest.raises(memwall.UsageError, match='unknown workload parameter "sequence"'):
        memwall.run("h200", sequence=512)
    with pytest.raises(memwall.UsageError, match="seq"):
        memwall.run("h200", seq=512.5)
    with pytest.raises(memwall.UsageError, match="dtype"):
        memwall.run("h200", dtype="fp64", **SMALL)
    with pytest.raises(memwall.UsageError, match="config or sram_bytes"):
        memwall.traffic(1024, 64, config="h200", sram_bytes="64 KiB")


def test_max_memory_is_the_cli_max_memory(cli):
    # A persistent kernel's CTA at an absurd length holds more ops than the limit allows: the
    # same refusal, with the same figure, as `memwall run --max-memory`.
    shape = dict(workload="naive", seq=10_000_000)
    with pytest.raises(memwall.UsageError) as e:
        memwall.run("h200", max_memory="1 GiB", **shape)
    assert str(e.value) == cli.error("run", "--config", "h200", "--workload", "naive",
                                     "--seq", "10000000", "--max-memory", "1 GiB")
    with pytest.raises(memwall.UsageError) as by_bytes:
        memwall.run("h200", max_memory=1 << 30, **shape)
    assert str(by_bytes.value) == str(e.value)
    # Within the limit nothing changes.
    assert memwall.run("h200", max_memory="1 GiB", **SMALL).json == memwall.run("h200", **SMALL).json
    with pytest.raises(memwall.UsageError, match='max_memory: must be greater than zero'):
        memwall.run("h200", max_memory="0 B", **SMALL)
    with pytest.raises(memwall.UsageError, match="max_memory: expected a size"):
        memwall.run("h200", max_memory=1.5, **SMALL)
