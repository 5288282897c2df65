"""memwall.presets, load_config and Config against `memwall config list/show`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import memwall


def test_presets_are_the_configs_config_list_shows(cli):
    listed = [line.split()[0] for line in cli("config", "list").stdout.splitlines()[1:]]
    presets = memwall.presets()
    assert list(presets) == listed
    assert all(Path(path).is_file() for path in presets.values())


def test_a_config_prints_what_config_show_prints_with_the_same_overrides(cli):
    config = memwall.load_config("h200", set={"l2.size": "100 MiB", "sm.count": 66})
    shown = cli("config", "show", "h200", "--set", "l2.size=100 MiB", "--set", "sm.count=66")
    assert str(config) == shown.stdout
    assert config.overrides == ["l2.size=100 MiB", "sm.count=66"]
    assert config.name == shown.stdout.splitlines()[0]


def test_values_carry_base_units_and_the_text_config_show_prints(cli):
    config = memwall.load_config("h200")
    shown = cli("config", "show", "h200").stdout
    size = config["l2.size"]
    assert size.unit == "B"
    assert f"({size.value} B)" in size.text or size.text == f"{size.value} B"
    assert re.search(r"^  size +" + re.escape(size.text) + "$", shown, re.M)
    assert config["sm.count"].value == int(re.search(r"^  count +(\d+)$", shown, re.M).group(1))
    assert config["hbm.bandwidth"].unit == "B/s"
    assert config["sm.clock"].unit == "Hz"
    assert config["l2.hit_latency"].unit == "ps"
    assert config.section("l2")["size"] == size


def test_derived_values_are_those_config_show_prints(cli):
    config = memwall.load_config("a100-80gb")
    shown = cli("config", "show", "a100-80gb").stdout
    peak = float(re.search(r"peak_tensor .*\((\S+) FLOP/s\)", shown).group(1))
    assert config.derived["peak_tensor"].value == pytest.approx(peak, rel=1e-5)
    assert config.derived["peak_tensor"].unit == "FLOP/s"
    total = int(re.search(r"total_smem .*\((\d+) B\)", shown).group(1))
    assert config.derived["total_smem"].value == total
    ridge = config.derived["ridge_point_tensor"].value
    assert ridge == pytest.approx(config.derived["peak_tensor"].value
                                  / config.derived["hbm_bandwidth"].value)


@pytest.mark.parametrize("preset", list(memwall.presets()))
def test_to_yaml_loads_back_to_the_same_config(preset, tmp_path):
    config = memwall.load_config(preset)
    path = tmp_path / "resolved.yaml"
    path.write_text(config.to_yaml())
    again = memwall.load_config(path)
    assert again.values == config.values
    assert without_source(str(again)) == without_source(str(config))


def without_source(shown: str) -> list[str]:
    return [line for line in shown.splitlines() if not line.startswith("source: ")]
