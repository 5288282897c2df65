#!/usr/bin/env python3
"""Times PyTorch's flash backend of scaled_dot_product_attention at the shapes of a memwall-cuda
case list, the same way memwall-cuda times its kernels: fp16 [B, H, N, d] inputs drawn fresh per
shape, a read of a buffer four times the L2 before each timed run (cold L2), CUDA events around
the call, warm-up runs, the median of the repeats.

Usage: torch_sdpa.py --cases CASES.csv --csv OUT.csv [--repeats 25] [--warmup 3]
CASES.csv is the output of `memwall-cuda --sweep NAME --list`; each distinct
(batch, heads, seq, head_dim) is timed once. Output columns:
batch,heads,seq,head_dim,dtype,kernel,time_s,repeats,rel_err,torch_version
(rel_err: ‖out − ref‖/‖ref‖ on the first head against the math backend in float64).
"""
import argparse
import csv
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", required=True, help="memwall-cuda --list output (CSV)")
    ap.add_argument("--csv", required=True, help="output CSV")
    ap.add_argument("--repeats", type=int, default=25, help="timed runs per shape (median)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs before timing")
    args = ap.parse_args()

    shapes = []
    with open(args.cases, newline="") as f:
        for row in csv.DictReader(f):
            key = (int(row["batch"]), int(row["heads"]), int(row["seq"]), int(row["head_dim"]))
            if key not in shapes:
                shapes.append(key)

    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.ones(max(4 * l2, 1 << 20) // 4, dtype=torch.float32, device=dev)
    rows = []
    for i, (b, h, n, d) in enumerate(shapes):
        gen = torch.Generator(device=dev).manual_seed(1000 + i)
        q = (torch.rand(b, h, n, d, generator=gen, device=dev) * 4 - 2).half()
        k = (torch.rand(b, h, n, d, generator=gen, device=dev) * 2 - 1).half()
        v = (torch.rand(b, h, n, d, generator=gen, device=dev) * 2 - 1).half()
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = F.scaled_dot_product_attention(q, k, v)
            ref = F.scaled_dot_product_attention(q[:1, :1].double().cpu(), k[:1, :1].double().cpu(),
                                                 v[:1, :1].double().cpu()) if n <= 4096 else None
            rel = ""
            if ref is not None:
                got = out[:1, :1].double().cpu()
                rel = f"{(torch.linalg.norm(got - ref) / torch.linalg.norm(ref)).item():.3e}"
            for _ in range(args.warmup):
                F.scaled_dot_product_attention(q, k, v)
            times = []
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            for _ in range(args.repeats):
                flush.sum()
                start.record()
                F.scaled_dot_product_attention(q, k, v)
                stop.record()
                stop.synchronize()
                times.append(start.elapsed_time(stop) * 1e-3)
        t = statistics.median(times)
        rows.append([b, h, n, d, "fp16", "torch_flash", f"{t:.6e}", args.repeats, rel,
                     torch.__version__])
        print(f"torch flash B={b} H={h} N={n} d={d}: {t * 1e3:.4f} ms (rel_err {rel})",
              file=sys.stderr)
        del q, k, v, out
    with open(args.csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["batch", "heads", "seq", "head_dim", "dtype", "kernel", "time_s", "repeats",
                    "rel_err", "torch_version"])
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
