#!/usr/bin/env python3
"""Times PyTorch's flash backend of scaled_dot_product_attention forward and its autograd
backward, side by side with memwall's flash2 / flash2-bwd models, for comparison only (never
fitted). Each shape: fp16 [B, H, N, d] Q and dO, [B, Hkv, N, d] K and V (enable_gqa=True when
Hkv < H), drawn fresh; the forward is run once with requires_grad, then the backward
(torch.autograd.grad of the output with dO) is timed with CUDA events, after a read of a buffer
four times the L2 (cold L2), warm-up runs first, the median of the repeats. The forward is
timed the same way without autograd.

Usage: torch_sdpa_bwd.py --csv OUT.csv [--repeats 15] [--warmup 3]
Output columns: batch,heads,kv_heads,seq,head_dim,causal,fwd_time_s,bwd_time_s,repeats,torch_version
"""
import argparse
import csv
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

# The shapes of issue 15's backward measurement: N 512-16384, causal and not, d 64 and 128,
# B·H = 16 (batch 1, 16 heads), and GQA at N 4096 (32 heads on 8 and on 1).
SHAPES = [(1, 16, 16, n, d, c) for d in (64, 128) for c in (0, 1)
          for n in (512, 1024, 2048, 4096, 8192, 16384)]
SHAPES += [(1, 32, hkv, 4096, 128, c) for hkv in (8, 1) for c in (0, 1)]


def timed(fn, flush, repeats, warmup):
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        flush.sum()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", required=True)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.ones(max(4 * l2, 1 << 20) // 4, dtype=torch.float32, device=dev)
    rows = []
    for i, (b, h, hkv, n, d, causal) in enumerate(SHAPES):
        gen = torch.Generator(device=dev).manual_seed(2000 + i)
        mk = lambda heads: torch.empty(b, heads, n, d, dtype=torch.float16,  # noqa: E731
                                       device=dev).uniform_(-1, 1, generator=gen)
        q, k, v, dout = mk(h).requires_grad_(), mk(hkv).requires_grad_(), mk(hkv).requires_grad_(), mk(h)
        kw = {"is_causal": bool(causal)}
        if hkv != h:
            kw["enable_gqa"] = True
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            with torch.no_grad():
                fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, **kw), flush,
                            args.repeats, args.warmup)
            out = F.scaled_dot_product_attention(q, k, v, **kw)
            bwd = timed(lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True),
                        flush, args.repeats, args.warmup)
        rows.append([b, h, hkv, n, d, causal, f"{fwd:.7g}", f"{bwd:.7g}", args.repeats,
                     torch.__version__])
        print(f"B={b} H={h} Hkv={hkv} N={n} d={d} causal={causal}: fwd {fwd*1e3:.4f} ms, "
              f"bwd {bwd*1e3:.4f} ms", flush=True)
        del q, k, v, dout, out
    with open(args.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["batch", "heads", "kv_heads", "seq", "head_dim", "causal", "fwd_time_s",
                    "bwd_time_s", "repeats", "torch_version"])
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
