#!/usr/bin/env python3
"""Prints the markdown table of a run_flash3.sh output folder: each case of fa3.csv with its
time, TFLOP/s and SM clock beside PyTorch's flash and cuDNN backends at the same shape
(torch_flash.csv, torch_cudnn.csv; "-" where a backend refused the shape or did not run).

Usage: fa3_table.py OUTDIR
"""
import csv
import os
import sys

KEY = ["batch", "heads", "kv_heads", "seq", "seq_kv", "head_dim", "causal"]


def read(path):
    if not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        return {tuple(r[k] for k in KEY): r for r in csv.DictReader(f)}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    with open(os.path.join(out, "fa3.csv"), newline="") as f:
        ours = list(csv.DictReader(f))
    torch = {b: read(os.path.join(out, f"torch_{b}.csv")) for b in ("flash", "cudnn")}
    print("| B | H | Hkv | N | d | causal | ms | TFLOP/s | SM MHz | torch flash ms | ratio | "
          "cuDNN ms | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in ours:
        key = tuple(r[k] for k in KEY)
        cells = [r["batch"], r["heads"], r["kv_heads"], r["seq"], r["head_dim"], r["causal"],
                 f"{float(r['ms']):.3f}", r["tflops"], r["sm_mhz"]]
        for b in ("flash", "cudnn"):
            t = torch[b].get(key, {}).get("time_s", "")
            if t:
                ms = float(t) * 1e3
                cells += [f"{ms:.3f}", f"{ms / float(r['ms']):.2f}"]
            else:
                cells += ["-", "-"]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
