#!/usr/bin/env python3
"""The mma.sync kernels' cycles against their tensor-pipe and issue-slot bounds, and their warp
instructions as exact terms of their structure, from data already committed:

- traces/measured/h200-pipe-probe/pipes.csv: naive qk and pv (d = 64) and flash2 (d = 64,
  128 x 128 tiles; d = 128, 128 x 64) under ncu on all 132 SMs and in a green context of 16;
- traces/measured/h200-flash2-bwd.csv: FlashAttention-2's backward kernel (ncu time, SM clock,
  smsp__inst_executed), 28 cases;
- traces/measured/h200-naive-bwd.csv: the unfused backward's products, 10 cases.

Bounds, in SM cycles: tensor = HMMA instructions x 4096 FLOP / 2660 FLOP per cycle per SM (the
measured mma.sync ceiling, traces/measured/h200-ubench/pipes.csv); issue = warp instructions
issued / 4 per cycle (four schedulers). "sum" is their sum over the cycles the kernel took,
"max" the larger one's. Needs numpy: /usr/bin/python3 traces/measured/h200-issue-probe/law.py
"""
import csv
import os

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MMA_FLOP_PER_CYCLE, HMMA_FLOP, ISSUE_PER_CYCLE = 2660.0, 4096.0, 4.0


def pipe_probe():
    launches = {}
    for row in csv.reader(open(os.path.join(ROOT, "h200-pipe-probe", "pipes.csv"))):
        if len(row) < 16 or row[1] == "ID":
            continue
        rec = launches.setdefault((row[0], int(row[1])), {"kernel": row[5], "grid": row[9]})
        try:
            rec[row[13]] = float(row[15].replace(",", ""))
        except ValueError:
            pass
    print("1. pipe-probe launches (ncu; cycles = sm__cycles_elapsed.avg)")
    print(f"{'SMs':>4} {'kernel':32} {'CTAs':>7} {'inst/CTA':>10} {'cycles':>11} {'tensor':>10} "
          f"{'issue':>10} {'sum/cyc':>8} {'max/cyc':>8}")
    for (setting, _), m in sorted(launches.items(), key=lambda kv: (kv[0][0] != "none", kv[0][1])):
        hmma = m["sm__inst_executed_pipe_tensor_op_hmma.sum"]
        if hmma < 1e6:  # softmax: no MMAs
            continue
        sms = 132 if setting == "none" else int(setting)
        name = m["kernel"].split("::")[-1].split("(")[0]
        ctas = int(m["grid"].strip("()").split(",")[0])
        tensor = hmma * HMMA_FLOP / MMA_FLOP_PER_CYCLE / sms
        issue = m["smsp__issue_active.sum"] / (ISSUE_PER_CYCLE * sms)
        cyc = m["sm__cycles_elapsed.avg"]
        print(f"{sms:>4} {name:32} {ctas:>7} {m['smsp__inst_executed.sum'] / ctas:>10.1f} "
              f"{cyc:>11,.0f} {tensor:>10,.0f} {issue:>10,.0f} {(tensor + issue) / cyc:>8.3f} "
              f"{max(tensor, issue) / cyc:>8.3f}")
    naive_pv_terms(launches)


def naive_pv_terms(launches):
    """naive pv's warp instructions per CTA = a x 64-key chunks + b (the same at every N)."""
    # The pipe probe's naive cases in launch order (its README): B·H = 64 at N = 1024 and 4096,
    # B·H = 8 at N = 16384; a CTA holds 128 rows of one head.
    shapes = iter([(64, 1024), (64, 4096), (8, 16384)])
    pts = []
    for (setting, _), m in sorted(launches.items()):
        if setting == "none" and "naive_pv_kernel<64," in m["kernel"]:
            ctas = int(m["grid"].strip("()").split(",")[0])
            bh, n = next(shapes)
            assert ctas == bh * n // 128, (ctas, bh, n)
            pts.append(([n // 64, 1], m["smsp__inst_executed.sum"] / ctas))
    a = np.array([p for p, _ in pts], float)
    y = np.array([v for _, v in pts])
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    print(f"\n   naive pv d = 64 per CTA: {coef[0]:,.1f} per 64-key chunk + {coef[1]:,.1f}; largest "
          f"residual {np.max(np.abs(a @ coef - y)):.1f} over {len(y)} launches")


def flash2_bwd():
    rows = [r for r in csv.DictReader(open(os.path.join(ROOT, "h200-flash2-bwd.csv")))
            if r["kernel"] == "flash2_bwd"]
    print("\n2. flash2_bwd (ncu time x SM clock; HMMA from the FLOPs: 5 products per pair)")
    print(f"{'B':>2} {'H':>3} {'Hkv':>3} {'N':>6} {'d':>4} {'c':>2} {'CTAs/SM':>8} {'sum/cyc':>8} "
          f"{'max/cyc':>8}")
    fits = {}
    for r in rows:
        b, h, n, d, c = (int(r[k]) for k in ("batch", "heads", "seq", "head_dim", "causal"))
        bq, bkv = int(r["block_q"]), int(r["block_kv"])
        kv_blocks, q_blocks = -(-n // bkv), -(-n // bq)
        pairs = masked = 0
        for j in range(kv_blocks):
            c0 = j * bkv
            for i in range(c0 // bq if c else 0, q_blocks):
                pairs += 1
                masked += bool(c and c0 + bkv - 1 > i * bq)
        ctas = b * h * kv_blocks
        flops = 2 * 5 * bq * bkv * d * pairs * b * h
        cyc = float(r["ncu_time_s"]) * float(r["sm_hz"])
        tensor = flops / MMA_FLOP_PER_CYCLE / 132
        issue = float(r["inst_executed"]) / (ISSUE_PER_CYCLE * 132)
        print(f"{b:>2} {h:>3} {int(r['kv_heads']):>3} {n:>6} {d:>4} {c:>2} {ctas / 132:>8.1f} "
              f"{(tensor + issue) / cyc:>8.3f} {max(tensor, issue) / cyc:>8.3f}")
        fits.setdefault((d, c), []).append(([pairs * b * h, ctas], float(r["inst_executed"])))
    print("\n3. flash2_bwd warp instructions = a x (K/V block, Q block) pairs + b x CTAs")
    for (d, c), pts in sorted(fits.items()):
        a = np.array([p for p, _ in pts], float)
        y = np.array([v for _, v in pts])
        coef, *_ = np.linalg.lstsq(a, y, rcond=None)
        extra = " (b holds the masked pairs' extra too)" if c else ""
        print(f"  d = {d:3}, causal {c}: a = {coef[0]:,.1f}, b = {coef[1]:,.1f}{extra}; largest "
              f"residual "
              f"{np.max(np.abs(a @ coef - y)):.1f} over {len(y)} cases")
        # Its tiles: 128 x 128 at d = 64, 64 x 128 at d = 128 (models/cuda/flash2_backward.cu).
        TERMS.append(f"terms flash2_bwd{'_causal' if c else ''} {d} {128 if d == 64 else 64} 128 0 "
                     f"{coef[0]:.0f} 0 {coef[1]:.0f}")


def naive_bwd():
    rows = [r for r in csv.DictReader(open(os.path.join(ROOT, "h200-naive-bwd.csv")))
            if r["kernel"] in ("dv", "dp", "dq", "dk")]
    print("\n4. naive-bwd products: warp instructions = a x k-chunks of 64 + b x CTAs "
          "(dp, naive's qk kernel: per CTA)")
    for d in (64, 128):
        for k in ("dv", "dp", "dq", "dk"):
            a, y = [], []
            for r in rows:
                if r["kernel"] != k or int(r["head_dim"]) != d:
                    continue
                bh, n = int(r["batch"]) * int(r["heads"]), int(r["seq"])
                bm, bn = int(r["block_q"]), int(r["block_kv"])
                if k == "dp":
                    a.append([bh * -(-n // bm) * -(-n // bn), 0])
                else:
                    ctas = bh * -(-n // bm)
                    a.append([ctas * -(-n // 64), ctas])
                y.append(float(r["inst_executed"]))
            a, y = np.array(a, float), np.array(y)
            cols = [0] if k == "dp" else [0, 1]
            coef, *_ = np.linalg.lstsq(a[:, cols], y, rcond=None)
            terms = (f"{coef[0]:,.1f} per CTA" if k == "dp" else
                     f"a = {coef[0]:,.1f}, b = {coef[1]:,.1f}")
            print(f"  d = {d:3} {k}: {terms}; largest residual "
                  f"{np.max(np.abs(a[:, cols] @ coef - y)):.1f} over {len(y)} cases")
            if k in ("dv", "dq"):  # dk is dv's kernel; dp is naive's qk kernel (analyze.py)
                TERMS.append(f"terms naive_bwd_{k} {d} 128 64 0 {coef[0]:.0f} 0 {coef[1]:.0f}")


TERMS = []

if __name__ == "__main__":
    pipe_probe()
    flash2_bwd()
    naive_bwd()
    print("\nthe terms as models/compiled_instructions.cc holds them (kernel, head dim, its two "
          "block\nparameters, stages; warp instructions per step, per masked step, per CTA):")
    print("\n".join(TERMS))
