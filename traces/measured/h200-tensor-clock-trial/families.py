#!/usr/bin/env python3
"""Kernel time errors of a calibration's rows (memwall calibrate --json) per kernel family:
flash2 per head dimension and tiling, naive's kernels per head dimension. For each, the mean
signed error (simulated / measured - 1), the mean absolute error and the worst, over the fit and
held-out rows together.

  python3 traces/measured/h200-tensor-clock-trial/families.py CALIBRATION.json [...]
"""
import collections
import json
import re
import statistics
import sys


def family(row):
    if row["kernel"] == "flash2_fwd":
        m = re.search(r"d=(\d+) (Br=\d+ Bc=\d+ st=\d+)", row["case"])
        return ("flash2", int(m.group(1)), m.group(2))
    return (row["kernel"], int(re.search(r"d=(\d+)", row["case"]).group(1)), "")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    for path in sys.argv[1:]:
        d = json.load(open(path))
        by = collections.defaultdict(list)
        for r in d["rows"]:
            by[family(r)].append(r["sim_time_s"] / r["meas_time_s"] - 1)
        print(f"{path}: {d['params']}")
        print(f"  {'kernel':8} {'d':>3} {'tiling':20} {'n':>3} {'mean':>7} {'MAPE':>6} {'worst':>7}")
        for (kernel, dim, tiling), e in sorted(by.items()):
            print(f"  {kernel:8} {dim:>3} {tiling:20} {len(e):>3} {statistics.mean(e) * 100:>+6.1f}% "
                  f"{statistics.mean(abs(x) for x in e) * 100:>5.1f}% {max(e, key=abs) * 100:>+6.1f}%")


if __name__ == "__main__":
    main()
