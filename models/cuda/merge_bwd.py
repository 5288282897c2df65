#!/usr/bin/env python3
"""Merges bwd-cuda's timing CSV, Nsight Compute's metrics and PyTorch's backward times
(models/cuda/bwd.sh's timing.csv, ncu.csv, torch.csv) into one row per (case, kernel).

  python3 models/cuda/merge_bwd.py --timing timing.csv --ncu ncu.csv [--torch torch.csv] --out F

ncu's rows are matched to the cases in order: the --once run launches, per case of the measure
sweep, the backward's kernels once each (bwd.sh's --kernel-name), for naive-bwd after the
forward's qk launch, which is dropped. A timing CSV without a workload column is flash2-bwd's.
Standard library only."""
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
# Per workload: the launches ncu sees per case (symbols; None: the forward's, dropped) and the
# names of the backward's launches, in order.
LAUNCHES = {
    "flash2-bwd": (["flash2_bwd_dot_do_o_kernel", "flash2_bwd_kernel",
                    "flash2_bwd_convert_dq_kernel"],
                   ["flash2_bwd_dot_do_o", "flash2_bwd", "flash2_bwd_convert_dq"]),
    # with grouped-query heads, a fourth launch
    "flash2-bwd grouped": (["flash2_bwd_dot_do_o_kernel", "flash2_bwd_kernel",
                            "flash2_bwd_convert_dq_kernel", "flash2_bwd_sum_dkv_kernel"],
                           ["flash2_bwd_dot_do_o", "flash2_bwd", "flash2_bwd_convert_dq",
                            "flash2_bwd_sum_dkv"]),
    "naive-bwd": ([None, "naive_bwd_product_kernel", "naive_qk_kernel", "naive_softmax_bwd_kernel",
                   "naive_bwd_product_kernel", "naive_bwd_product_kernel"],
                  ["dv", "dp", "softmax_bwd", "dq", "dk"]),
    # with grouped-query heads: the forward's and dp's qk read K/V by head group
    # (naive_bwd_qk_kernel), and dK, dV are summed over each group by a sixth launch
    "naive-bwd grouped": ([None, "naive_bwd_product_kernel", "naive_bwd_qk_kernel",
                           "naive_softmax_bwd_kernel", "naive_bwd_product_kernel",
                           "naive_bwd_product_kernel", "naive_bwd_sum_dkv_kernel"],
                          ["dv", "dp", "softmax_bwd", "dq", "dk", "sum_dkv"]),
}
KEYS = ["batch", "heads", "kv_heads", "seq", "head_dim", "causal"]


def read_ncu(path):
    """{launch id: {column: value}} in launch order, with the kernel's short name."""
    lines = [l for l in open(path) if l.startswith('"')]
    launches = {}
    for r in csv.DictReader(lines):
        name = r["Kernel Name"].split("(")[0].split("::")[-1].split("<")[0]
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
    ap.add_argument("--torch")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    timing = list(csv.DictReader(open(args.timing)))
    for r in timing:
        r.setdefault("workload", "flash2-bwd")
        r.setdefault("kv_heads", r["heads"])
    workloads = {r["workload"] for r in timing}
    if len(workloads) != 1 or not workloads <= LAUNCHES.keys():
        raise SystemExit(f"{args.timing}: expected one workload of flash2-bwd, naive-bwd")
    workload = workloads.pop()
    ncu = read_ncu(args.ncu)
    torch = {}
    if args.torch:
        for r in csv.DictReader(open(args.torch)):
            torch[tuple(r[k] for k in KEYS)] = r["bwd_time_s"]
    cases = [r for r in timing if r["kernel"] == "total"]
    columns = ["workload"] + KEYS + ["block_q", "block_kv", "kernel", "time_s", "repeats"] + \
        list(METRICS.values()) + ["torch_bwd_time_s"]
    rows = []
    cursor = 0
    for case in cases:
        key = tuple(case[k] for k in KEYS)
        grouped = case["kv_heads"] != case["heads"]
        symbols, kernels = LAUNCHES[workload + (" grouped" if grouped else "")]
        launches = ncu[cursor:cursor + len(symbols)]
        if len(launches) != len(symbols):
            raise SystemExit(f"{len(ncu)} profiled launches: too few for {len(cases)} cases")
        for n, (symbol, launch) in enumerate(zip(symbols, launches)):
            if symbol is not None and launch["kernel"] != symbol:
                raise SystemExit(f"launch {cursor + n} is {launch['kernel']}, expected {symbol}")
        cursor += len(symbols)
        for name, launch in zip(kernels, [l for s_, l in zip(symbols, launches) if s_ is not None]):
            t = next(r for r in timing if tuple(r[k] for k in KEYS) == key and r["kernel"] == name)
            row = {k: case[k] for k in ["workload"] + KEYS + ["block_q", "block_kv"]}
            row.update(kernel=name, time_s=t["time_s"], repeats=t["repeats"])
            row.update({c: f"{launch[c]:.6g}" if c in ("ncu_time_s", "sm_hz") else
                        str(int(launch[c])) for c in METRICS.values()})
            row["torch_bwd_time_s"] = ""
            rows.append(row)
        total = {k: case[k] for k in ["workload"] + KEYS + ["block_q", "block_kv"]}
        total.update(kernel="total", time_s=case["time_s"], repeats=case["repeats"],
                     torch_bwd_time_s=torch.get(key, ""))
        rows.append(total)
    if cursor != len(ncu):
        raise SystemExit(f"{len(ncu)} profiled launches for {cursor} expected")
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    print(f"wrote {args.out}: {len(cases)} cases, {len(ncu)} profiled kernels")


if __name__ == "__main__":
    main()
