#!/usr/bin/env python3
"""naive-bwd's CUDA twin as measured (a merged CSV of models/cuda/merge_bwd.py) against the model,
kernel by kernel: SM->L2 bytes (exact or not), DRAM bytes and time (ncu's, the L2 flushed before
each kernel as `memwall run --flush-l2` does). One simulation at a time.

Usage: compare_naive_bwd.py [--memwall build/memwall] [--config CONFIG] [--measured CSV] [--csv OUT]
Prints the time MAPE per kernel and in all, the DRAM MAPE, and whether every kernel's SM->L2
bytes are exact; --csv writes one row per kernel."""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--memwall", default="build/memwall")
ap.add_argument("--config", default="configs/calibrated/h100-sxm.yaml")
ap.add_argument("--measured", default="traces/measured/h100-naive-bwd.csv")
ap.add_argument("--csv", help="write every kernel's row here")
args = ap.parse_args()

KEYS = ["batch", "heads", "kv_heads", "seq", "head_dim", "causal", "block_q", "block_kv"]
cases = []
with open(args.measured) as f:
    for r in csv.DictReader(f):
        key = tuple(r[k] for k in KEYS)
        if not cases or cases[-1][0] != key:
            cases.append((key, []))
        if r["kernel"] != "total":
            cases[-1][1].append(r)
out = []
with tempfile.TemporaryDirectory() as tmp:
    report = os.path.join(tmp, "case.json")
    for key, kernels in cases:
        p = dict(zip(KEYS, key))
        cmd = [args.memwall, "run", "--config", args.config, "--workload", "naive-bwd",
               "--batch", p["batch"], "--heads", p["heads"], "--kv-heads", p["kv_heads"],
               "--seq", p["seq"], "--head-dim", p["head_dim"], "--block-q", p["block_q"],
               "--block-kv", p["block_kv"], "--flush-l2", "--json", report]
        if p["causal"] == "1":
            cmd.append("--causal")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(report) as f:
            sims = json.load(f)["kernels"]
        if [s["name"] for s in sims] != [k["kernel"] for k in kernels]:
            sys.exit(f"{args.measured}: case {key}: kernels {[k['kernel'] for k in kernels]}, "
                     f"the model's {[s['name'] for s in sims]}")
        for s, m in zip(sims, kernels):
            mdram = float(m["dram_read_bytes"]) + float(m["dram_write_bytes"])
            sdram = s["dram_read_bytes"] + s["dram_write_bytes"]
            out.append({**p, "kernel": s["name"],
                        "xbar_read_bytes": m["xbar_read_bytes"],
                        "sim_l2_read_bytes": s["l2_read_bytes"],
                        "xbar_write_bytes": m["xbar_write_bytes"],
                        "sim_l2_write_bytes": s["l2_write_bytes"],
                        "sm_l2_exact": int(s["l2_read_bytes"] == float(m["xbar_read_bytes"]) and
                                           s["l2_write_bytes"] == float(m["xbar_write_bytes"])),
                        "ncu_dram_bytes": int(mdram), "sim_dram_bytes": sdram,
                        "dram_err_pct": f"{(sdram / mdram - 1) * 100:.2f}" if mdram else "",
                        "ncu_time_s": m["ncu_time_s"], "sim_time_s": f"{s['time_s']:.6g}",
                        "time_err_pct": f"{(s['time_s'] / float(m['ncu_time_s']) - 1) * 100:.2f}"})
if args.csv:
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(out)


def mape(rows, col):
    vals = [abs(float(r[col])) for r in rows if r[col] != ""]
    return (sum(vals) / len(vals), max(vals)) if vals else (0.0, 0.0)


print(f"{args.measured} against {args.config}: {len(cases)} cases, {len(out)} kernels; SM->L2 "
      f"bytes exact in {sum(r['sm_l2_exact'] for r in out)} of {len(out)}")
print(f"{'kernel':12} {'n':>3} {'time MAPE':>10} {'worst':>7} {'DRAM MAPE':>10} {'worst':>7}")
for name in dict.fromkeys(r["kernel"] for r in out):
    rows = [r for r in out if r["kernel"] == name]
    t, d = mape(rows, "time_err_pct"), mape(rows, "dram_err_pct")
    print(f"{name:12} {len(rows):3} {t[0]:9.1f}% {t[1]:6.1f}% {d[0]:9.1f}% {d[1]:6.1f}%")
t, d = mape(out, "time_err_pct"), mape(out, "dram_err_pct")
print(f"{'all':12} {len(out):3} {t[0]:9.1f}% {t[1]:6.1f}% {d[0]:9.1f}% {d[1]:6.1f}%")
