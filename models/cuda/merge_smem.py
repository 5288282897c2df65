#!/usr/bin/env python3
"""Merges the output of models/cuda/smem_counters.sh into one CSV, one row per kernel launch:
the case's parameter columns, the kernel, and ncu's shared-memory bytes by instruction
(sm__sass_data_bytes_mem_shared_op_{ldsm,ld,st,ldgsts}.sum).

Usage: models/cuda/merge_smem.py --launches launches.csv --ncu smem.csv -o h200-smem.csv

The k-th kernel that ncu profiled is the k-th kernel row (kernel != total) of launches.csv;
the kernel names are checked.
"""
import argparse
import csv
import io

PARAMS = ["workload", "batch", "heads", "seq", "head_dim", "dtype", "block_q", "block_kv",
          "block_k", "stages", "softmax_rows", "kernel"]
METRICS = {"sm__sass_data_bytes_mem_shared_op_ldsm.sum": "smem_ldsm_bytes",
           "sm__sass_data_bytes_mem_shared_op_ld.sum": "smem_ld_bytes",
           "sm__sass_data_bytes_mem_shared_op_st.sum": "smem_st_bytes",
           "sm__sass_data_bytes_mem_shared_op_ldgsts.sum": "smem_ldgsts_bytes"}
SYMBOL = {"qk": "naive_qk_kernel", "softmax": "naive_softmax_kernel", "pv": "naive_pv_kernel",
          "flash2_fwd": "flash2_fwd_kernel"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", required=True)
    ap.add_argument("--ncu", required=True)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    launches = [r for r in csv.DictReader(open(args.launches)) if r["kernel"] != "total"]
    lines = open(args.ncu).read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    profiled = {}
    for rec in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        name, values = profiled.setdefault(int(rec["ID"]), (rec["Kernel Name"], {}))
        if rec["Metric Name"] in METRICS:
            unit = rec.get("Metric Unit", "").strip().lower()
            if unit not in ("", "byte"):  # ncu --print-units base prints bytes as "byte"
                raise SystemExit("%s: ID %s: unit '%s' for %s, expected bytes (--print-units base)"
                                 % (args.ncu, rec["ID"], unit, rec["Metric Name"]))
            values[METRICS[rec["Metric Name"]]] = int(rec["Metric Value"].replace(",", ""))
    ids = sorted(profiled)
    if len(ids) != len(launches):
        raise SystemExit("%d kernels profiled, %d launched" % (len(ids), len(launches)))
    with open(args.output, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(PARAMS + list(METRICS.values()))
        for lid, row in zip(ids, launches):
            name, values = profiled[lid]
            if SYMBOL[row["kernel"]] not in name:
                raise SystemExit("launch %d is %s, expected %s" % (lid, name, row["kernel"]))
            w.writerow([row[p] for p in PARAMS] + [values[m] for m in METRICS.values()])


if __name__ == "__main__":
    main()
