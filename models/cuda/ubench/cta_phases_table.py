#!/usr/bin/env python3
"""Tabulates cta_phases (models/cuda/ubench/cta_phases.sh OUT): per CTAs per SM (k) and CTA shape
(bytes in, bytes out, spin cycles), the least-squares line of the launch time against the waves
(its slope: a slot's time per CTA; its intercept: the launch's fixed cost), the CTAs' median
load and store-issue times at 16 waves, and the same per pass.

Usage: python3 models/cuda/ubench/cta_phases_table.py OUT   (reads OUT/cta_phases-*.csv)
"""
import collections
import csv
import glob
import os
import sys


def line(points):
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    return slope, my - slope * mx


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    paths = sorted(glob.glob(os.path.join(out, "cta_phases-*.csv")))
    if not paths:
        sys.exit("cta_phases_table.py: no cta_phases-*.csv in " + out)
    print("%2s %6s %6s %5s %5s %12s %12s %9s %9s %7s" % (
        "k", "in", "out", "spin", "pass", "us_per_wave", "intercept_us", "load_ns", "store_ns",
        "MHz"))
    for p, path in enumerate(paths, 1):
        groups = collections.OrderedDict()
        for r in csv.DictReader(open(path)):
            key = (int(r["k"]), int(r["in_bytes"]), int(r["out_bytes"]), int(r["spin_cycles"]))
            groups.setdefault(key, []).append(r)
        for (k, i, o, s), rows in groups.items():
            slope, icpt = line([(int(r["waves"]), 1e3 * float(r["ms"])) for r in rows])
            last = max(rows, key=lambda r: int(r["waves"]))
            print("%2d %6d %6d %5d %5d %12.3f %12.3f %9s %9s %7s" % (
                k, i, o, s, p, slope, icpt, last["load_ns"], last["store_issue_ns"],
                last["clock_mhz"]))


if __name__ == "__main__":
    main()
