#!/usr/bin/env python3
"""The HBM read:write mix measurements of this folder, tabulated: per mix, the total bandwidth
(mean of the three passes on every SM, and their spread), then what a read rate and a write rate
alone would give, and the write rate the mixed streams imply if reads keep their read-only rate.

Usage: traces/measured/h200-hbm-mix/analyze.py
"""
import csv
import pathlib
import statistics

HERE = pathlib.Path(__file__).resolve().parent


def load(name):
    with open(HERE / name, newline="") as f:
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


if __name__ == "__main__":
    main()
