"""The remaining outputs from Python: the HTML page, the topology graph, the config reference —
each the CLI's, byte for byte — and that no output overwrites an input."""

from __future__ import annotations

import shutil

import pytest

import memwall
from conftest import SMALL, cli_flags


def test_the_html_page_is_the_cli_page(cli, tmp_path):
    cli("run", "--config", "h200", "--workload", "naive,flash2", *cli_flags(SMALL),
        "--html", str(tmp_path / "cli.html"))
    memwall.run("h200", workload=["naive", "flash2"], html=tmp_path / "py.html", **SMALL)
    assert (tmp_path / "py.html").read_bytes() == (tmp_path / "cli.html").read_bytes()


@pytest.mark.parametrize("preset,collapse,flag", [("h200", "auto", []),
                                                   ("hypothetical/teaching-gpu", "no", ["--collapse", "no"]),
                                                   ("h200", "yes", ["--collapse", "yes"])])
def test_the_topology_graph_is_config_dot(cli, preset, collapse, flag):
    assert memwall.load_config(preset).dot(collapse) == cli("config", "dot", preset, *flag).stdout


def test_the_config_reference_is_the_committed_page():
    with open("docs/config-reference.md") as f:
        assert memwall.config_reference() == f.read()


def test_no_output_overwrites_the_config_it_was_made_from(tmp_path):
    config = tmp_path / "chip.yaml"
    shutil.copy("configs/hypothetical/teaching-gpu.yaml", config)
    before = config.read_bytes()
    for kwargs in ({"timeline": config}, {"html": config}):
        with pytest.raises(memwall.UsageError, match="chip.yaml"):
            memwall.run(str(config), workload="flash2", **SMALL, **kwargs)
    with pytest.raises(memwall.UsageError, match="chip.yaml"):
        memwall.trace(config, "flash2", config=str(config), **SMALL)
    assert config.read_bytes() == before
