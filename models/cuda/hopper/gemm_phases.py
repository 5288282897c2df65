#!/usr/bin/env python3
"""Where CTA 0 of the persistent wgmma GEMM spends its time, on the chip and in the model.

Reads gemm_phases.csv (`wgmma_gemm --phases`, run_gemm.sh step `phases`): per launch, CTA 0's
%globaltimer stamps after its thread 0 entered (start of the consumers' work, first TMA load
issued, first stage landed, first tile's wgmmas done, first and last tile's store issued, end
after the last store completed). Simulates the same launch (`memwall run --gemm wgmma
--flush-l2 --timeline`: the gemm workload, or naive's qk or pv kernel) and reads the same points
of CTA 0 from the timeline, measured from the CTA's start: the end of its first wait, the end of
its first tile's tensor ops, its first and last store, its end. Prints one row per launch, the
chip's cold rows as the median of their repeats.

Usage: python3 models/cuda/hopper/gemm_phases.py PHASES_CSV [--config h200-calibrated]
           [--memwall build/memwall]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

from compare_gemm import case_args  # the same launch as the timing comparison simulates

STAMPS = ["first_full_ns", "first_main_ns", "first_store_ns", "last_store_ns", "end_ns"]


def model_phases(memwall, config, row):
    """(kernel time, CTA 0's stamps in ns from its start) of the simulated launch."""
    kernel = {"gemm": "gemm", "naive-qk": "qk", "naive-pv": "pv"}[row["shape"]]
    args = case_args(row)[1]
    with tempfile.TemporaryDirectory() as tmp:
        tl, rep = os.path.join(tmp, "t.json"), os.path.join(tmp, "r.json")
        subprocess.run([memwall, "run", "--config", config, *args, "--gemm", "wgmma", "--flush-l2",
                        "--timeline", tl, "--json", rep], check=True, stdout=subprocess.DEVNULL)
        events = json.load(open(tl))["traceEvents"]
        report = json.load(open(rep))
    kernel_us = next(e["dur"] for e in events if e.get("pid") == 0 and e.get("name") == kernel
                     and e.get("ph") == "X")
    cta = next(e for e in events if e.get("name") == kernel and e.get("args", {}).get("cta") == 0)
    t0, t1 = cta["ts"], cta["ts"] + cta["dur"]
    ops = sorted((e for e in events if e.get("pid") == cta["pid"] and e.get("tid") == cta["tid"]
                  and e.get("ph") != "M" and "cta" not in e.get("args", {}) and t0 <= e["ts"] <= t1),
                 key=lambda e: e["ts"])
    k_tiles = -(-int(row["k"]) // 64)
    first_wait = next(e for e in ops if e["name"] == "wait")
    tensors = [e for e in ops if e["name"] == "tensor"]
    stores = [e for e in ops if e["name"] == "store"]
    first_main = tensors[k_tiles - 1]["ts"] + tensors[k_tiles - 1]["dur"]
    stamps = [first_wait["ts"] + first_wait["dur"], first_main, stores[0]["ts"], stores[-1]["ts"], t1]
    del report
    return kernel_us * 1e3, [(s - t0) * 1e3 for s in stamps]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("phases")
    ap.add_argument("--config", default="h200-calibrated")
    ap.add_argument("--memwall", default="build/memwall")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.phases)))
    groups = {}
    for r in rows:
        groups.setdefault((r["mode"], r["shape"], r["batch"], r["m"], r["n"], r["k"], r["kernel"]),
                          []).append(r)
    print(f"chip: {a.phases}; model: {a.config}. Times in ns after CTA 0 started (chip: its thread 0"
          " entered), chip / model; kernel: chip event time (cold: one launch, median of the"
          " repeats) / model")
    print("| mode | shape | batch,m,n,k | kernel | CTA 0 tiles | kernel ns | first stage landed |"
          " first tile's wgmmas done | first store issued | last store issued | end |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key, rs in groups.items():
        mode, shape, b, m, n, k, kernel = key
        chip = {c: statistics.median(float(r[c]) for r in rs) for c in STAMPS + ["ms"]}
        kernel_ns, model = model_phases(a.memwall, a.config, rs[0])
        cells = [f"{chip[c]:.0f} / {v:.0f}" for c, v in zip(STAMPS, model)]
        print(f"| {mode} | {shape} | {b},{m},{n},{k} | {kernel} | {rs[0]['cta0_tiles']} |"
              f" {chip['ms'] * 1e6:.0f} / {kernel_ns:.0f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
