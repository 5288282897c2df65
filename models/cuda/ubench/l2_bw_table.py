#!/usr/bin/env python3
"""Tabulates `hbm_bw l2` (models/cuda/ubench/l2_bw.sh OUT): for each mode, the bandwidth per SM
(GB/s) by active SMs and bytes in flight per SM, the best of the CSVs given (passes), and each
mode's highest total with the bytes per cycle at the launch's clock.

Usage: python3 models/cuda/ubench/l2_bw_table.py OUT   (reads OUT/l2_bw-*.csv)
"""
import collections
import csv
import glob
import os
import sys


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    paths = sorted(glob.glob(os.path.join(out, "l2_bw-*.csv")))
    if not paths:
        sys.exit("l2_bw_table.py: no l2_bw-*.csv in " + out)
    best = {}  # (mode, ctas, in flight) -> row with the most GB/s over passes and (warps, unroll)
    spread = collections.defaultdict(list)  # same key and (warps, unroll) -> GB/s of each pass
    for path in paths:
        for r in csv.DictReader(open(path)):
            key = (r["mode"], int(r["ctas"]), int(float(r["bytes_in_flight_per_sm"])))
            spread[key + (int(r["warps"]), int(r["unroll"]))].append(float(r["gbps"]))
            if key not in best or float(r["gbps"]) > float(best[key]["gbps"]):
                best[key] = r
    print("passes: %d (%s); per-configuration spread between passes at most %.1f%%" % (
        len(paths), ", ".join(os.path.basename(p) for p in paths),
        100 * max((max(v) / min(v) - 1) for v in spread.values() if len(v) > 1) if len(paths) > 1
        else 0.0))
    for mode in ("l2read", "l2write", "l2read_shared"):
        keys = [k for k in best if k[0] == mode]
        if not keys:
            continue
        ctas = sorted({k[1] for k in keys})
        flights = sorted({k[2] for k in keys})
        print("\n%s: GB/s per SM (best over warps x unroll giving those bytes in flight)" % mode)
        print("%10s " % "in flight" + " ".join("%8s" % ("%d SM" % c) for c in ctas))
        for f in flights:
            cells = []
            for c in ctas:
                r = best.get((mode, c, f))
                cells.append("%8.1f" % float(r["gbps_per_sm"]) if r else "%8s" % "-")
            print("%10s " % ("%d KiB" % (f // 1024) if f >= 1024 else "%d B" % f) + " ".join(cells))
        top = max((best[k] for k in keys), key=lambda r: float(r["gbps"]))
        print("  most: %.0f GB/s = %.0f B/cycle at %.0f MHz (%s SMs, %s warps, unroll %s, %s KiB "
              "region per CTA)" % (float(top["gbps"]), float(top["gbps"]) * 1e3 / float(top["clock_mhz"]),
                                   float(top["clock_mhz"]), top["ctas"], top["warps"], top["unroll"],
                                   int(top["region_bytes"]) // 1024))
        one = max((best[k] for k in keys if k[1] == 1), key=lambda r: float(r["gbps"]))
        print("  one SM: %.1f GB/s = %.1f B/cycle (%s warps, unroll %s)" % (
            float(one["gbps"]), float(one["gbps"]) * 1e3 / float(one["clock_mhz"]), one["warps"],
            one["unroll"]))


if __name__ == "__main__":
    main()
