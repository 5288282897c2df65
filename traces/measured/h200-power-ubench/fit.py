#!/usr/bin/env python3
"""The H200 power model's parameters from power.cu's runs (models/cuda/ubench/power.sh).

Board power P at the SM clock f, with every pipe's work rate r_k (units per second) and the
energy e_k of one unit at the maximum clock's voltage:

    P(f) = static + (f / f_max) ** voltage_exponent * sum_k e_k * r_k

static: the 'sleep' rows (SMs resident, no pipe busy) at the maximum clock.
e_k: the slope of power against the work rate over the rows that ran at the maximum clock
(no power cap), one mode at a time: ffma -> fp32 (pJ/FLOP), ex2 -> sfu (pJ/op, its FMUL
included), wgmma -> tensor (pJ/FLOP; mma.sync printed beside it), smem -> shared memory
(pJ/byte), l2 -> SM<->L2 (pJ/byte), hbm -> DRAM (pJ/byte beyond the L2's: hbm's bytes also
cross the L2).
voltage_exponent: from the rows the power cap slowed (event reason 0x4): their clock relative
to the mode's uncapped clock s, and v = (P - static) / sum_k e_k r_k, v = s ** exponent;
least squares of ln v = exponent * ln s over those rows (each printed).
limit: the mean power of those rows, the sustained power the limiter holds (the board's limit
is 700 W; the limiter keeps short-window peaks under it, so the sustained mean is lower).

Usage: fit.py [DIR ...]   (default: run1 repeat run2 beside this file)
"""
import csv
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
dirs = sys.argv[1:] or [os.path.join(here, d) for d in ("run1", "repeat", "run2")]
rows = []
for d in dirs:
    with open(os.path.join(d, "power.csv")) as f:
        rows += list(csv.DictReader(f))

def capped(r):
    return int(r["event_reasons"], 16) & 0x4 != 0

def slope(mode):
    pts = [(float(r["work_per_s"]), float(r["power_w"])) for r in rows
           if r["mode"] == mode and not capped(r)]
    n = len(pts)
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    b = sxy / sxx
    resid = max(abs(y - (my + b * (x - mx))) for x, y in pts)
    return b, my - b * mx, n, resid

static = sum(float(r["power_w"]) for r in rows if r["mode"] == "sleep") / \
    sum(1 for r in rows if r["mode"] == "sleep")
print(f"static: {static:.1f} W (mean of the sleep rows; idle board: "
      f"{[float(r['power_w']) for r in rows if r['mode'] == 'idle']} W)")
energy = {}
for mode, key, unit in (("ffma", "fp32", "pJ/FLOP"), ("ex2", "sfu", "pJ/op"),
                        ("wgmma", "tensor", "pJ/FLOP"), ("mma", "mma.sync", "pJ/FLOP"),
                        ("smem", "smem", "pJ/B"), ("l2", "l2", "pJ/B"), ("hbm", "hbm", "pJ/B")):
    b, a, n, resid = slope(mode)
    energy[key] = b * 1e12
    print(f"{key:9s} {b * 1e12:8.3f} {unit:8s} intercept {a:6.1f} W, {n} rows, "
          f"worst residual {resid:5.1f} W")
energy["dram"] = energy["hbm"] - energy["l2"]
print(f"dram      {energy['dram']:8.3f} pJ/B     (hbm less l2)")

# The capped rows: the clock relative to the mode's uncapped clock, and the voltage factor.
unit_key = {"wgmma": "tensor", "mma": "mma.sync", "ffma": "fp32"}
exponents = []
lsq = [0.0, 0.0]
limits = []
for r in rows:
    if not capped(r) or r["mode"] not in unit_key:
        continue
    free = [float(q["sm_mhz"]) for q in rows if q["mode"] == r["mode"] and not capped(q)]
    s = float(r["sm_mhz"]) / max(free)
    dyn = energy[unit_key[r["mode"]]] * 1e-12 * float(r["work_per_s"])
    v = (float(r["power_w"]) - static) / dyn
    e = math.log(v) / math.log(s)
    exponents.append(e)
    lsq[0] += math.log(v) * math.log(s)
    lsq[1] += math.log(s) ** 2
    limits.append(float(r["power_w"]))
    print(f"capped {r['mode']:6s} {r['sms']:>3s} SMs: clock {float(r['sm_mhz']):6.1f} MHz "
          f"(s = {s:.4f}), {float(r['power_w']):5.1f} W, v = {v:.4f}, exponent {e:.2f}")
print(f"voltage_exponent: {lsq[0] / lsq[1]:.2f} (least squares over {len(exponents)} rows; "
      f"their mean {sum(exponents) / len(exponents):.2f})")
print(f"limit: {sum(limits) / len(limits):.1f} W (mean of the same rows; "
      f"{min(limits):.1f}-{max(limits):.1f})")
