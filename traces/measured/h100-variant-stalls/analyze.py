#!/usr/bin/env python3
"""The split-KV combine's warp instructions and stall reasons (stalls.csv of this folder) and the
variant kernel's in causal prefill: per combine launch its warp instructions per CTA and stall
cycles per issued instruction by reason; then, for the launches with one warp per scheduler and 4
rows per CTA, each warp's own dependency chain (instructions x (1 + stalls other than the long
scoreboard, i.e. its global loads, and the barrier)) against the rounds of O_accum loads
(ceil(splits / 4)) and a least-squares line through them.

Usage: python3 traces/measured/h100-variant-stalls/analyze.py [stalls.csv]   (standard library)
"""
import collections
import csv
import math
import os
import sys

REASONS = ["long_scoreboard", "wait", "short_scoreboard", "barrier", "dispatch_stall",
           "no_instruction", "branch_resolving", "mio_throttle", "lg_throttle",
           "math_pipe_throttle", "not_selected", "membar", "drain", "misc", "imc_miss", "sleeping",
           "tex_throttle"]
RATIO = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"
# models/cuda/stall_reasons.sh, STALL_SET=variants: (batch, kv_heads, seq_kv, splits) in order.
CASES = [tuple(map(int, c.split(":"))) for c in (
    "1:32:1024:8 1:8:1024:8 1:1:1024:8 16:8:1024:2 16:1:1024:8 64:1:1024:4 "
    "1:32:16384:7 1:8:16384:32 1:1:16384:128 16:8:16384:2 16:1:16384:15 64:1:16384:4 "
    "1:32:65536:7 1:8:65536:29 1:1:65536:128 16:8:65536:2 16:1:65536:14 64:1:65536:4").split()]
CASES += [(1, 8, 16384, s) for s in (2, 3, 4, 5, 8, 12, 16, 20, 24, 28, 64, 96)]
CASES += [(1, 32, 16384, s) for s in (2, 4, 8, 16, 32, 128)]
# A lone warp's own stall reasons, as traces/measured/h100-stall-probe/analyze.py sums them (L).
OWN = ["wait", "short_scoreboard", "long_scoreboard", "dispatch_stall", "no_instruction",
       "branch_resolving", "barrier", "misc"]


def launches(path):
    rows = list(csv.reader(line for line in open(path) if not line.startswith("==")))
    header, by_id, names = rows[0], collections.OrderedDict(), {}
    for r in rows[1:]:
        d = dict(zip(header, r))
        by_id.setdefault(d["ID"], {})[d["Metric Name"]] = float(d["Metric Value"].replace(",", "") or 0)
        names[d["ID"]] = d["Kernel Name"]
    return [(names[i], m) for i, m in by_id.items()]


def main(path):
    all_launches = launches(path)
    combine = [m for n, m in all_launches if "combine" in n]
    variant = [(n, m) for n, m in all_launches if "variant" in n]
    print(f"{path}: {len(combine)} combine launches, {len(variant)} variant-kernel launches")
    print("B Hkv Nkv S | CTAs  instr/CTA  warps/sched | stall cycles per issued instruction: "
          + " ".join(r[:8] for r in REASONS[:7]))
    chain = []
    for (b, hkv, nkv, s), m in zip(CASES, combine):
        ctas = m["launch__grid_size"]
        per_cta = m["smsp__inst_executed.sum"] / ctas
        warps = m["smsp__warps_active.avg.per_cycle_active"]
        print(f"{b} {hkv} {nkv} {s} | {ctas:.0f} {per_cta:.1f} {warps:.2f} | "
              + " ".join(f"{m.get(RATIO % r, 0):.2f}" for r in REASONS[:7]))
        if hkv != 32 and warps < 1.5:  # 4 rows per CTA (4 warps busy), one warp per scheduler
            own = sum(m.get(RATIO % r, 0) for r in REASONS if r not in ("long_scoreboard", "barrier"))
            chain.append((math.ceil(s / 4), per_cta / 4 * (1 + own)))
    xs, ys = [c[0] for c in chain], [c[1] for c in chain]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    icpt = my - slope * mx
    worst = max(abs((icpt + slope * x) / y - 1) for x, y in chain)
    print(f"\nown dependency chain per warp, {len(chain)} launches with 4 rows per CTA and one warp "
          f"per scheduler: {icpt:.0f} cycles + {slope:.1f} per round of O_accum loads "
          f"(worst {worst:.1%} off)")
    print("\nthe variant kernel in causal prefill (B = 1, H = 16; the last four launches): L, its "
          "own stall cycles per instruction (the stall probe's sum)")
    for (n, m), shape in zip(variant[-4:], ("N=1024 d=64", "N=1024 d=128", "N=4096 d=64",
                                             "N=4096 d=128")):
        own = sum(m.get(RATIO % r, 0) for r in OWN)
        print(f"  {shape:<12} {n.split('(')[0].split('::')[-1]:<42} CTAs "
              f"{m['launch__grid_size']:>4.0f} w {m['smsp__warps_active.avg.per_cycle_active']:.2f} "
              f"L {own:.2f}")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "stalls.csv"))
