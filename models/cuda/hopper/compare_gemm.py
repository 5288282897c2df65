#!/usr/bin/env python3
"""Simulated against measured times of the Hopper-native GEMM kernel (models/cuda/hopper).

Runs `memwall run --gemm wgmma` for every row of gemm.csv (the 8192^3 GEMM as the gemm workload
with its tile; naive-qk and naive-pv as naive attention with block_q x block_kv = the qk tile,
pv's tile block_q x d) on each config, and prints one table per config: measured ms (CUDA
events, median), simulated ms, error, and the model's SM->L2 bytes. pv rows come from the runs
whose block_q is 128 (the measured pv kernels are 128 x d). The config's tensor efficiency is
whatever the config says; nothing is fitted here.

Usage: python3 models/cuda/hopper/compare_gemm.py --memwall build/memwall \\
           --measured traces/measured/h200-hopper-gemm/gemm.csv [--config h200 ...] [-j 2] [--csv OUT]
       python3 models/cuda/hopper/compare_gemm.py --summarize OUT.csv [OUT.csv ...]
           (no simulation: per config, SM count and kernel, MAPE and worst error of written rows)
"""
import argparse
import concurrent.futures
import csv
import json
import os
import re
import subprocess
import sys
import tempfile


def tile_of(kernel):
    m = re.match(r"wgmma_(\d+)x(\d+)x(\d+)_(tn|nn)$", kernel)
    if not m:
        raise SystemExit(f"unknown kernel name {kernel!r}")
    return int(m.group(1)), int(m.group(2))


def case_args(r):
    """(key, `memwall run` arguments) of the simulation of gemm.csv row `r` (also the rows of
    wgmma_gemm --phases): the gemm workload, or the naive run whose qk or pv kernel it is, on the
    row's tile. Rows of one naive shape and tile share a key: one run gives qk and pv."""
    bm, bn = tile_of(r["kernel"])
    batch, m, n, k = (int(r[c]) for c in ("batch", "m", "n", "k"))
    if r["shape"] == "gemm":
        return ("gemm", m, n, k, bm, bn), [
            "--workload", "gemm", "--m", str(m), "--n", str(n), "--k", str(k),
            "--tile-m", str(bm), "--tile-n", str(bn)]
    if r["shape"] == "naive-qk":
        return ("naive", batch, m, k, bm, bn), [
            "--workload", "naive", "--batch", str(batch), "--heads", "1", "--seq", str(m),
            "--head-dim", str(k), "--block-q", str(bm), "--block-kv", str(bn)]
    # naive-pv: m = seq, n = d, k = seq; its tile is 128 x d
    return ("naive", batch, m, n, bm, 128), [
        "--workload", "naive", "--batch", str(batch), "--heads", "1", "--seq", str(m),
        "--head-dim", str(n), "--block-q", str(bm), "--block-kv", "128"]


def run_case(memwall, config, args):
    """`memwall run --config CONFIG ARGS --json`'s report (exits on a failed run)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [memwall, "run", "--config", config, "--json", out, *args]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr}")
        with open(out) as f:
            return json.load(f)


def summarize(paths):
    """Per file, config, SM count and kernel: MAPE and worst signed error of the time."""
    print("| rows | config | SMs | kernel | n | time MAPE | worst |")
    print("|---|---|---:|---|---:|---:|---:|")
    for path in paths:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        name = os.path.basename(path)
        for config in dict.fromkeys(r["config"] for r in rows):
            for sms in sorted({r["sms"] for r in rows}, key=lambda x: -int(x or 0)):
                for shape in ("gemm", "naive-qk", "naive-pv"):
                    e = [float(r["error"]) for r in rows
                         if r["config"] == config and r["sms"] == sms and r["shape"] == shape]
                    if e:
                        worst = max(e, key=abs)
                        print(f"| {name} | {config} | {sms} | {shape} | {len(e)} "
                              f"| {sum(map(abs, e)) / len(e):.1%} | {worst:+.1%} |")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memwall", default="build/memwall")
    ap.add_argument("--measured", action="append",
                    help="gemm.csv files (default traces/measured/h200-hopper-gemm/gemm.csv); a row's "
                         "sms column, where not the config's, becomes --set sm.count=N")
    ap.add_argument("--config", action="append", help="config(s) to simulate (default h200, h200-calibrated)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a config override for every run (memwall run --set)")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--csv", help="write every compared row here")
    ap.add_argument("--summarize", nargs="+", metavar="CSV", help="summarize rows --csv wrote")
    a = ap.parse_args()
    if a.summarize:
        return summarize(a.summarize)
    configs = a.config or ["h200", "h200-calibrated"]
    rows = []
    for path in a.measured or ["traces/measured/h200-hopper-gemm/gemm.csv"]:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))

    # One simulation per (config, workload shape, tile): the naive runs give qk and pv at once.
    jobs = {}
    for r in rows:
        key, args = case_args(r)
        sms = r.get("sms", "")
        if sms:
            key = (*key, int(sms))
            args = [*args, "--set", f"sm.count={sms}"]
        for kv in a.set:
            args = [*args, "--set", kv]
        args = [*args, "--gemm", "wgmma"]
        r["_key"] = key
        for c in configs:
            jobs[(c, key)] = args
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        futures = {pool.submit(run_case, a.memwall, c, args): (c, key) for (c, key), args in jobs.items()}
        for fut in concurrent.futures.as_completed(futures):
            results[futures[fut]] = fut.result()

    out_rows = []
    for c in configs:
        print(f"\n### {c}\n")
        print("| shape | batch | m | n | k | tile | SMs | SM MHz | measured ms | simulated ms | error "
              "| SM->L2 read | SM->L2 write |")
        print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        errs = []
        for r in rows:
            rep = results[(c, r["_key"])]
            kname = {"gemm": "gemm", "naive-qk": "qk", "naive-pv": "pv"}[r["shape"]]
            kern = next(x for x in rep["kernels"] if x["name"] == kname)
            sim_ms = kern["time_s"] * 1e3
            meas_ms = float(r["ms"])
            err = sim_ms / meas_ms - 1
            errs.append(abs(err))
            tile = r["kernel"].removeprefix("wgmma_")
            print(f"| {r['shape']} | {r['batch']} | {r['m']} | {r['n']} | {r['k']} | {tile} "
                  f"| {r.get('sms', '')} | {r.get('sm_mhz', '')} | {meas_ms:.4f} "
                  f"| {sim_ms:.4f} | {err:+.1%} | {kern['l2_read_bytes']} | {kern['l2_write_bytes']} |")
            out_rows.append({"config": c, "shape": r["shape"], "batch": r["batch"], "m": r["m"], "n": r["n"],
                             "k": r["k"], "kernel": r["kernel"], "sms": r.get("sms", ""),
                             "sm_mhz": r.get("sm_mhz", ""), "measured_ms": r["ms"],
                             "simulated_ms": f"{sim_ms:.6f}", "error": f"{err:.4f}",
                             "sim_l2_read_bytes": kern["l2_read_bytes"],
                             "sim_l2_write_bytes": kern["l2_write_bytes"]})
        errs.sort()
        print(f"\n{c}: time MAPE {sum(errs) / len(errs):.1%}, median {errs[len(errs) // 2]:.1%}, "
              f"worst {errs[-1]:.1%} over {len(errs)} kernels")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(out_rows)


if __name__ == "__main__":
    sys.exit(main())
