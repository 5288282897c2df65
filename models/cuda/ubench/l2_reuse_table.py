#!/usr/bin/env python3
"""Joins l2_reuse.sh's Nsight Compute rows to its cases: one row per (mode, footprint) with pass
1's and pass 2's DRAM bytes, pass 2's L2 read hits and misses (sectors) and ncu time, and the
median pass-2 time of the two timed passes.

Usage: l2_reuse_table.py DIR > DIR/reuse.csv   (DIR: l2_reuse.sh's OUT)
"""
import csv
import statistics
import sys
from collections import defaultdict


def main(d):
    cases = [(r["mode"], int(r["footprint_bytes"]))
             for r in csv.DictReader(open(f"{d}/reuse-once.csv"))]
    timed = defaultdict(list)
    for p in ("1", "2"):
        for r in csv.DictReader(open(f"{d}/reuse-{p}.csv")):
            timed[(r["mode"], int(r["footprint_bytes"]))].append(float(r["pass2_ms"]))
    lines = [l for l in open(f"{d}/reuse-ncu.csv") if l.startswith('"')]
    kernels = {}  # ID -> (name, {metric: value})
    for r in csv.DictReader(lines):
        k = kernels.setdefault(int(r["ID"]), (r["Kernel Name"], {}))
        k[1][r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    ordered = [kernels[i] for i in sorted(kernels)]
    if len(ordered) != 2 * len(cases):
        sys.exit(f"l2_reuse_table.py: {len(ordered)} profiled kernels for {len(cases)} cases "
                 "(expected two each)")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["mode", "footprint_bytes", "pass1_dram_read", "pass1_dram_write",
                  "pass2_dram_read", "pass2_dram_write", "pass2_l2_hit_sectors",
                  "pass2_l2_miss_sectors", "pass2_ncu_ns", "pass2_event_ms"])
    for i, (mode, fp) in enumerate(cases):
        (n1, m1), (n2, m2) = ordered[2 * i], ordered[2 * i + 1]
        first = "first_write" if mode == "write-read" else "first_read"
        if first not in n1 or "second_read" not in n2:
            sys.exit(f"l2_reuse_table.py: case {i} ({mode}, {fp}): kernels {n1}, {n2}")
        out.writerow([mode, fp, int(m1["dram__bytes_read.sum"]), int(m1["dram__bytes_write.sum"]),
                      int(m2["dram__bytes_read.sum"]), int(m2["dram__bytes_write.sum"]),
                      int(m2["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"]),
                      int(m2["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"]),
                      int(m2["gpu__time_duration.sum"]),
                      f"{statistics.median(timed[(mode, fp)]):.5f}"])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__))
