#!/usr/bin/env python3
"""The wgmma GEMM's warp instructions per CTA, per tile and per K-tile, from Nsight Compute.

Reads gemm_ncu.csv (run_gemm.sh step `ncu`: the check launches, then the --profile cases, each
launched twice) and fits smsp__inst_executed.sum = a * CTAs + b * tiles + c * K-tiles over each
kernel's launches by least squares (the producer's and consumers' waits on mbarriers spin, so
the counts are not exact). Prints a, b, c, the largest residual and the rows per kernel.

Usage: python3 models/cuda/hopper/gemm_instructions.py traces/measured/h200-hopper-gemm/gemm_ncu.csv
"""
import csv
import sys

import numpy as np

TN = [(128, 128), (128, 256), (256, 128)]
NN = [(128, 64), (128, 128)]


def launches():
    """(bm, bn, layout, batch, m, n, k) of every launch of `wgmma_gemm --profile`, in order."""
    out = []
    for bm, bn in TN:
        out += [(bm, bn, "tn", 2, 200, 264, 136), (bm, bn, "tn", 1, 384, 512, 256)]
    for bm, bn in NN:
        out += [(bm, bn, "nn", 2, 200, bn, 200), (bm, bn, "nn", 1, 256, bn, 512)]
    for bm, bn in TN:
        out += [(bm, bn, "tn", 1, 8192, 8192, 8192)] * 2
    for bm, bn in TN:
        out += [(bm, bn, "tn", 64, 4096, 4096, 128)] * 2
    out += [(128, 128, "nn", 64, 4096, 128, 4096)] * 2
    return out


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    ix = {k: i for i, k in enumerate(rows[0])}
    number = lambda r, k: float(r[ix[k]].replace(",", ""))
    data = {}
    for r, (bm, bn, lay, b, m, n, k) in zip(rows[2:], launches()):
        if f"<{bm}, {bn}," not in r[ix["Kernel Name"]]:
            sys.exit(f"unexpected kernel order: {r[ix['Kernel Name']]} for {bm}x{bn}")
        tiles = b * -(-m // bm) * -(-n // bn)
        data.setdefault((bm, bn, lay), []).append(
            (number(r, "launch__grid_size"), tiles, tiles * -(-k // 64),
             number(r, "smsp__inst_executed.sum")))
    print("kernel        rows  per CTA  per tile  per K-tile  largest residual")
    for (bm, bn, lay), v in data.items():
        a = np.array([row[:3] for row in v], float)
        y = np.array([row[3] for row in v])
        sol, *_ = np.linalg.lstsq(a, y, rcond=None)
        note = "" if np.linalg.matrix_rank(a) == 3 else "  (fewer shapes than terms)"
        print(f"{bm}x{bn}_{lay:3} {len(v):5} {sol[0]:8.0f} {sol[1]:9.0f} {sol[2]:11.0f}"
              f" {np.max(np.abs(a @ sol - y)):17.0f}{note}")


if __name__ == "__main__":
    main()
