#!/usr/bin/env python3
"""Merges memwall-cuda's timing CSV, its --once launch list and Nsight Compute's CSV into one
CSV, one row per (case, kernel), and checks the measured SM->L2 bytes against the workload tiling
contract's closed forms (docs/cuda.md). Standard library only.

Usage:
  merge_ncu.py --timing timing.csv --launches launches.csv --ncu ncu.csv \
               [--torch torch_sdpa.csv] --out merged.csv

The k-th kernel that ncu profiled is the k-th kernel row (kernel != total) of launches.csv
(memwall-cuda launches in a fixed order); the kernel names are checked. l2 bytes = sectors x 32.
Also takes l1tex__m_xbar2l1tex_read_bytes / l1tex__m_l1tex2xbar_write_bytes when ncu measured
them (xbar_* columns: the same traffic counted at the SMs, before any coalescing in front of L2).
Rows of the timing CSV that were not profiled keep empty ncu columns. A "total" row sums its
case's kernels. Prints the worst relative difference to the contract per kernel, and a table of
flash2 against PyTorch's flash backend at the same shapes.
"""
import argparse
import csv
import math
import sys

PARAMS = ["workload", "batch", "heads", "seq", "head_dim", "dtype", "block_q", "block_kv",
          "block_k", "stages", "softmax_rows"]
METRICS = {
    "dram__bytes_read.sum": "dram_read_bytes",
    "dram__bytes_write.sum": "dram_write_bytes",
    "lts__t_sectors_srcunit_tex_op_read.sum": "l2_read_bytes",
    "lts__t_sectors_srcunit_tex_op_write.sum": "l2_write_bytes",
    "gpu__time_duration.sum": "ncu_time_s",
    "l1tex__m_xbar2l1tex_read_bytes.sum": "xbar_read_bytes",
    "l1tex__m_l1tex2xbar_write_bytes.sum": "xbar_write_bytes",
}
UNIT_SCALE = {
    "byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
    "sector": 32, "ksector": 32e3, "msector": 32e6, "gsector": 32e9,
    "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0,
    "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0,
}
KERNEL_SYMBOL = {"qk": "naive_qk_kernel", "softmax": "naive_softmax_kernel",
                 "pv": "naive_pv_kernel", "flash2_fwd": "flash2_fwd_kernel"}
OUT_COLUMNS = PARAMS + ["kernel", "time_s", "repeats", "rel_err", "check", "ncu_time_s",
                        "dram_read_bytes", "dram_write_bytes", "l2_read_bytes", "l2_write_bytes",
                        "xbar_read_bytes", "xbar_write_bytes", "contract_l2_read_bytes", "contract_l2_write_bytes"]


def ceil_div(a, b):
    return -(-a // b)


def row_sectors(addr, nbytes):
    """32-byte sectors touched by nbytes starting at byte address addr."""
    return (addr + nbytes - 1) // 32 - addr // 32 + 1


def box_bytes(base, rows, row_bytes, pitch):
    """Bytes of the 32-byte sectors one box touches: rows of row_bytes, pitch bytes apart."""
    if rows <= 0 or row_bytes <= 0:
        return 0
    period = 1 if pitch % 32 == 0 else 32 // math.gcd(pitch % 32, 32)
    per = [row_sectors(base + r * pitch, row_bytes) for r in range(min(period, rows))]
    full, rem = divmod(rows, len(per))
    return 32 * (full * sum(per) + sum(per[:rem]))


def contract_bytes(row, kernel):
    """SM->L2 (read, write) bytes of one kernel by the tiling contract, each box counted in the
    32-byte sectors it touches (equal to its bytes when rows are 32-byte aligned); fp16 (s = 2).
    Every head's tensors start 32-byte aligned (seq is a multiple of 8), so heads are alike."""
    bh = int(row["batch"]) * int(row["heads"])
    n = int(row["seq"])
    d = int(row["head_dim"])
    s = 2
    bq = int(row["block_q"])
    bkv = int(row["block_kv"])
    rows_of = lambda blk, i: min(blk, n - i * blk)  # noqa: E731
    nbq = ceil_div(n, bq)
    if kernel == "qk":
        nbkv = ceil_div(n, bkv)
        q = sum(box_bytes(i * bq * d * s, rows_of(bq, i), d * s, d * s) for i in range(nbq))
        k = sum(box_bytes(j * bkv * d * s, rows_of(bkv, j), d * s, d * s) for j in range(nbkv))
        if (n * s) % 32 == 0 and (bkv * s) % 32 == 0:
            st = n * n * s
        else:
            st = sum(box_bytes((i * bq * n + j * bkv) * s, rows_of(bq, i), rows_of(bkv, j) * s,
                               n * s) for i in range(nbq) for j in range(nbkv))
        return bh * (nbkv * q + nbq * k), bh * st
    if kernel == "softmax":
        r = int(row["softmax_rows"])
        sm = sum(box_bytes(i * r * n * s, rows_of(r, i), n * s, n * s)
                 for i in range(ceil_div(n, r)))
        return bh * sm, bh * sm
    if kernel == "pv":
        bk = int(row["block_k"])
        nck = ceil_div(n, bk)
        if (n * s) % 32 == 0 and (bk * s) % 32 == 0:
            p = n * n * s
        else:
            p = sum(box_bytes((i * bq * n + c * bk) * s, rows_of(bq, i), rows_of(bk, c) * s,
                              n * s) for i in range(nbq) for c in range(nck))
        v = sum(box_bytes(c * bk * d * s, rows_of(bk, c), d * s, d * s) for c in range(nck))
        o = sum(box_bytes(i * bq * d * s, rows_of(bq, i), d * s, d * s) for i in range(nbq))
        return bh * (p + nbq * v), bh * o
    if kernel == "flash2_fwd":
        nbkv = ceil_div(n, bkv)
        q = sum(box_bytes(i * bq * d * s, rows_of(bq, i), d * s, d * s) for i in range(nbq))
        kv = sum(box_bytes(j * bkv * d * s, rows_of(bkv, j), d * s, d * s) for j in range(nbkv))
        lse = sum(box_bytes(i * bq * 4, 1, rows_of(bq, i) * 4, 0) for i in range(nbq))
        return bh * (q + nbq * 2 * kv), bh * (q + lse)
    raise ValueError(f"unknown kernel {kernel}")


def key_of(row):
    return tuple(row[p] for p in PARAMS)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_ncu(path, metrics=METRICS):
    """Returns [(kernel_name, {column: value})] in profiling order, for the ncu metrics named in
    `metrics` (ncu name -> column), each scaled to base units by its Metric Unit."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise SystemExit(f"{path}: no ncu CSV header (a line starting with \"ID\") found")
    launches = {}
    order = []
    for rec in csv.DictReader(lines[start:]):
        if not rec.get("ID") or rec.get("Metric Name") not in metrics:
            continue
        lid = int(rec["ID"])
        if lid not in launches:
            launches[lid] = (rec["Kernel Name"], {})
            order.append(lid)
        unit = rec.get("Metric Unit", "").strip().lower()
        if unit not in UNIT_SCALE:
            raise SystemExit(f"{path}: ID {lid}: unknown unit '{unit}' for {rec['Metric Name']}")
        value = float(rec["Metric Value"].replace(",", "")) * UNIT_SCALE[unit]
        launches[lid][1][metrics[rec["Metric Name"]]] = value
    return [launches[i] for i in order]


def fmt_int(x):
    return "" if x is None else str(int(round(x)))


def main():
    ap = argparse.ArgumentParser(description="merge memwall-cuda timing with ncu metrics")
    ap.add_argument("--timing", required=True, help="memwall-cuda CSV of the timed sweep")
    ap.add_argument("--launches", required=True, help="memwall-cuda --once CSV run under ncu")
    ap.add_argument("--ncu", required=True, help="ncu --csv output")
    ap.add_argument("--torch", help="torch_sdpa.py CSV, for the comparison table")
    ap.add_argument("--out", required=True, help="merged CSV")
    args = ap.parse_args()

    timing = read_csv(args.timing)
    launch_rows = [r for r in read_csv(args.launches) if r["kernel"] != "total"]
    profiled = read_ncu(args.ncu)
    if len(profiled) != len(launch_rows):
        print(f"warning: ncu profiled {len(profiled)} kernels, the launch list has "
              f"{len(launch_rows)}; joining the first {min(len(profiled), len(launch_rows))}",
              file=sys.stderr)
    measured = {}
    for (name, metrics), row in zip(profiled, launch_rows):
        if KERNEL_SYMBOL[row["kernel"]] not in name:
            raise SystemExit(f"launch order mismatch: ncu kernel '{name}' against launch "
                             f"{row['kernel']} of case {key_of(row)}")
        measured[key_of(row) + (row["kernel"],)] = metrics

    out_rows = []
    worst = {}
    for row in timing:
        kernel = row["kernel"]
        k = key_of(row)
        out = {c: row.get(c, "") for c in PARAMS + ["kernel", "time_s", "repeats", "rel_err",
                                                      "check"]}
        kernels = [kernel] if kernel != "total" else (
            ["qk", "softmax", "pv"] if row["workload"] == "naive" else ["flash2_fwd"])
        contract = [contract_bytes(row, kn) for kn in kernels]
        out["contract_l2_read_bytes"] = str(sum(c[0] for c in contract))
        out["contract_l2_write_bytes"] = str(sum(c[1] for c in contract))
        ms = [measured.get(k + (kn,)) for kn in kernels]
        for col in ["ncu_time_s", "dram_read_bytes", "dram_write_bytes", "l2_read_bytes",
                    "l2_write_bytes", "xbar_read_bytes", "xbar_write_bytes"]:
            if all(m is not None and col in m for m in ms):
                total = sum(m[col] for m in ms)
                out[col] = f"{total:.6e}" if col == "ncu_time_s" else fmt_int(total)
            else:
                out[col] = ""
        if kernel != "total":
            for col, want in (("l2_read_bytes", contract[0][0]), ("l2_write_bytes", contract[0][1]),
                              ("xbar_read_bytes", contract[0][0]),
                              ("xbar_write_bytes", contract[0][1])):
                if out[col] == "":
                    continue
                diff = (int(out[col]) - want) / want
                w = worst.setdefault((kernel, col), (0.0, None))
                if abs(diff) >= abs(w[0]):
                    worst[(kernel, col)] = (diff, k)
        out_rows.append(out)

    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=OUT_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(out_rows)
    print(f"wrote {args.out}: {len(out_rows)} rows, {len(measured)} kernels with ncu metrics")

    print("\nMeasured bytes against the tiling contract, worst relative difference per kernel "
          "(l2_*: lts sectors from the SMs x 32; xbar_*: L1TEX<->L2 bytes counted at the SMs):")
    for (kernel, col), (diff, k) in sorted(worst.items()):
        case = ",".join(f"{p}={v}" for p, v in zip(PARAMS, k) if v != "")
        print(f"  {kernel:10s} {col:16s} {diff * 100:+8.3f}%   ({case})")

    if args.torch:
        torch_rows = {(r["batch"], r["heads"], r["seq"], r["head_dim"]): r
                      for r in read_csv(args.torch)}
        print("\nflash2 (best block sizes) against PyTorch's flash backend, same shapes, "
              "CUDA-event medians, cold L2:")
        print("| B | H | N | d | flash2 best (ms) | blocks (Br, Bc, stages) | torch flash (ms) "
              "| ratio | TFLOP/s flash2 |")
        print("|---|---|---|---|---|---|---|---|---|")
        best = {}
        for row in timing:
            if row["workload"] != "flash2" or row["kernel"] != "flash2_fwd" or not row["time_s"]:
                continue
            s = (row["batch"], row["heads"], row["seq"], row["head_dim"])
            if s not in best or float(row["time_s"]) < float(best[s]["time_s"]):
                best[s] = row
        for s, row in best.items():
            t = float(row["time_s"])
            tr = torch_rows.get(s)
            tt = float(tr["time_s"]) if tr else math.nan
            b, h, n, d = (int(x) for x in s)
            tflops = 4.0 * b * h * n * n * d / t / 1e12
            print(f"| {b} | {h} | {n} | {d} | {t * 1e3:.4f} | ({row['block_q']}, "
                  f"{row['block_kv']}, {row['stages']}) | {tt * 1e3:.4f} | {t / tt:.2f} "
                  f"| {tflops:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
