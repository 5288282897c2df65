#!/usr/bin/env python3
"""The flash2 variants measured on the H200 (h200-variants.csv) against the simulator.

For every measured case it runs `memwall run` on the calibrated config with the L2 flushed before
each kernel (as Nsight Compute measured them, and as `memwall calibrate` compares), then prints a
Markdown table per case: simulated and ncu time, DRAM bytes simulated and measured, and the
measured time over PyTorch's flash backend; then the errors per kernel and per family, and
whether the simulated SM->L2 bytes equal the SM-side counters (xbar_*_bytes) in every kernel.
Standard library only; the output does not depend on -j.

Usage (from the repository root, after building memwall):
  python3 traces/measured/variants_table.py [--memwall build/memwall]
      [--config configs/calibrated/h200.yaml] [--measured traces/measured/h200-variants.csv] [-j N]
      [--csv OUT]
--csv writes every kernel's simulated and measured time and DRAM bytes, in the columns of
`memwall validate --csv` (docs/plots/plot.py validate draws it).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile

PARAMS = ["batch", "heads", "kv_heads", "seq", "seq_kv", "head_dim", "causal", "splits",
          "block_q", "block_kv", "stages"]


def read_cases(path: str) -> list[dict]:
    """The cases of the CSV in file order: params, kernels (name -> row) and the total row."""
    cases: dict[tuple, dict] = {}
    with open(path, newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            key = tuple(row[p] for p in PARAMS)
            case = cases.setdefault(key, {"params": {p: int(row[p]) for p in PARAMS},
                                          "kernels": {}, "total": None, "line": line})
            if row["kernel"] == "total":
                case["total"] = row
            else:
                case["kernels"][row["kernel"]] = row
    return list(cases.values())


def family(p: dict) -> str:
    if p["causal"]:
        return "causal prefill"
    if p["seq"] > 1:
        return "GQA prefill"
    return "decode, split" if p["splits"] > 1 else "decode, unsplit"


def label(p: dict) -> str:
    return (f"flash2 B={p['batch']} H={p['heads']} Hkv={p['kv_heads']} Nq={p['seq']} "
            f"Nkv={p['seq_kv']} d={p['head_dim']} causal={p['causal']} S={p['splits']}")


def simulate(memwall: str, config: str, p: dict, tmp: str) -> dict:
    """memwall run's JSON for the case."""
    name = "_".join(str(p[k]) for k in PARAMS)
    out = os.path.join(tmp, name + ".json")
    cmd = [memwall, "run", "--config", config, "--flush-l2", "--workload",
           "flash2", "--json", out]
    for k in PARAMS:
        if k == "causal":
            cmd += ["--causal"] if p[k] else []
        else:
            cmd += ["--" + k.replace("_", "-"), str(p[k])]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def err(sim: float, meas: float) -> float:
    return sim / meas - 1.0


def pct(x: float) -> str:
    return f"{x * 100:+.1f}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memwall", default="build/memwall")
    ap.add_argument("--config", default="configs/calibrated/h200.yaml")
    ap.add_argument("--measured", default="traces/measured/h200-variants.csv")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--csv", help="write every kernel's row here (memwall validate's columns)")
    args = ap.parse_args()
    if args.csv and os.path.abspath(args.csv) == os.path.abspath(args.measured):
        sys.exit(f"variants_table.py: --csv {args.csv} is the measured input")

    cases = read_cases(args.measured)
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(lambda c: simulate(args.memwall, args.config, c["params"], tmp), cases))

    print(f"{len(cases)} cases of {args.measured} on {args.config} (L2 flushed before each kernel); "
          "time: simulated vs ncu (gpu__time_duration), DRAM: read + write, MB = 10^6 bytes\n")
    print("| B | H | Hkv | Nq | Nkv | d | causal | S | CTAs | ncu (ms) | sim (ms) | time err "
          "| DRAM meas (MB) | DRAM sim (MB) | DRAM err | meas / torch | sim / torch |")
    print("|" + "---|" * 17)
    kernel_rows = []  # (family, kernel, time error, DRAM error or None)
    csv_rows = []  # memwall validate's columns, one per kernel
    case_rows = []
    bytes_exact = 0
    bytes_rows = 0
    mismatches = []
    for case, run in zip(cases, runs):
        p = case["params"]
        sim_kernels = {k["name"]: k for k in run["kernels"]}
        sim_t = meas_t = sim_d = meas_d = 0.0
        for name, row in case["kernels"].items():
            k = sim_kernels[name]
            kt, mt = k["time_s"], float(row["ncu_time_s"])
            kd = k["dram_read_bytes"] + k["dram_write_bytes"]
            md = float(row["dram_read_bytes"]) + float(row["dram_write_bytes"])
            sim_t, meas_t, sim_d, meas_d = sim_t + kt, meas_t + mt, sim_d + kd, meas_d + md
            kernel_rows.append((family(p), name, err(kt, mt), err(kd, md) if md > 0 else None))
            csv_rows.append({
                "experiment": "variants", "measured": args.measured, "config": args.config,
                "case": label(p), "family": "split-KV combine" if name == "flash2_combine"
                else family(p), "kernel": name, "setting": "ncu, L2 flushed before each kernel",
                "line": case["line"], "meas_time_s": mt, "sim_time_s": kt,
                "time_error": err(kt, mt), "meas_dram_bytes": int(md), "sim_dram_bytes": kd})
            bytes_rows += 1
            if (k["l2_read_bytes"] == int(row["xbar_read_bytes"])
                    and k["l2_write_bytes"] == int(row["xbar_write_bytes"])):
                bytes_exact += 1
            else:
                mismatches.append(f"line {case['line']} {name}: sim {k['l2_read_bytes']} / "
                                  f"{k['l2_write_bytes']}, xbar {row['xbar_read_bytes']} / "
                                  f"{row['xbar_write_bytes']}")
        torch = float(case["total"]["torch_flash_time_s"])
        event = float(case["total"]["time_s"])
        te, de = err(sim_t, meas_t), err(sim_d, meas_d)
        case_rows.append((family(p), te, de))
        ctas = sim_kernels["flash2_fwd"]["grid_ctas"]
        print(f"| {p['batch']} | {p['heads']} | {p['kv_heads']} | {p['seq']} | {p['seq_kv']} "
              f"| {p['head_dim']} | {p['causal']} | {p['splits']} | {ctas} | {meas_t * 1e3:.4f} "
              f"| {sim_t * 1e3:.4f} | {pct(te)} | {meas_d / 1e6:.2f} | {sim_d / 1e6:.2f} "
              f"| {pct(de)} | {event / torch:.2f} | {sim_t / torch:.2f} |")

    print("\nSplit cases kernel by kernel (time in us, ncu / simulated; combine CTAs = B·Hkv·⌈rows/(512/d)⌉"
          " after decode packing):\n")
    print("| B | H | Hkv | Nkv | S | fwd CTAs | fwd ncu | fwd sim | fwd err | combine CTAs "
          "| combine ncu | combine sim | combine err |")
    print("|" + "---|" * 13)
    for case, run in zip(cases, runs):
        p = case["params"]
        if p["splits"] == 1:
            continue
        cells = []
        for name in ["flash2_fwd", "flash2_combine"]:
            k = next(k for k in run["kernels"] if k["name"] == name)
            mt = float(case["kernels"][name]["ncu_time_s"])
            cells.append(f"{k['grid_ctas']} | {mt * 1e6:.1f} | {k['time_s'] * 1e6:.1f} "
                         f"| {pct(err(k['time_s'], mt))}")
        print(f"| {p['batch']} | {p['heads']} | {p['kv_heads']} | {p['seq_kv']} | {p['splits']} "
              f"| {cells[0]} | {cells[1]} |")

    def summary(label: str, times: list[float], drams: list[float]) -> str:
        t = [abs(x) for x in times]
        d = [abs(x) for x in drams]
        return (f"| {label} | {len(t)} | {sum(t) / len(t) * 100:.1f}% | {max(t) * 100:.1f}% "
                f"| {sum(d) / len(d) * 100:.2f}% | {max(d) * 100:.2f}% |")

    print("\nErrors per kernel (|sim / meas - 1|; DRAM over kernels with measured DRAM bytes > 0) "
          "and per case (totals):\n")
    print("| rows | n | time MAPE | time worst | DRAM MAPE | DRAM worst |")
    print("|---|---|---|---|---|---|")
    families = ["causal prefill", "GQA prefill", "decode, unsplit", "decode, split"]
    for fam in families:
        rows = [r for r in kernel_rows if r[0] == fam]
        print(summary(f"{fam}: kernels", [r[2] for r in rows], [r[3] for r in rows if r[3] is not None]))
    for kernel in ["flash2_fwd", "flash2_combine"]:
        rows = [r for r in kernel_rows if r[1] == kernel]
        print(summary(f"all {kernel}", [r[2] for r in rows], [r[3] for r in rows if r[3] is not None]))
    print(summary("all kernels", [r[2] for r in kernel_rows],
                  [r[3] for r in kernel_rows if r[3] is not None]))
    print(summary("all cases (totals)", [r[1] for r in case_rows], [r[2] for r in case_rows]))
    print(f"\nSM->L2 bytes (simulated l2_read_bytes / l2_write_bytes against xbar_read_bytes / "
          f"xbar_write_bytes): {bytes_exact} of {bytes_rows} kernels exact")
    for m in mismatches:
        print("  " + m)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(csv_rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(csv_rows)
    return 0 if not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
