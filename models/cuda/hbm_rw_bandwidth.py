#!/usr/bin/env python3
"""Times HBM streams with PyTorch on the GPU: a write-only fill and zero, a read-only sum and a
copy (read + write), each over 2 GiB of fp16, CUDA events around each call, 3 warm-up calls,
the median of 20. Prints one line per stream with its time and bandwidth.

Usage: hbm_rw_bandwidth.py
"""
import statistics

import torch

GIB = 2 ** 30


def median_seconds(fn, repeats=20, warmup=3):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def main():
    x = torch.empty(GIB, dtype=torch.float16, device="cuda")  # 2 GiB
    y = torch.empty_like(x)
    x.normal_()
    streams = [("fill 2GiB (write)", lambda: x.fill_(1.5), 2 * GIB),
               ("zero 2GiB (write)", lambda: x.zero_(), 2 * GIB),
               ("sum 2GiB (read)", lambda: x.sum(dtype=torch.float32), 2 * GIB),
               ("copy 2GiB (read + write)", lambda: y.copy_(x), 4 * GIB)]
    for name, fn, moved in streams:
        t = median_seconds(fn)
        print("%-26s %9.1f us  %.2f TB/s" % (name, t * 1e6, moved / t / 1e12))


if __name__ == "__main__":
    main()
