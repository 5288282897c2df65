#!/usr/bin/env python3
"""Prints the headline figures of the microbenchmark CSVs that run_all.sh writes, as Markdown
tables: L2 and HBM pointer-chase latency, the near/far L2 split, the sustained SM clock, HBM read
bandwidth against active SMs and bytes in flight, write bandwidth, per-SM pipe rates against
warps, and launch overhead.

Usage: tabulate.py DIR   (DIR holds latency.csv, l2_hist.csv, clock.csv, hbm_bw.csv, pipes.csv,
                          launch.csv)
"""
import csv
import os
import statistics
import sys
from typing import Dict, List


def read(path: str) -> List[Dict[str, str]]:
    if not os.path.exists(path):
        print(f"({os.path.basename(path)} missing)")
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def latency(rows: List[Dict[str, str]], hist_rows: List[Dict[str, str]]) -> None:
    print("\n### Pointer-chase latency (one thread, ld.global.cg, 128-byte random cycle)\n")
    print("| kind | buffer | SMs | cycles/load (median over SMs) | range over SMs | ns/load | clock MHz |")
    print("|---|---|---|---|---|---|---|")
    groups: Dict[tuple, List[Dict[str, str]]] = {}
    for r in rows:
        if r["kind"] in ("l2", "hbm"):
            groups.setdefault((r["kind"], int(r["buffer_bytes"])), []).append(r)
    for (kind, size), rs in groups.items():
        cyc = [float(r["cycles_per_load"]) for r in rs]
        ns = [float(r["ns_per_load"]) for r in rs]
        mhz = [float(r["clock_mhz"]) for r in rs]
        sms = ",".join(r["sm"] for r in rs)
        print(f"| {kind} | {size / 2**20:.0f} MiB | {sms} | {statistics.median(cyc):.1f} | "
              f"{min(cyc):.1f}-{max(cyc):.1f} | {statistics.median(ns):.1f} | "
              f"{statistics.median(mhz):.0f} |")
    samples = [r for r in rows if r["kind"] == "l2_samples"]
    if samples:
        print("\n### Per-load samples, 16 MiB (each sample also holds one shared store and one "
              "clock read)\n")
        print("| SM | pass | mean | low mode median | high mode median | low fraction | split at | "
              "outliers | clock MHz |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in samples:
            print(f"| {r['sm']} | {r['pass']} | {float(r['cycles_per_load']):.1f} | "
                  f"{float(r['low_mode_cycles']):.0f} | {float(r['high_mode_cycles']):.0f} | "
                  f"{float(r['low_fraction']):.3f} | {r['split_cycles']} | "
                  f"{float(r['outlier_fraction']):.4f} | {float(r['clock_mhz']):.0f} |")
        timed = {r["sm"]: float(r["cycles_per_load"]) for r in rows
                 if r["kind"] == "l2" and int(r["buffer_bytes"]) == 16 * 2**20}
        for r in samples:
            if r["pass"] == "2" and r["sm"] in timed:
                print(f"\nSM {r['sm']}: sample mean - timed chase = "
                      f"{float(r['cycles_per_load']) - timed[r['sm']]:.1f} cycles (per-sample overhead)")
    side = [r for r in rows if r["kind"] == "l2_side"]
    if side:
        far = [r for r in side if float(r["low_fraction"]) < 0.75
               and float(r["high_mode_cycles"]) - float(r["low_mode_cycles"]) > 100]
        near = [r for r in side if r not in far]
        print("\n### L2 side of each SM (4 MiB, after SM 0 loaded every line twice)\n")
        print("| side | SMs | low mode median | high mode median | low fraction | mean |")
        print("|---|---|---|---|---|---|")
        for name, rs in (("SM 0's", near), ("other", far)):
            if not rs:
                continue
            print(f"| {name} | {len(rs)} | "
                  f"{statistics.median(float(r['low_mode_cycles']) for r in rs):.0f} | "
                  f"{statistics.median(float(r['high_mode_cycles']) for r in rs):.0f} | "
                  f"{statistics.median(float(r['low_fraction']) for r in rs):.3f} | "
                  f"{statistics.median(float(r['cycles_per_load']) for r in rs):.1f} |")
        print("\nSMs on the other side: " + " ".join(r["sm"] for r in far))
    hbm = [r for r in rows if r["kind"] == "hbm_samples"]
    if hbm:
        print("\n### HBM per-load samples (1 GiB), split at the histogram's valley\n")
        print("| SM | mean | low mode median | high mode median | low fraction | valley | "
              "beyond 1.25x high median |")
        print("|---|---|---|---|---|---|---|")
        for r in hbm:
            m = hist_modes(hist_rows, r["sm"], "hbm")
            if m:
                print(f"| {r['sm']} | {float(r['cycles_per_load']):.1f} | {m['low']:.0f} | "
                      f"{m['high']:.0f} | {m['low_fraction']:.3f} | {m['valley']} | "
                      f"{m['tail_fraction']:.3f} |")


def weighted_median(pairs: List[tuple]) -> float:
    """Median of (value, count) pairs sorted by value."""
    total = sum(c for _, c in pairs)
    seen = 0
    for v, c in pairs:
        seen += c
        if 2 * seen >= total:
            return float(v)
    return 0.0


def hist_modes(hist_rows: List[Dict[str, str]], sm: str, label: str) -> Dict[str, float]:
    """Two modes of one sample set of l2_hist.csv: 20-cycle bins, the two highest peaks at least
    100 cycles apart, split at the emptiest bin between them."""
    pairs = sorted((int(r["latency_cycles"]), int(r["count"])) for r in hist_rows
                   if r["sm"] == sm and r["pass"] == label)
    if not pairs:
        return {}
    bins: Dict[int, int] = {}
    for v, c in pairs:
        bins[v // 20] = bins.get(v // 20, 0) + c
    first = max(bins, key=lambda b: bins[b])
    others = [b for b in bins if abs(b - first) >= 5]
    if not others:
        return {}
    second = max(others, key=lambda b: bins[b])
    lo, hi = sorted((first, second))
    valley = 20 * min(range(lo, hi + 1), key=lambda b: bins.get(b, 0))
    low = [(v, c) for v, c in pairs if v < valley]
    high = [(v, c) for v, c in pairs if v >= valley]
    total = sum(c for _, c in pairs)
    high_median = weighted_median(high)
    return {"low": weighted_median(low), "high": high_median, "valley": valley,
            "low_fraction": sum(c for _, c in low) / total,
            "tail_fraction": sum(c for v, c in pairs if v > 1.25 * high_median) / total}


def clock(rows: List[Dict[str, str]]) -> None:
    if not rows:
        return
    print("\n### Sustained SM clock under load, ~200 ms launches on all SMs\n")
    print("| load | launches | clock MHz (median of launch medians) | first | last | min CTA | "
          "max CTA | TFLOP/s |")
    print("|---|---|---|---|---|---|---|---|")
    for load in dict.fromkeys(r["load"] for r in rows):
        rs = [r for r in rows if r["load"] == load]
        med = [float(r["clock_mhz_median"]) for r in rs]
        print(f"| {load} | {len(rs)} | {statistics.median(med):.0f} | {med[0]:.0f} | "
              f"{med[-1]:.0f} | {min(float(r['clock_mhz_min']) for r in rs):.0f} | "
              f"{max(float(r['clock_mhz_max']) for r in rs):.0f} | "
              f"{statistics.median(float(r['tflops']) for r in rs):.1f} |")


def bandwidth(rows: List[Dict[str, str]]) -> None:
    reads = [r for r in rows if r["mode"] == "read"]
    if not reads:
        return
    ctas = sorted({int(r["ctas"]) for r in reads})
    print("\n### HBM read bandwidth, one CTA per SM: best over warps x unroll\n")
    print("| SMs | distinct SMs | GB/s | GB/s per SM | at warps, unroll | bytes in flight/SM | clock MHz |")
    print("|---|---|---|---|---|---|---|")
    for c in ctas:
        best = max((r for r in reads if int(r["ctas"]) == c), key=lambda r: float(r["gbps"]))
        print(f"| {c} | {best['distinct_sms']} | {float(best['gbps']):.1f} | "
              f"{float(best['gbps_per_sm']):.2f} | {best['warps']}, {best['unroll']} | "
              f"{best['bytes_in_flight_per_sm']} | {best['clock_mhz']} |")
    for c in (ctas[0], ctas[-1]):
        sub = [r for r in reads if int(r["ctas"]) == c]
        warps = sorted({int(r["warps"]) for r in sub})
        unrolls = sorted({int(r["unroll"]) for r in sub})
        print(f"\n{c} SM(s): GB/s per SM by warps (rows) and 16-byte loads in flight per thread "
              "(columns)\n")
        print("| warps | " + " | ".join(f"u={u}" for u in unrolls) + " |")
        print("|---|" + "---|" * len(unrolls))
        for w in warps:
            cells = []
            for u in unrolls:
                m = [r for r in sub if int(r["warps"]) == w and int(r["unroll"]) == u]
                cells.append(f"{float(m[0]['gbps_per_sm']):.2f}" if m else "")
            print(f"| {w} | " + " | ".join(cells) + " |")
    print("\nGB/s per SM against bytes in flight per SM (median over the warps x unroll that give "
          "it):\n")
    print("| bytes in flight/SM | " + " | ".join(f"{c} SMs" for c in ctas) + " |")
    print("|---|" + "---|" * len(ctas))
    for b in sorted({int(float(r["bytes_in_flight_per_sm"])) for r in reads}):
        cells = []
        for c in ctas:
            m = [float(r["gbps_per_sm"]) for r in reads
                 if int(r["ctas"]) == c and int(float(r["bytes_in_flight_per_sm"])) == b]
            cells.append(f"{statistics.median(m):.2f}" if m else "")
        print(f"| {b} | " + " | ".join(cells) + " |")
    writes = [r for r in rows if r["mode"] == "write"]
    if writes:
        print("\n### HBM write bandwidth\n")
        print("| SMs | warps | unroll | GB/s | GB/s per SM |")
        print("|---|---|---|---|---|")
        for r in writes:
            print(f"| {r['ctas']} | {r['warps']} | {r['unroll']} | {float(r['gbps']):.1f} | "
                  f"{float(r['gbps_per_sm']):.2f} |")


def pipes(rows: List[Dict[str, str]]) -> None:
    if not rows:
        return
    warps = sorted({int(r["warps"]) for r in rows})
    print("\n### Per-SM rates against warps per SM (one CTA per SM; most chains per thread)\n")
    print("| op | unit/cycle/SM | chains | " + " | ".join(f"{w} w" for w in warps) +
          " | dependent latency (cycles, 1 warp, 1 chain) |")
    print("|---|---|---|" + "---|" * len(warps) + "---|")
    for op in dict.fromkeys(r["op"] for r in rows):
        sub = [r for r in rows if r["op"] == op]
        most = max(int(r["chains"]) for r in sub)
        cells = []
        for w in warps:
            m = [r for r in sub if int(r["chains"]) == most and int(r["warps"]) == w]
            cells.append(f"{float(m[0]['units_per_cycle_per_sm']):.1f}" if m else "")
        lat = [r for r in sub if int(r["chains"]) == 1 and int(r["warps"]) == 1]
        print(f"| {op} | {sub[0]['unit']} | {most} | " + " | ".join(cells) + " | " +
              (f"{float(lat[0]['cycles_per_step']):.2f}" if lat else "") + " |")
    print("\nSame, one chain per thread (dependent):\n")
    print("| op | " + " | ".join(f"{w} w" for w in warps) + " |")
    print("|---|" + "---|" * len(warps))
    for op in dict.fromkeys(r["op"] for r in rows):
        cells = []
        for w in warps:
            m = [r for r in rows if r["op"] == op and int(r["chains"]) == 1 and int(r["warps"]) == w]
            cells.append(f"{float(m[0]['units_per_cycle_per_sm']):.1f}" if m else "")
        print(f"| {op} | " + " | ".join(cells) + " |")


def launch(rows: List[Dict[str, str]]) -> None:
    if not rows:
        return
    print("\n### Launch overhead\n")
    print("| test | CTAs | threads/CTA | us per launch |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['test']} | {r['ctas']} | {r['threads_per_cta']} | "
              f"{float(r['us_per_launch']):.3f} |")
    pts = [(int(r["ctas"]), float(r["us_per_launch"])) for r in rows if r["test"] == "ctas"]
    big = [p for p in pts if p[0] >= 8 * pts[0][0]] if pts else []
    if len(big) >= 2:
        n = len(big)
        mx = sum(p[0] for p in big) / n
        my = sum(p[1] for p in big) / n
        slope = sum((p[0] - mx) * (p[1] - my) for p in big) / sum((p[0] - mx) ** 2 for p in big)
        print(f"\nLeast-squares slope over {big[0][0]}..{big[-1][0]} CTAs: {slope * 1e3:.3f} ns "
              f"per CTA ({1 / slope:.0f} CTAs per us, {1 / slope / pts[0][0]:.2f} per SM per us)")


def main() -> None:
    d = sys.argv[1]
    latency(read(os.path.join(d, "latency.csv")), read(os.path.join(d, "l2_hist.csv")))
    clock(read(os.path.join(d, "clock.csv")))
    bandwidth(read(os.path.join(d, "hbm_bw.csv")))
    pipes(read(os.path.join(d, "pipes.csv")))
    launch(read(os.path.join(d, "launch.csv")))


if __name__ == "__main__":
    main()
