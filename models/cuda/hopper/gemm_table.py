#!/usr/bin/env python3
"""Prints the Markdown table of traces/measured/h200-hopper-gemm/README.md from gemm.csv (the
output of models/cuda/hopper/wgmma_gemm.cu): per shape, the fastest of our tiles against cuBLAS.

Usage: python3 models/cuda/hopper/gemm_table.py traces/measured/h200-hopper-gemm/gemm.csv
"""
import csv
import sys


def main(path):
    best = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["shape"], r["batch"], r["m"], r["n"], r["k"])
            if key not in best or float(r["ms"]) < float(best[key]["ms"]):
                best[key] = r
    print("| shape | batch | m | n | k | fastest tile | ms | TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s "
          "| cuBLAS ms / ours |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for r in best.values():
        print(f"| {r['shape']} | {r['batch']} | {r['m']} | {r['n']} | {r['k']} "
              f"| {r['kernel'].removeprefix('wgmma_')} | {float(r['ms']):.4f} "
              f"| {float(r['tflops']):.0f} | {float(r['cublas_ms']):.4f} "
              f"| {float(r['cublas_tflops']):.0f} | {float(r['ratio']):.3f} |")
    ratios = [float(r["ratio"]) for r in best.values()]
    print(f"\nFastest tile against cuBLAS: {min(ratios):.3f} to {max(ratios):.3f} "
          f"over {len(ratios)} shapes.")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
