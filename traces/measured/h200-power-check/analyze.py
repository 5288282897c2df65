#!/usr/bin/env python3
"""The chip's board power and SM clock in each case of power_check.sh against the simulator's.

For each case of phases.txt: the nvidia-smi samples (smi.csv) from 1.5 s after its start (past
the harness's input setup and its checked run) to 0.2 s before its end; their mean instantaneous
power, mean SM clock (NVML's: the clock the power limiter sets) and the share with the power cap
active; beside them `memwall run` of the same case on the calibrated H200 (its power limiter on):
the run's mean board power (power_w) and mean SM clock (sm_clock_hz). Nothing is fitted here.

Usage: python3 traces/measured/h200-power-check/analyze.py [--memwall build/memwall]
           [--config h200-calibrated]
"""
import argparse
import csv
import datetime
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def hms(text):
    return datetime.datetime.strptime(text[:15], "%H:%M:%S.%f").time()


def seconds(t):
    return t.hour * 3600 + t.minute * 60 + t.second + t.microsecond * 1e-6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memwall", default="build/memwall")
    ap.add_argument("--config", default="h200-calibrated")
    a = ap.parse_args()
    samples = []
    with open(os.path.join(HERE, "smi.csv")) as f:
        for r in list(csv.reader(f))[1:]:
            try:
                t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").time()
                samples.append((seconds(t), float(r[1]), float(r[3]), r[5].strip() == "Active"))
            except (ValueError, IndexError):
                continue
    phases = {}
    with open(os.path.join(HERE, "phases.txt")) as f:
        for line in f:
            kind, spec, stamp = line.split()
            phases.setdefault(spec, {})[kind] = seconds(hms(stamp))
    print("| case | chip W | chip MHz | power cap | simulated W | simulated MHz | W error "
          "| MHz error |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for spec, p in phases.items():
        win = [s for s in samples if p["start"] + 1.5 <= s[0] <= p["end"] - 0.2]
        watts = sum(s[2] for s in win) / len(win)
        mhz = sum(s[1] for s in win) / len(win)
        capped = sum(s[3] for s in win) / len(win)
        kv = dict(x.split("=") for x in spec.split(","))
        args = ["--workload", kv.pop("workload")]
        for k, v in kv.items():
            args += ["--" + k.replace("_", "-"), v]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            subprocess.run([a.memwall, "run", "--config", a.config, "--json", out, *args],
                           check=True, capture_output=True)
            with open(out) as f:
                rep = json.load(f)
        sim_w, sim_mhz = rep["power_w"], rep["sm_clock_hz"] / 1e6
        print(f"| {spec} | {watts:.0f} | {mhz:.0f} | {capped:.0%} | {sim_w:.0f} | {sim_mhz:.0f} "
              f"| {sim_w / watts - 1:+.1%} | {sim_mhz / mhz - 1:+.1%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
