#!/usr/bin/env python3
"""Breaks a `memwall calibrate --json` report down by kernel (and flash2 by tile shape):
time and DRAM MAPE, mean signed error and range of sim/meas - 1, for the fit and held-out sets.

Usage: python3 traces/measured/calibration_by_kernel.py [traces/measured/calibration-h200.json]
"""
import collections
import json
import re
import sys


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "traces/measured/calibration-h200.json"
    rows = json.load(open(path))["rows"]
    groups = collections.defaultdict(list)
    for r in rows:
        if r.get("sim_time_s") is None or r.get("meas_dram_bytes") is None:
            continue
        t = r["sim_time_s"] / r["meas_time_s"] - 1
        b = r["sim_dram_bytes"] / r["meas_dram_bytes"] - 1
        kernel = r["kernel"]
        groups[(kernel, r["set"])].append((t, b))
        m = re.search(r"d=(\d+) Br=(\d+) Bc=(\d+) st=(\d+)", r["case"])
        if kernel == "flash2_fwd" and m:
            shape = "flash2 d=%s %sx%s st=%s" % m.groups()
            groups[(shape, "all")].append((t, b))
    print("%-28s %-8s %4s %9s %9s %18s %9s" % ("kernel", "set", "n", "time MAPE", "time mean",
                                                 "time range", "DRAM MAPE"))
    for (name, which), v in sorted(groups.items()):
        ts = [x[0] for x in v]
        bs = [x[1] for x in v]
        print("%-28s %-8s %4d %8.1f%% %+8.1f%% %+8.1f%%..%+6.1f%% %8.1f%%" % (
            name, which, len(v), 100 * sum(map(abs, ts)) / len(ts), 100 * sum(ts) / len(ts),
            100 * min(ts), 100 * max(ts), 100 * sum(map(abs, bs)) / len(bs)))


if __name__ == "__main__":
    main()
