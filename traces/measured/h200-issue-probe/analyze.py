#!/usr/bin/env python3
"""What the mma.sync kernels' warp instructions and issue slots say about their time.

Reads issue.csv (models/cuda/issue_probe.sh) and prints, per kernel launch and SM setting:
warp instructions, HMMA instructions, the cycles the SM needed (ncu's sm__cycles_elapsed), and
two lower bounds on them: the tensor pipe (HMMA instructions at the measured mma.sync ceiling,
2660 FLOP per cycle per SM, traces/measured/h200-ubench/pipes.csv) and the issue slots (every
warp instruction one slot of the SM's four schedulers). Then, per kernel, the instruction count
written as exact terms of the kernel's structure (per K/V tile visited, per masked tile, per
CTA), found by least squares over the sequence lengths and checked to be integers.

  python3 traces/measured/h200-issue-probe/analyze.py [issue.csv]
"""
import csv
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MMA_FLOP_PER_CYCLE = 2660.0  # measured mma.sync m16n8k16 ceiling per SM (h200-ubench)
HMMA_FLOP = 4096.0  # one m16n8k16 warp instruction
ISSUE_PER_CYCLE = 4.0  # one warp instruction per scheduler per cycle, four schedulers per SM
SMS = {"none": 132, "16": 16}
B, H = 4, 16


def cases():
    """The launches issue_probe.sh profiles, in order: (kernel family, d, N, causal, block_q,
    block_kv, stages)."""
    out = []
    for n in (1024, 2048, 4096):
        out += [("flash2", 64, n, 0, 128, 128, 2), ("flash2", 128, n, 0, 128, 64, 2)]
        for c in (0, 1):
            out += [("variant", 64, n, c, 128, 128, 2), ("variant", 128, n, c, 128, 64, 2)]
    for n in (1024, 4096):
        for d, bq, bkv, st in ((64, 128, 64, 2), (64, 64, 128, 2), (64, 64, 64, 2), (64, 64, 64, 3),
                               (128, 128, 32, 2), (128, 64, 128, 2), (128, 64, 64, 2),
                               (128, 64, 64, 3)):
            out.append(("flash2", d, n, 0, bq, bkv, st))
    for n in (1024, 4096):
        for d in (64, 128):
            out += [("qk", d, n, 0, 128, 128, 0), ("pv", d, n, 0, 128, 128, 0)]
    return out


def structure(family, d, n, causal, bq, bkv, stages):
    """(K/V tiles visited, of them masked, CTAs) of one launch, as the kernels tile it."""
    del d, stages
    if family in ("flash2", "variant"):
        q_blocks = n // bq
        ctas = B * H * q_blocks
        if not causal:
            return ctas * (n // bkv), 0, ctas
        # Query row r sees keys 0..r: Q block i visits the K/V tiles up to its last row, and
        # masks those its diagonal crosses.
        visited = sum(((i + 1) * bq + bkv - 1) // bkv for i in range(q_blocks))
        masked = sum(((i + 1) * bq + bkv - 1) // bkv - (i * bq) // bkv for i in range(q_blocks))
        return B * H * visited, B * H * masked, ctas
    if family == "qk":  # one CTA per 128 x 128 tile of S
        ctas = B * H * (n // 128) ** 2
        return ctas, 0, ctas
    ctas = B * H * (n // 128)  # pv: one CTA per 128 query rows, looping over the keys
    return ctas * (n // 128), 0, ctas


def read(path):
    launches = {}
    for row in csv.reader(open(path)):
        if len(row) < 16 or row[1] == "ID":
            continue
        key = (row[0], int(row[1]))
        rec = launches.setdefault(key, {"kernel": row[5], "grid": row[9]})
        try:
            rec[row[13]] = float(row[15].replace(",", ""))
        except ValueError:
            rec[row[13]] = row[15]
    return launches


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "probe", "issue.csv")
    launches = read(path)
    expected = cases()
    rows = []
    for setting, sms in SMS.items():
        ids = sorted(i for s, i in launches if s == setting)
        if len(ids) != len(expected):
            sys.exit(f"{path}: {len(ids)} launches at setting {setting}, expected {len(expected)}")
        for i, case in zip(ids, expected):
            family, d, n, causal, bq, bkv, stages = case
            m = launches[(setting, i)]
            name = m["kernel"]
            want = {"flash2": "flash2_fwd_kernel", "variant": "flash2_fwd_variant_kernel",
                    "qk": "naive_qk_kernel", "pv": "naive_pv_kernel"}[family]
            if want + "<" not in name and want + "(" not in name:
                sys.exit(f"launch {i} at {setting} is {name}, expected {want}")
            inst = m["smsp__inst_executed.sum"]
            hmma = m["sm__inst_executed_pipe_tensor_op_hmma.sum"]
            cycles = m["sm__cycles_elapsed.avg"]
            tensor = hmma * HMMA_FLOP / MMA_FLOP_PER_CYCLE / sms
            issue = m["smsp__issue_active.sum"] / (ISSUE_PER_CYCLE * sms)
            rows.append(dict(setting=setting, case=case, family=family, d=d, n=n, causal=causal,
                             tile=(bq, bkv, stages), inst=inst,
                             hmma=hmma, cycles=cycles, tensor=tensor, issue=issue,
                             clock=cycles / (m["gpu__time_duration.sum"] * 1e-9),
                             warps=m.get("smsp__warps_active.avg.per_cycle_active", math.nan)))

    print("per launch (cycles: ncu's sm__cycles_elapsed.avg; tensor, issue: the two bounds in SM")
    print("cycles; sum/meas: (tensor + issue) / cycles, max/meas: max(tensor, issue) / cycles)")
    print(f"{'sms':>4} {'kernel':8} {'d':>3} {'N':>5} {'c':>1} {'warp inst':>12} {'HMMA':>11} "
          f"{'cycles':>10} {'tensor':>10} {'issue':>10} {'sum/meas':>8} {'max/meas':>8} "
          f"{'warps/sch':>9} {'GHz':>5}")
    for r in rows:
        print(f"{SMS[r['setting']]:>4} {r['family']:8} {r['d']:>3} {r['n']:>5} {r['causal']:>1} "
              f"{r['inst']:>12,.0f} {r['hmma']:>11,.0f} {r['cycles']:>10,.0f} {r['tensor']:>10,.0f} "
              f"{r['issue']:>10,.0f} {(r['tensor'] + r['issue']) / r['cycles']:>8.3f} "
              f"{max(r['tensor'], r['issue']) / r['cycles']:>8.3f} {r['warps']:>9.2f} "
              f"{r['clock'] / 1e9:>5.2f}")

    groups = sorted({(r["family"], r["d"], r["tile"]) for r in rows},
                    key=lambda g: (["flash2", "variant", "qk", "pv"].index(g[0]), g[1], g[2]))
    print("\nsum/meas by kernel and tiling (mean, min, max over its launches and both SM settings)")
    for fam, d, tile in groups:
        x = [(r["tensor"] + r["issue"]) / r["cycles"] for r in rows
             if (r["family"], r["d"], r["tile"]) == (fam, d, tile)]
        print(f"  {fam:8} d = {d:3} {tile[0]:3}x{tile[1]:<3} s{tile[2]}: {np.mean(x):.3f} "
              f"({min(x):.3f} .. {max(x):.3f}), {len(x)} launches")

    print("\nwarp instructions per launch = a * tiles + m * masked tiles + c * CTAs (whole chip;")
    print("the counts do not depend on the SM setting). Residual: largest |count - fit|.")
    terms_lines = []
    for fam, d, tile in groups:
        sel = [r for r in rows if (r["family"], r["d"], r["tile"]) == (fam, d, tile)
               and r["setting"] == "none"]
        other = {r["case"]: r["inst"] for r in rows if r["setting"] == "16"}
        same = all(other[r["case"]] == r["inst"] for r in sel)
        a = np.array([structure(*r["case"]) for r in sel], dtype=float)
        y = np.array([r["inst"] for r in sel])
        cols = [0, 1, 2] if a[:, 1].any() else [0, 2]
        if fam == "qk":
            cols = [0]  # one CTA per tile: the two terms are one
        coef, *_ = np.linalg.lstsq(a[:, cols], y, rcond=None)
        resid = np.max(np.abs(a[:, cols] @ coef - y))
        names = {0: "per tile", 1: "per masked tile", 2: "per CTA"}
        terms = ", ".join(f"{coef[k]:,.2f} {names[c]}" for k, c in enumerate(cols))
        hm = [r["hmma"] / structure(*r["case"])[0] for r in sel]
        print(f"  {fam:8} d = {d:3} {tile[0]:3}x{tile[1]:<3} s{tile[2]}: {terms}; residual "
              f"{resid:,.1f} of {len(sel)} launches; HMMA per tile {min(hm):,.1f}..{max(hm):,.1f}; "
              f"same on 16 SMs: {same}")
        if fam == "variant":  # the unmasked launches alone, then the masked tiles' extra
            plain = [r for r in sel if not r["causal"]]
            a = np.array([structure(*r["case"]) for r in plain], dtype=float)[:, [0, 2]]
            (per_tile, per_cta), *_ = np.linalg.lstsq(a, [r["inst"] for r in plain], rcond=None)
            extra = [(r["inst"] - per_tile * structure(*r["case"])[0]
                      - per_cta * structure(*r["case"])[2]) / structure(*r["case"])[1]
                     for r in sel if r["causal"]]
            print(f"    unmasked launches alone: {per_tile:,.2f} per tile, {per_cta:,.2f} per CTA; "
                  f"each masked tile's extra {min(extra):,.3f}..{max(extra):,.3f}")
            coef = [per_tile, round(max(extra)), per_cta]
            cols = [0, 1, 2]
        full = {0: 0.0, 1: 0.0, 2: 0.0}
        full.update({c: coef[k] for k, c in enumerate(cols)})
        kernel = {"flash2": "flash2_fwd", "variant": "flash2_fwd_variant"}.get(fam, fam)
        # qk: one tile per CTA, written as the CTA's term; pv: per 64-key chunk (its loop's step)
        step, cta = (0.0, full[0]) if fam == "qk" else (full[0], full[2])
        if fam == "pv":
            step /= 2
        terms_lines.append(f"terms {kernel} {d} {tile[0]} {64 if fam == 'pv' else tile[1]} "
                           f"{tile[2]} {step:.0f} {full[1]:.0f} {cta:.0f}")
    print("\nthe terms as models/compiled_instructions.cc holds them (kernel, head dim, its two "
          "block\nparameters, stages; warp instructions per step, per masked step, per CTA):")
    print("\n".join(terms_lines))


if __name__ == "__main__":
    main()
