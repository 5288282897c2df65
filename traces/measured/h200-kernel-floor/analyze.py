#!/usr/bin/env python3
"""The table and the line fits of README.md from launches.csv and ncu.csv (row i of each ncu
metric is launch i of launches.csv). Usage: python3 traces/measured/h200-kernel-floor/analyze.py [DIR]
"""
import csv
import os
import statistics
import sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
launches = list(csv.DictReader(open(os.path.join(here, "launches.csv"))))
rows = [r for r in csv.reader(open(os.path.join(here, "ncu.csv"))) if len(r) > 5]
header, rows = rows[0], rows[1:]
metric, value, ident = (header.index(k) for k in ("Metric Name", "Metric Value", "ID"))
by_id = {}
for r in rows:
    by_id.setdefault(int(r[ident]), {})[r[metric]] = float(r[value].replace(",", ""))
ids = sorted(by_id)
if len(ids) != len(launches):
    sys.exit(f"{len(ids)} ncu launches against {len(launches)} in launches.csv")
times = {}
for launch, i in zip(launches, ids):
    times.setdefault(launch["kernel"], {}).setdefault(int(launch["ctas"]), []).append(
        by_id[i]["gpu__time_duration.sum"])
for kernel, by_ctas in times.items():
    medians = {n: statistics.median(v) for n, v in sorted(by_ctas.items())}
    xs = [n for n in medians if n >= 264]
    ys = [medians[n] for n in xs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print(f"{kernel}: medians (ns) {medians}")
    print(f"  264-33792 CTAs: {my - slope * mx:.1f} ns + {slope:.4f} ns per CTA")
