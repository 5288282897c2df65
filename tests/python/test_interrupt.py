"""Ctrl-C during a simulation raises KeyboardInterrupt within a second, and memwall still works."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

# Simulates something long (tens of seconds), reports how it ended, then simulates a small case.
CHILD = """
import sys, time, memwall
call = sys.argv[1]
print("ready", flush=True)
try:
    if call == "run":
        memwall.run("h200", workload="flash2", seq=65536, head_dim=128, heads=32)
    else:
        memwall.sweep("h200", "flash2", seq=[65536, 65536, 65536], head_dim=128, heads=32, jobs=2)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("KeyboardInterrupt", time.monotonic(), flush=True)
after = memwall.run("h200", workload="flash2", seq=256, head_dim=64)
print("after", after.dram_read_bytes > 0, flush=True)
"""


@pytest.mark.parametrize("call", ["run", "sweep"])
def test_sigint_raises_keyboard_interrupt_within_a_second(call):
    child = subprocess.Popen([sys.executable, "-c", CHILD, call], cwd=ROOT, env=os.environ,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "ready\n"
    time.sleep(0.7)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=20)
    finally:
        child.kill()
    lines = out.splitlines()
    assert lines[0].startswith("KeyboardInterrupt"), (out, err)
    assert float(lines[0].split()[1]) - sent < 1.0
    assert lines[1] == "after True"
    assert child.returncode == 0, err
