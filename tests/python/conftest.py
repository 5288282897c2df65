"""Shared helpers of the Python module's tests: the built `memwall` executable, run as the CLI.

CTest runs these from the repository root with PYTHONPATH=build/python and MEMWALL_EXE set; by
hand: `PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEMWALL_EXE = os.environ.get("MEMWALL_EXE", str(ROOT / "build" / "memwall"))

#: A shape small enough that a simulation takes a fraction of a second.
SMALL = {"seq": 512, "head_dim": 64, "heads": 2}


def cli_flags(params: dict[str, object]) -> list[str]:
    """Keyword arguments as the CLI's flags: seq=512 -> --seq 512, allow_spill=True -> --allow-spill."""
    flags: list[str] = []
    for name, value in params.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is not False:
            flags += [flag, str(value)]
    return flags


class Cli:
    """Runs the memwall executable from the repository root."""

    def __call__(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([MEMWALL_EXE, *args], cwd=ROOT, capture_output=True, text=True)
        if check and done.returncode != 0:
            raise AssertionError(f"memwall {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done

    def error(self, *args: str) -> str:
        """The error of a failing command: its "memwall: error: " line, without that prefix."""
        done = self(*args, check=False)
        assert done.returncode == 2, done
        prefix = "memwall: error: "
        lines = [line for line in done.stderr.splitlines() if line.startswith(prefix)]
        assert len(lines) == 1, done.stderr
        return lines[0][len(prefix):]


@pytest.fixture
def cli() -> Cli:
    return Cli()


@pytest.fixture(autouse=True)
def _from_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs from the repository root, as the CLI commands it compares with."""
    monkeypatch.chdir(ROOT)
