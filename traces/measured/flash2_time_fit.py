#!/usr/bin/env python3
"""Fits the measured flash2 kernel times of an H200 sweep CSV with two per-SM rates:

    time = FLOPs / (SMs * tensor rate)  +  per-warp shared-memory bytes / (SMs * smem rate)

(no constant term), by least squares on relative error, over the rows with N >= 4096 (full
waves). Per-warp shared-memory bytes follow the CUDA kernel, as models/flash2.cc counts them in
its key-block loop: per CTA and key block, (Br * q_passes + 4 * Bc + 4 * Bc) * d * 2 bytes (each of
the 4 warps reads its Q rows once per score sub-block and all of K and V); the O tile staged once
per CTA at the end is left out (under 1% of the bytes at N >= 4096). Prints the two rates, then the same fit
with the FLOP term alone, for comparison.

Usage: /usr/bin/python3 traces/measured/flash2_time_fit.py [CSV] [--sms 132] [--clock-ghz 1.98]
Needs numpy (Debian: python3-numpy, for /usr/bin/python3).
"""
import argparse
import csv

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default="traces/measured/h200-sweep.csv")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--clock-ghz", type=float, default=1.98)
    args = ap.parse_args()
    feats, times = [], []
    for r in csv.DictReader(open(args.csv)):
        if r["workload"] != "flash2" or r["kernel"] != "flash2_fwd" or not r["ncu_time_s"]:
            continue
        n, d = int(r["seq"]), int(r["head_dim"])
        if n < 4096:
            continue
        bh = int(r["batch"]) * int(r["heads"])
        br, bc = int(r["block_q"]), int(r["block_kv"])
        sub = 32 if (br * d >= 16384 and bc > 32 and bc % 32 == 0) else bc
        flops = 4 * bh * n * n * d
        ctas_blocks = bh * (-(-n // br)) * (-(-n // bc))
        smem = ctas_blocks * (br * (bc // sub) + 8 * bc) * d * 2
        feats.append([flops / args.sms, smem / args.sms])
        times.append(float(r["ncu_time_s"]))
    a, y = np.array(feats), np.array(times)
    hz = args.clock_ghz * 1e9
    for label, cols in (("FLOPs and shared memory", [0, 1]), ("FLOPs alone", [0])):
        x, *_ = np.linalg.lstsq(a[:, cols] / y[:, None], np.ones(len(y)), rcond=None)
        err = (a[:, cols] @ x) / y - 1
        rates = "tensor %.0f FLOP/cycle/SM" % (1 / x[0] / hz)
        if len(cols) == 2:
            rates += ", shared memory %.1f B/cycle/SM" % (1 / x[1] / hz)
        print("%-24s %d kernels: %s; MAPE %.1f%%, worst %.1f%%"
              % (label, len(y), rates, 100 * np.mean(abs(err)), 100 * np.max(abs(err))))


if __name__ == "__main__":
    main()
