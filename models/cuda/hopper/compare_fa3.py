#!/usr/bin/env python3
"""Simulated against measured times of the FlashAttention-3-style forward (flash3_attention.cu).

Runs `memwall run --workload flash3` at the shape of every row of the measured CSVs (fa3.csv, and
fa3_sm<N>.csv of the SM-count runs: a row's sms, where not 132, becomes --set sm.count=N) on each
config and prints one table per config: measured ms (CUDA events, median), the SM clock of that
launch, simulated ms and its error, the same simulated at that launch's SM clock (--set sm.clock
and sm.tensor_clock to the measured sm_mhz, with the SM port's and the L2's bandwidths kept at
the config's bytes per second: the power limit lowers the SMs' clock, and B/cycle figures would
otherwise follow it; the config's power limiter off, so that the clock stays the one set), and
the model's SM->L2 bytes. Where the config has a power limiter
(power.limit_watts), the table also gives the clock the simulated tensor work ran at (the mean SM
clock, sm_clock_hz, times sm.tensor_clock / sm.clock) beside the measured one, and the summary
their mean error. Nothing is fitted here.

Usage: python3 models/cuda/hopper/compare_fa3.py [--memwall build/memwall]
           [--measured traces/measured/h200-flash3/fa3.csv ...] [--config h200 ...] [-j 2]
           [--csv OUT]
"""
import argparse
import concurrent.futures
import csv
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_gemm import run_case  # noqa: E402

SHAPE = ["batch", "heads", "kv_heads", "seq", "seq_kv", "head_dim", "causal"]


def memory_rates(memwall, config):
    """--set arguments that pin the SM port's and the L2's bandwidth at `config`'s B/s."""
    shown = subprocess.run([memwall, "config", "show", config], capture_output=True, text=True,
                           check=True).stdout
    out = []
    for key, name in (("xbar.port_bandwidth", "port_bandwidth"), ("l2.bandwidth", "l2_bandwidth")):
        m = re.search(rf"^\s*{name}\s.*\(([0-9.e+]+) B/s\)", shown, re.M)
        if not m:
            raise SystemExit(f"memwall config show {config}: no {name}")
        out += ["--set", f"{key}={float(m.group(1)):.6g} B/s"]
    return out


def tensor_clock_ratio(memwall, config):
    """sm.tensor_clock / sm.clock of `config` (1 without a tensor clock): the clock the tensor
    work of a flash3 launch runs at, over the SM clock the report's sm_clock_hz is in."""
    shown = subprocess.run([memwall, "config", "show", config], capture_output=True, text=True,
                           check=True).stdout
    hz = {}
    for key in ("clock", "tensor_clock"):
        m = re.search(rf"^\s*{key}\s+([0-9.]+) (GHz|MHz|Hz)", shown, re.M)
        hz[key] = float(m.group(1)) * {"GHz": 1e9, "MHz": 1e6, "Hz": 1}[m.group(2)] if m else 0.0
    return hz["tensor_clock"] / hz["clock"] if hz["tensor_clock"] > 0 else 1.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memwall", default="build/memwall")
    ap.add_argument("--measured", action="append",
                    help="fa3.csv-style files (default traces/measured/h200-flash3/fa3.csv)")
    ap.add_argument("--config", action="append",
                    help="config(s) to simulate (default h200, h200-calibrated)")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--csv", help="write every compared row here")
    a = ap.parse_args()
    configs = a.config or ["h200", "h200-calibrated"]
    rows = []
    for path in a.measured or ["traces/measured/h200-flash3/fa3.csv"]:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    pinned = {c: memory_rates(a.memwall, c) for c in configs}
    ratio = {c: tensor_clock_ratio(a.memwall, c) for c in configs}
    jobs = {}
    for r in rows:
        key = tuple(int(r[c]) for c in SHAPE) + (int(r["sms"]),)
        b, h, hkv, n, nkv, d, causal, sms = key
        args = ["--workload", "flash3", "--batch", str(b), "--heads", str(h), "--kv-heads",
                str(hkv), "--seq", str(n), "--seq-kv", str(nkv), "--head-dim", str(d)]
        if causal:
            args.append("--causal")
        if sms != 132:
            args += ["--set", f"sm.count={sms}"]
        mhz = f"{r['sm_mhz']} MHz"
        r["_key"] = key
        r["_clocked"] = key + (r["sm_mhz"],)
        for c in configs:
            jobs[(c, key)] = args
            # At the launch's clock: the power limiter off, so that the clock stays the one set.
            jobs[(c, r["_clocked"])] = [*args, "--set", f"sm.clock={mhz}", "--set",
                                        f"sm.tensor_clock={mhz}", "--set", "power.limit_watts=0",
                                        *pinned[c]]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        futures = {pool.submit(run_case, a.memwall, job[0], args): job
                   for job, args in jobs.items()}
        for fut in concurrent.futures.as_completed(futures):
            results[futures[fut]] = fut.result()
    out_rows = []
    for c in configs:
        print(f"\n### {c}\n")
        print("| B | H | Hkv | N | d | causal | SMs | SM MHz | simulated MHz | measured ms "
              "| simulated ms | error | at its clock ms | error | SM->L2 read | SM->L2 write |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        errs, clocked_errs, clock_errs = [], [], []
        timed = []  # (row, simulated ms, measured ms)
        for r in rows:
            kern = results[(c, r["_key"])]["kernels"][0]
            clocked_ms = results[(c, r["_clocked"])]["kernels"][0]["time_s"] * 1e3
            sim_ms, meas_ms = kern["time_s"] * 1e3, float(r["ms"])
            err, clocked_err = sim_ms / meas_ms - 1, clocked_ms / meas_ms - 1
            errs.append(abs(err))
            clocked_errs.append(abs(clocked_err))
            timed.append((r, sim_ms, meas_ms))
            sim_mhz = kern.get("sm_clock_hz", 0) * ratio[c] / 1e6
            clock_errs.append(sim_mhz / float(r["sm_mhz"]) - 1)
            print(f"| {r['batch']} | {r['heads']} | {r['kv_heads']} | {r['seq']} | {r['head_dim']} "
                  f"| {r['causal']} | {r['sms']} | {r['sm_mhz']} | {sim_mhz:.0f} | {meas_ms:.4f} "
                  f"| {sim_ms:.4f} "
                  f"| {err:+.1%} | {clocked_ms:.4f} | {clocked_err:+.1%} | {kern['l2_read_bytes']} "
                  f"| {kern['l2_write_bytes']} |")
            out_rows.append({"config": c, **{k: r[k] for k in SHAPE}, "sms": r["sms"],
                             "sm_mhz": r["sm_mhz"], "simulated_mhz": f"{sim_mhz:.1f}",
                             "measured_ms": r["ms"],
                             "simulated_ms": f"{sim_ms:.6f}", "error": f"{err:.4f}",
                             "simulated_ms_at_clock": f"{clocked_ms:.6f}",
                             "error_at_clock": f"{clocked_err:.4f}",
                             "sim_l2_read_bytes": kern["l2_read_bytes"],
                             "sim_l2_write_bytes": kern["l2_write_bytes"]})
        for what, e in (("", errs), (" at each launch's clock", clocked_errs)):
            e.sort()
            print(f"\n{c}{what}: time MAPE {sum(e) / len(e):.1%}, median {e[len(e) // 2]:.1%}, "
                  f"worst {e[-1]:.1%} over {len(e)} kernels")
        worst = max(clock_errs, key=abs)
        print(f"\n{c}: simulated SM clock against each launch's: mean error "
              f"{sum(clock_errs) / len(clock_errs):+.1%}, mean absolute "
              f"{sum(map(abs, clock_errs)) / len(clock_errs):.1%}, worst {worst:+.1%}")
        # The SM-count experiment: each shape's slowdown from its last 132-SM row (the green-
        # context run's reference, whose file comes after fa3.csv), simulated over measured.
        reference = {r["_key"][:-1]: (sim, meas) for r, sim, meas in timed if r["_key"][-1] == 132}
        slowdown_errs = {}
        for r, sim, meas in timed:
            base = reference.get(r["_key"][:-1])
            if r["_key"][-1] != 132 and base:
                slowdown_errs.setdefault(r["_key"][-1], []).append(
                    abs((sim / base[0]) / (meas / base[1]) - 1))
        if slowdown_errs:
            print(f"\n{c}: slowdown from 132 SMs, |simulated / measured - 1| on average: " +
                  ", ".join(f"{sms} SMs {sum(e) / len(e):.1%} ({len(e)} shapes)"
                            for sms, e in sorted(slowdown_errs.items(), reverse=True)))
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(out_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
