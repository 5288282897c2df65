#!/usr/bin/env python3
"""Why the mma.sync kernels' warps wait (models/cuda/stall_reasons.sh, reasons/stalls.csv) and
what the variant kernel issues in decode (models/cuda/stall_probe.sh, sections/decode.csv).

Part 1, per launch (the last three: the variant kernel in decode at B = 1, Hkv = 8; B = 16,
Hkv = 8; B = 16, Hkv = 32): warps per scheduler (smsp__warps_active), the issue slots' busy share I
(smsp__issue_active over four schedulers and the elapsed cycles), the tensor pipe's share T (HMMA
instructions at the measured mma.sync ceiling, 2660 FLOP per cycle per SM, as
traces/measured/h200-issue-probe/analyze.py), T + I (the sum law the engine books), and ncu's
stall reasons in cycles per issued instruction (smsp__average_warps_issue_stalled_<r>_per_issue_
active.ratio). Then the latency chain: a warp that issues an instruction every 1 + L cycles, L the
stall cycles that are its own dependencies (wait, short and long scoreboard, dispatch, no
instruction, branch resolving, barrier, misc; not math-pipe throttle or not-selected, which are
other warps' use of the scheduler), issues at most 1 / (1 + L) per cycle, so a scheduler's w warps
need at least I·(1 + L)/w of the cycles: `chain`.

Part 2: the variant kernel's warp instructions in decode as per-tile and per-CTA terms, exact.

  python3 traces/measured/h100-stall-probe/analyze.py
"""
import collections
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SMS = 132
MMA_FLOP_PER_CYCLE = 2660.0
HMMA_FLOP = 4096.0
OWN = ["wait", "short_scoreboard", "long_scoreboard", "dispatch_stall", "no_instruction",
       "branch_resolving", "barrier", "misc"]
OTHER = ["math_pipe_throttle", "mio_throttle", "not_selected"]


def launches(path):
    by = collections.OrderedDict()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            name = r["Kernel Name"].split("(")[0].replace("void unnamed>::", "")
            key = (int(r["ID"]), name, r["Grid Size"])
            v = r["Metric Value"].replace(",", "")
            try:
                by.setdefault(key, {})[r["Metric Name"]] = float(v)
            except ValueError:
                by.setdefault(key, {})
    return by


def stall(m, r):
    return m.get(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio", 0.0)


def part1():
    rows = launches(os.path.join(HERE, "reasons", "stalls.csv"))
    print("Part 1: stall reasons per issued instruction (H100 SXM, 132 SMs; B = 4, H = 16, "
          "N = 1024 then 4096; then decode, d = 128, Nkv = 16384, unsplit). T, I and chain are "
          "shares of the cycles of the SMs that run CTAs (all 132, or the grid's size if smaller)")
    head = (f"{'kernel':<36} {'CTAs':>5} {'w':>5} {'T':>6} {'I':>6} {'T+I':>6} {'chain':>6}"
            f" {'L':>5} " + " ".join(f"{r[:8]:>8}" for r in OWN + OTHER))
    print(head)
    for (i, name, grid), m in rows.items():
        cycles = m["sm__cycles_elapsed.avg"]
        ctas = int(grid.strip("()").split(",")[0])
        sms = min(ctas, SMS)  # a grid smaller than the chip runs one CTA per SM
        t = m["sm__inst_executed_pipe_tensor_op_hmma.sum"] * HMMA_FLOP / MMA_FLOP_PER_CYCLE / sms
        t /= cycles
        issue = m["smsp__issue_active.sum"] / (4 * sms) / cycles
        w = m["smsp__warps_active.avg.per_cycle_active"]
        own = sum(stall(m, r) for r in OWN)
        chain = issue * (1 + own) / w
        print(f"{name[:36]:<36} {ctas:>5} {w:>5.2f} {t:>6.3f} {issue:>6.3f} {t + issue:>6.3f}"
              f" {chain:>6.3f} {own:>5.2f} "
              + " ".join(f"{stall(m, r):>8.2f}" for r in OWN + OTHER))


def part2():
    rows = launches(os.path.join(HERE, "sections", "decode.csv"))
    # stall_probe.sh's decode cases in order: Hkv 8 then 32; Nkv 1024, 4096, 16384 unsplit, then
    # Nkv 16384 in 4 and 16 splits (B = 16, H = 32, d = 128, 128 x 64 tiles; each split launch
    # followed by its combine).
    cases = []
    for kv in (8, 32):
        cases += [(kv, n, 1) for n in (1024, 4096, 16384)] + [(kv, 16384, 4), (kv, 16384, 16)]
    fwd = [(k, m) for k, m in rows.items() if "variant" in k[1]]
    assert len(fwd) == len(cases), (len(fwd), len(cases))
    print()
    print("Part 2: flash2_fwd_variant_kernel<128, 128, 64, 2> in decode (B = 16, H = 32, d = 128)")
    print(f"{'Hkv':>4} {'Nkv':>6} {'splits':>6} {'CTAs':>5} {'tiles/CTA':>9} {'inst/CTA':>10}")
    pts = []
    for (kv, n, s), ((i, name, grid), m) in zip(cases, fwd):
        ctas = m["sm__ctas_launched.sum"]
        tiles = n // s // 64
        per = m["smsp__inst_executed.sum"] / ctas
        pts.append((kv, s, tiles, per))
        print(f"{kv:>4} {n:>6} {s:>6} {ctas:>5.0f} {tiles:>9} {per:>10.1f}")
    for kv in (8, 32):
        un = [(t, p) for k, s, t, p in pts if k == kv and s == 1]
        (t0, p0), (t1, p1) = un[0], un[-1]
        step = (p1 - p0) / (t1 - t0)
        cta = p0 - t0 * step
        sp = [p - t * step for k, s, t, p in pts if k == kv and s > 1]
        rest = [p - (cta + t * step) for t, p in un]
        print(f"Hkv {kv}: {step:.1f} per tile, {cta:.1f} per CTA unsplit (residuals "
              f"{', '.join(f'{r:.1f}' for r in rest)}), per CTA split {', '.join(f'{c:.1f}' for c in sp)}")


if __name__ == "__main__":
    part1()
    part2()
