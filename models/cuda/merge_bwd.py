#!/usr/bin/env python3
"""Merges flash2-bwd-cuda's timing CSV, Nsight Compute's metrics and PyTorch's backward times
(models/cuda/flash2_bwd.sh's timing.csv, ncu.csv, torch.csv) into one row per (case, kernel).

  python3 models/cuda/merge_bwd.py --timing timing.csv --ncu ncu.csv --torch torch.csv --out F

ncu's rows are matched to the cases in order: the --once run launches, per case of the measure
sweep, the three backward kernels once each (ncu's --kernel-name regex:flash2_bwd). Standard
library only."""
import argparse
import csv

METRICS = {
    "gpu__time_duration.sum": "ncu_time_s",
    "dram__bytes_read.sum": "dram_read_bytes",
    "dram__bytes_write.sum": "dram_write_bytes",
    "lts__t_sectors_srcunit_tex_op_read.sum": "l2_read_sectors",
    "lts__t_sectors_srcunit_tex_op_write.sum": "l2_write_sectors",
    "lts__t_sectors_srcunit_tex_op_red.sum": "l2_red_sectors",
    "lts__t_sectors_srcunit_tex_op_atom.sum": "l2_atom_sectors",
    "l1tex__m_xbar2l1tex_read_bytes.sum": "xbar_read_bytes",
    "l1tex__m_l1tex2xbar_write_bytes.sum": "xbar_write_bytes",
    "smsp__inst_executed.sum": "inst_executed",
    "sm__cycles_elapsed.avg.per_second": "sm_hz",
}
KERNELS = ["flash2_bwd_dot_do_o", "flash2_bwd", "flash2_bwd_convert_dq"]
KEYS = ["batch", "heads", "seq", "head_dim", "causal"]


def read_ncu(path):
    """{launch id: {column: value}} in launch order, with the kernel's short name."""
    lines = [l for l in open(path) if l.startswith('"')]
    launches = {}
    for r in csv.DictReader(lines):
        name = r["Kernel Name"].split("::")[-1].split("<")[0]
        launch = launches.setdefault(int(r["ID"]), {"kernel": name})
        column = METRICS.get(r["Metric Name"])
        if column:
            value = float(r["Metric Value"].replace(",", ""))
            launch[column] = value * 1e-9 if column == "ncu_time_s" else value
    return [launches[i] for i in sorted(launches)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timing", required=True)
    ap.add_argument("--ncu", required=True)
    ap.add_argument("--torch", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    timing = list(csv.DictReader(open(args.timing)))
    ncu = read_ncu(args.ncu)
    torch = {}
    for r in csv.DictReader(open(args.torch)):
        if r["kv_heads"] == r["heads"]:
            torch[tuple(r[k] for k in KEYS)] = r["bwd_time_s"]
    cases = [r for r in timing if r["kernel"] == "total"]
    if len(ncu) != 3 * len(cases):
        raise SystemExit(f"{len(ncu)} profiled launches for {len(cases)} cases (3 each expected)")
    columns = KEYS + ["block_q", "block_kv", "kernel", "time_s", "repeats"] + \
        list(METRICS.values()) + ["torch_bwd_time_s"]
    rows = []
    for i, case in enumerate(cases):
        key = tuple(case[k] for k in KEYS)
        for j, name in enumerate(KERNELS):
            launch = ncu[3 * i + j]
            if launch["kernel"] != name + "_kernel":
                raise SystemExit(f"launch {3 * i + j} is {launch['kernel']}, expected {name}")
            t = next(r for r in timing if tuple(r[k] for k in KEYS) == key and r["kernel"] == name)
            row = {k: case[k] for k in KEYS + ["block_q", "block_kv"]}
            row.update(kernel=name, time_s=t["time_s"], repeats=t["repeats"])
            row.update({c: f"{launch[c]:.6g}" if c in ("ncu_time_s", "sm_hz") else
                        str(int(launch[c])) for c in METRICS.values()})
            row["torch_bwd_time_s"] = ""
            rows.append(row)
        total = {k: case[k] for k in KEYS + ["block_q", "block_kv"]}
        total.update(kernel="total", time_s=case["time_s"], repeats=case["repeats"],
                     torch_bwd_time_s=torch.get(key, ""))
        rows.append(total)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    print(f"wrote {args.out}: {len(cases)} cases, {len(ncu)} profiled kernels")


if __name__ == "__main__":
    main()
