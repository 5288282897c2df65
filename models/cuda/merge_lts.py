#!/usr/bin/env python3
"""Merges the output of models/cuda/lts_repeat.sh into one CSV, one row per kernel launch, and
prints how much the L2-side read counter moves between launches of the same kernel.

Usage:
  models/cuda/merge_lts.py --launches launches.csv --ncu lts.csv -o h200-lts-repeat.csv
  models/cuda/merge_lts.py --table h200-lts-repeat.csv      # the table only, from a merged CSV

Columns: the case's parameters, the kernel, `repeat` (1, 2, ... for launches of the same case and
kernel, in launch order), ncu_time_s, xbar_read_bytes (l1tex__m_xbar2l1tex_read_bytes: what the
SMs asked for), l2_read_bytes (lts__t_sectors_srcunit_tex_op_read x 32: what reached the L2 slices),
lrc_coalesced_read_bytes (lrc__request_sectors_op_read_coalescing_achieved_type_hardware x 32:
request sectors the L2 request coalescer merged) and lrc_l2_read_bytes (lrc__lts2lrc_sectors_op_read
x 32: sectors the slices returned to the coalescer). ncu collects the metrics over several replays
of each launch, so the columns of one row can come from different replays.
The k-th kernel that ncu profiled is the k-th kernel row (kernel != total) of launches.csv; the
kernel names are checked. Reads both CSVs with merge_ncu.py's readers.
"""
import argparse
import csv
from collections import OrderedDict

from merge_ncu import KERNEL_SYMBOL, PARAMS, read_csv, read_ncu

METRICS = {"gpu__time_duration.sum": "ncu_time_s",
           "l1tex__m_xbar2l1tex_read_bytes.sum": "xbar_read_bytes",
           "lts__t_sectors_srcunit_tex_op_read.sum": "l2_read_bytes",
           "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum": "lrc_coalesced_read_bytes",
           "lrc__lts2lrc_sectors_op_read.sum": "lrc_l2_read_bytes"}
BYTE_COLUMNS = [c for c in METRICS.values() if c != "ncu_time_s"]


def merge(launches_path, ncu_path, out_path):
    launches = [r for r in read_csv(launches_path) if r["kernel"] != "total"]
    profiled = read_ncu(ncu_path, METRICS)
    if len(profiled) != len(launches):
        raise SystemExit("%d kernels profiled, %d launched" % (len(profiled), len(launches)))
    seen = {}
    rows = []
    for (name, values), launch in zip(profiled, launches):
        if KERNEL_SYMBOL[launch["kernel"]] not in name:
            raise SystemExit("ncu kernel %s is not launch %s" % (name, launch["kernel"]))
        missing = [m for m in METRICS.values() if m not in values]
        if missing:
            raise SystemExit("ncu kernel %s: no value for %s" % (name, ", ".join(missing)))
        key = tuple(launch[p] for p in PARAMS + ["kernel"])
        seen[key] = seen.get(key, 0) + 1
        row = {p: launch[p] for p in PARAMS + ["kernel"]}
        row["repeat"] = str(seen[key])
        row["ncu_time_s"] = "%.6e" % values["ncu_time_s"]
        for c in BYTE_COLUMNS:
            row[c] = "%d" % round(values[c])
        rows.append(row)
    with open(out_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=PARAMS + ["kernel", "repeat"] + list(METRICS.values()),
                           lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return rows


# No single number is within 2% of both a lowest value lo and a highest value hi once
# hi / lo > 1.02 / 0.98: it would have to be <= 1.02 lo and >= 0.98 hi.
WITHIN_2_PERCENT = 1.02 / 0.98


def table(rows):
    """Per (case, kernel): launches; the L2-side reads over the SM-side reads, lowest to highest;
    highest / lowest L2-side reads and whether one number can be within 2% of them all; the
    coalescer's merged sectors plus the L2-side reads over the SM-side reads (lowest to
    highest: about 1 where the coalescer explains the difference); and the SM-side bytes'
    highest / lowest."""
    groups = OrderedDict()
    for r in rows:
        groups.setdefault(tuple(r[p] for p in PARAMS + ["kernel"]), []).append(r)
    print("%-40s %-10s %2s  %-13s %7s %-4s  %-13s  %s" % (
        "case", "kernel", "n", "l2/xbar", "max/min", "2%?", "(l2+lrc)/xbar", "xbar max/min"))
    for key, g in groups.items():
        p = dict(zip(PARAMS + ["kernel"], key))
        label = "%s B=%s H=%s N=%s d=%s" % (p["workload"], p["batch"], p["heads"], p["seq"],
                                            p["head_dim"])
        if p["workload"] == "flash2":
            label += " %sx%s s%s" % (p["block_q"], p["block_kv"], p["stages"])
        lts = [float(r["l2_read_bytes"]) for r in g]
        xbar = [float(r["xbar_read_bytes"]) for r in g]
        merged = [float(r["lrc_coalesced_read_bytes"]) for r in g]
        ratio = [a / b for a, b in zip(lts, xbar)]
        explained = [(a + m) / b for a, m, b in zip(lts, merged, xbar)]
        lts_range = max(lts) / min(lts)
        print("%-40s %-10s %2d  %.3f-%.3f %7.4f %-4s  %.3f-%.3f  %.4f" % (
            label, p["kernel"], len(g), min(ratio), max(ratio), lts_range,
            "yes" if lts_range <= WITHIN_2_PERCENT else "no", min(explained), max(explained),
            max(xbar) / min(xbar)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches")
    ap.add_argument("--ncu")
    ap.add_argument("-o", "--output")
    ap.add_argument("--table", metavar="CSV", help="print the table of a merged CSV and exit")
    args = ap.parse_args()
    if args.table:
        table(read_csv(args.table))
        return
    if not (args.launches and args.ncu and args.output):
        ap.error("--launches, --ncu and -o are required unless --table is given")
    table(merge(args.launches, args.ncu, args.output))


if __name__ == "__main__":
    main()
