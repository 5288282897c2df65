#!/usr/bin/env python3
"""Merges the output of models/cuda/smem_counters.sh into one CSV, one row per kernel launch:
the case's parameter columns, the kernel, and ncu's shared-memory bytes by instruction
(sm__sass_data_bytes_mem_shared_op_{ldsm,ld,st,ldgsts}.sum).

Usage: models/cuda/merge_smem.py --launches launches.csv --ncu smem.csv -o h200-smem.csv

The k-th kernel that ncu profiled is the k-th kernel row (kernel != total) of launches.csv;
the kernel names are checked. Reads both CSVs with merge_ncu.py's readers.
"""
import argparse
import csv

from merge_ncu import KERNEL_SYMBOL, PARAMS, read_csv, read_ncu

METRICS = {"sm__sass_data_bytes_mem_shared_op_ldsm.sum": "smem_ldsm_bytes",
           "sm__sass_data_bytes_mem_shared_op_ld.sum": "smem_ld_bytes",
           "sm__sass_data_bytes_mem_shared_op_st.sum": "smem_st_bytes",
           "sm__sass_data_bytes_mem_shared_op_ldgsts.sum": "smem_ldgsts_bytes"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", required=True)
    ap.add_argument("--ncu", required=True)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    launches = [r for r in read_csv(args.launches) if r["kernel"] != "total"]
    profiled = read_ncu(args.ncu, METRICS)
    if len(profiled) != len(launches):
        raise SystemExit("%d kernels profiled, %d launched" % (len(profiled), len(launches)))
    with open(args.output, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(PARAMS + ["kernel"] + list(METRICS.values()))
        for (name, values), row in zip(profiled, launches):
            if KERNEL_SYMBOL[row["kernel"]] not in name:
                raise SystemExit("ncu kernel %s is not launch %s" % (name, row["kernel"]))
            w.writerow([row[p] for p in PARAMS + ["kernel"]] +
                       ["%d" % round(values[m]) for m in METRICS.values()])


if __name__ == "__main__":
    main()
