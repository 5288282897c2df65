#!/usr/bin/env python3
"""Times PyTorch's flash (or, with --backend cudnn, cuDNN) backend of scaled_dot_product_attention
at the shapes of a case list, the same way memwall-cuda times its kernels: fp16 [B, H, N, d]
inputs drawn fresh per shape, a read of a buffer four times the L2 before each timed run (cold
L2), CUDA events around the call, warm-up runs, the median of the repeats.

Usage: torch_sdpa.py --cases CASES.csv --csv OUT.csv [--repeats 25] [--warmup 3]
                     [--backend flash|cudnn]
CASES.csv is the output of `memwall-cuda --sweep NAME --list` or `flash3_attention --list`; each distinct
(batch, heads, kv_heads, seq, seq_kv, head_dim, causal) is timed once (kv_heads, seq_kv and
causal default to heads, seq and 0 where the list has no such columns). K and V are
[B, kv_heads, seq_kv, d] and go in with enable_gqa=True when kv_heads < heads; causal is
is_causal=True (PyTorch's flash backend aligns the mask bottom-right, as FlashAttention-2 does;
only seq = seq_kv is run causal here). Output columns:
batch,heads,kv_heads,seq,seq_kv,head_dim,causal,dtype,kernel,time_s,repeats,rel_err,torch_version
(rel_err: ‖out − ref‖/‖ref‖ on the first head against the math backend in float64; time_s
empty and rel_err "error: ..." when the backend refused the shape).
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
    ap.add_argument("--backend", choices=["flash", "cudnn"], default="flash",
                    help="SDPA backend: FlashAttention-2 (flash) or cuDNN's fused attention")
    args = ap.parse_args()

    shapes = []
    with open(args.cases, newline="") as f:
        for row in csv.DictReader(f):
            get = lambda name, default: int(row.get(name) or default)  # noqa: E731
            key = (int(row["batch"]), int(row["heads"]), get("kv_heads", row["heads"]),
                   int(row["seq"]), get("seq_kv", row["seq"]), int(row["head_dim"]),
                   get("causal", 0))
            if key not in shapes:
                shapes.append(key)

    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.ones(max(4 * l2, 1 << 20) // 4, dtype=torch.float32, device=dev)
    backend = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[args.backend]
    rows = []
    for i, (b, h, hkv, n, nkv, d, causal) in enumerate(shapes):
        gen = torch.Generator(device=dev).manual_seed(1000 + i)
        # Drawn in fp16 directly: decode's K and V reach 34 GB each.
        q = torch.empty(b, h, n, d, dtype=torch.float16, device=dev).uniform_(-2, 2, generator=gen)
        k = torch.empty(b, hkv, nkv, d, dtype=torch.float16, device=dev).uniform_(-1, 1,
                                                                                  generator=gen)
        v = torch.empty(b, hkv, nkv, d, dtype=torch.float16, device=dev).uniform_(-1, 1,
                                                                                  generator=gen)
        kw = {"is_causal": bool(causal)}
        if hkv != h:
            kw["enable_gqa"] = True
        t, rel = None, ""
        try:
            with sdpa_kernel(backend):
                out = F.scaled_dot_product_attention(q, k, v, **kw)
            if n * nkv <= 4096 * 4096:
                # Head 0 reads KV head 0 under GQA too; the reference on the CPU, outside the
                # backend's context (the CPU has no cuDNN).
                ref = F.scaled_dot_product_attention(
                    q[:1, :1].double().cpu(), k[:1, :1].double().cpu(),
                    v[:1, :1].double().cpu(), is_causal=bool(causal))
                got = out[:1, :1].double().cpu()
                rel = f"{(torch.linalg.norm(got - ref) / torch.linalg.norm(ref)).item():.3e}"
            with sdpa_kernel(backend):
                for _ in range(args.warmup):
                    F.scaled_dot_product_attention(q, k, v, **kw)
                times = []
                start = torch.cuda.Event(enable_timing=True)
                stop = torch.cuda.Event(enable_timing=True)
                for _ in range(args.repeats):
                    flush.sum()
                    start.record()
                    F.scaled_dot_product_attention(q, k, v, **kw)
                    stop.record()
                    stop.synchronize()
                    times.append(start.elapsed_time(stop) * 1e-3)
            t = statistics.median(times)
            del out
        except RuntimeError as e:
            rel = "error: " + str(e).splitlines()[0].replace(",", ";")[:120]
        rows.append([b, h, hkv, n, nkv, d, causal, "fp16", f"torch_{args.backend}",
                     "" if t is None else f"{t:.6e}", args.repeats, rel, torch.__version__])
        print(f"torch {args.backend} B={b} H={h} Hkv={hkv} N={n} Nkv={nkv} d={d} causal={causal}: "
              f"{'-' if t is None else f'{t * 1e3:.4f}'} ms (rel_err {rel})", file=sys.stderr)
        del q, k, v
    with open(args.csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["batch", "heads", "kv_heads", "seq", "seq_kv", "head_dim", "causal", "dtype",
                    "kernel", "time_s", "repeats", "rel_err", "torch_version"])
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
