#!/usr/bin/env python3
"""The HBM read:write mix measurements of this folder, tabulated: per mix, the total bandwidth
(mean of the three passes on every SM, and their spread), then what a read rate and a write rate
alone would give, and the write rate the mixed streams imply if reads keep their read-only rate;
then the one write rate of mixed streams that fits every mix best (least squares on the relative
error of the time), with the fractions of the read rate it gives (the read rate against the
datasheet's 4.8 TB/s). This is the arithmetic of the bandwidths alone; configs/h200.yaml's
fractions come from simulating the stream (tests/engine/test_hbm_mix_stream.cc, `[hbm-fit]`),
which also accounts for the L2's dirty lines and the launch overhead.

Usage: traces/measured/h200-hbm-mix/analyze.py [FOLDER]
  FOLDER: a run's folder (default: the first run, this folder; extremes/ holds the second, with
  the mixes 31:1, 15:1, 1:15, 1:31 and 1:63 too)
"""
import csv
import pathlib
import statistics
import sys

HERE = pathlib.Path(__file__).resolve().parent


def load(name):
    folder = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    with open(folder / name, newline="") as f:
        return list(csv.DictReader(f))


def main():
    passes = [load(f"hbm_mix-all-{p}.csv") for p in (1, 2, 3)]
    half = {(r["reads"], r["writes"]): r for r in load("hbm_mix-66.csv")}
    rows = []
    for i, first in enumerate(passes[0]):
        gbps = [float(p[i]["gbps"]) for p in passes]
        seconds = [float(p[i]["ms"]) * 1e-3 for p in passes]
        reads, writes = int(first["reads"]), int(first["writes"])
        rb, wb = int(first["read_bytes"]), int(first["write_bytes"])
        rows.append((reads, writes, rb, wb, statistics.mean(gbps), max(gbps) - min(gbps),
                     statistics.mean(seconds), float(half[(first["reads"], first["writes"])]["gbps"])))
    read_only = next(r for r in rows if r[1] == 0)
    write_only = next(r for r in rows if r[0] == 0)
    r_rate = read_only[4]  # GB/s
    w_rate = write_only[4]
    print("| reads:writes | read share | TB/s (132 SMs, mean of 3) | spread | TB/s (66 SMs) |"
          " reads at %.2f + writes at %.2f TB/s | implied write rate when mixed, TB/s |"
          % (r_rate / 1e3, w_rate / 1e3))
    print("|---|---|---|---|---|---|---|")
    for reads, writes, rb, wb, gbps, spread, seconds, gbps66 in rows:
        alone = (rb + wb) / (rb / (r_rate * 1e9) + wb / (w_rate * 1e9)) / 1e9
        implied = ""
        if reads and writes:
            implied = "%.2f" % (wb / (seconds - rb / (r_rate * 1e9)) / 1e12)
        print("| %d:%d | %.3f | %.2f | %.2f | %.2f | %.2f | %s |"
              % (reads, writes, rb / (rb + wb), gbps / 1e3, spread / 1e3, gbps66 / 1e3,
                 alone / 1e3, implied))

    # One write rate for every mixed stream: time = rb / R + wb * x, x = 1 / rate; minimise the
    # sum of ((rb / R + wb * x - T) / T)^2 over the mixes: x = sum(b (T - a) / T^2) / sum(b^2 / T^2).
    mixed = [r for r in rows if r[0] and r[1]]
    num = sum(wb * (t - rb / (r_rate * 1e9)) / t**2 for _, _, rb, wb, _, _, t, _ in mixed)
    den = sum((wb / t) ** 2 for _, _, rb, wb, _, _, t, _ in mixed)
    m_rate = den / num / 1e9  # GB/s
    print()
    print("one write rate for the mixed streams (least squares): %.2f TB/s" % (m_rate / 1e3))
    for reads, writes, rb, wb, gbps, _, t, _ in mixed:
        model = rb / (r_rate * 1e9) + wb / (m_rate * 1e9)
        print("  %d:%d  model %.2f TB/s  measured %.2f  time error %+.1f%%"
              % (reads, writes, (rb + wb) / model / 1e12, gbps / 1e3, (model / t - 1) * 100))
    print("fractions: read rate / 4.8 TB/s = %.4f, write-only / read = %.4f, mixed write / read = %.4f"
          % (r_rate / 4800, w_rate / r_rate, m_rate / r_rate))


if __name__ == "__main__":
    main()
