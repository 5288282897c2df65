#!/usr/bin/env python3
"""Merges memwall-cuda's timing CSV of the flash2 variants (causal, GQA, decode, split-KV), its
--once launch lists and Nsight Compute's CSVs into one CSV, one row per (case, kernel), with
PyTorch's flash backend at the same shape beside it, and checks the SM-side bytes
(l1tex__m_xbar2l1tex_read_bytes / l1tex__m_l1tex2xbar_write_bytes) against the tiling contract's
boxes for the variants (models/cuda/flash2_attention.h). Standard library only.

Usage:
  merge_variants.py --timing timing.csv --launches L1.csv [L2.csv ...] --ncu N1.csv [N2.csv ...]
                    [--torch torch_sdpa.csv] --out merged.csv

The launch lists and ncu CSVs are paired in order (the k-th kernel ncu profiled in Ni is the k-th
kernel row of Li). Output columns: see COLUMNS. contract_* are the contract's SM->L2 bytes, each
box counted in the 32-byte sectors it touches.
"""
import argparse
import csv
import sys

from merge_ncu import read_csv, read_ncu

PARAMS = ["workload", "batch", "heads", "seq", "head_dim", "dtype", "block_q", "block_kv",
          "block_k", "stages", "softmax_rows", "causal", "kv_heads", "seq_kv", "splits"]
KERNEL_SYMBOL = {"flash2_fwd": "flash2_fwd", "flash2_combine": "flash2_combine_kernel"}
COLUMNS = ["batch", "heads", "kv_heads", "seq", "seq_kv", "head_dim", "causal", "splits",
           "block_q", "block_kv", "stages", "kernel", "time_s", "repeats", "rel_err",
           "lse_max_abs_err", "check", "ncu_time_s", "dram_read_bytes", "dram_write_bytes",
           "l2_read_bytes", "l2_write_bytes", "xbar_read_bytes", "xbar_write_bytes",
           "contract_read_bytes", "contract_write_bytes", "torch_flash_time_s"]


def ceil_div(a, b):
    return -(-a // b)


def span_bytes(addr, nbytes):
    """Bytes of the 32-byte sectors that nbytes from byte address addr touch."""
    if nbytes <= 0:
        return 0
    return 32 * ((addr + nbytes - 1) // 32 - addr // 32 + 1)


def contract_bytes(row, kernel):
    """(read, write) SM->L2 bytes of one kernel of a variant case by the contract (fp16 Q/K/V/O,
    fp32 L, O_accum, L_accum). Rows of d halves or floats are whole sectors (d is 64 or 128)."""
    b, h, hkv = int(row["batch"]), int(row["heads"]), int(row["kv_heads"])
    nq0, nkv, d = int(row["seq"]), int(row["seq_kv"]), int(row["head_dim"])
    br, bc, splits = int(row["block_q"]), int(row["block_kv"]), int(row["splits"])
    causal = row["causal"] == "1"
    g = h // hkv
    packed = nq0 == 1 and g > 1
    heads, nq = (hkv, g) if packed else (h, nq0)
    causal = causal and not packed
    off = nkv - nq0
    bhp = b * heads
    tr, tc = ceil_div(nq, br), ceil_div(nkv, bc)
    bps = ceil_div(tc, splits)
    rows_total = bhp * nq
    kv_rows = lambda j: min(bc, nkv - j * bc)  # noqa: E731
    read = write = 0
    if kernel == "flash2_combine":  # one CTA per kCombineRows = 128·4/d rows of a head
        cr = 128 * 4 // d
        for bh in range(bhp):
            for r0 in range(0, nq, cr):
                rows = min(cr, nq - r0)
                row0 = bh * nq + r0
                for s in range(splits):
                    read += span_bytes((s * rows_total + row0) * 4, rows * 4)
                    read += rows * d * 4
                write += rows * d * 2 + span_bytes(row0 * 4, rows * 4)
        return read, write
    for bh in range(bhp):
        for m in range(tr):
            r0 = m * br
            rows = min(br, nq - r0)
            row0 = bh * nq + r0
            vend = tc
            if causal:
                vend = min(tc, (r0 + rows - 1 + off) // bc + 1)
            for s in range(splits):
                read += rows * d * 2  # the Q box, once per split CTA
                lo, hi = s * bps, min((s + 1) * bps, vend)
                read += sum(2 * kv_rows(j) * d * 2 for j in range(lo, hi))
                if splits == 1:
                    write += rows * d * 2 + span_bytes(row0 * 4, rows * 4)
                else:
                    write += rows * d * 4 + span_bytes((s * rows_total + row0) * 4, rows * 4)
    return read, write


def key_of(row):
    return tuple(row.get(p, "") for p in PARAMS)


def main():
    ap = argparse.ArgumentParser(description="merge memwall-cuda variant timing with ncu metrics")
    ap.add_argument("--timing", required=True)
    ap.add_argument("--launches", nargs="+", required=True)
    ap.add_argument("--ncu", nargs="+", required=True)
    ap.add_argument("--torch")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if len(args.launches) != len(args.ncu):
        raise SystemExit("--launches and --ncu need the same number of files")

    measured = {}
    for lpath, npath in zip(args.launches, args.ncu):
        try:
            launch_rows = [r for r in read_csv(lpath) if r["kernel"] != "total"]
            profiled = read_ncu(npath)
        except (OSError, SystemExit) as e:
            print(f"{npath}: no ncu data ({e})", file=sys.stderr)
            continue
        if len(profiled) != len(launch_rows):
            print(f"warning: {npath}: ncu profiled {len(profiled)} kernels, {lpath} lists "
                  f"{len(launch_rows)}; joining the first {min(len(profiled), len(launch_rows))}",
                  file=sys.stderr)
        for (name, metrics), row in zip(profiled, launch_rows):
            if KERNEL_SYMBOL[row["kernel"]] not in name:
                raise SystemExit(f"launch order mismatch: ncu kernel '{name}' against "
                                 f"{row['kernel']} of {key_of(row)}")
            measured[key_of(row) + (row["kernel"],)] = metrics

    torch_rows = {}
    if args.torch:
        for r in read_csv(args.torch):
            torch_rows[(r["batch"], r["heads"], r.get("kv_heads", r["heads"]), r["seq"],
                        r.get("seq_kv", r["seq"]), r["head_dim"], r.get("causal", "0"))] = r

    out_rows = []
    mismatches = []
    for row in read_csv(args.timing):
        kernel = row["kernel"]
        kernels = ([kernel] if kernel != "total" else
                   ["flash2_fwd"] + (["flash2_combine"] if int(row["splits"]) > 1 else []))
        out = {c: row.get(c, "") for c in COLUMNS}
        contract = [contract_bytes(row, kn) for kn in kernels]
        out["contract_read_bytes"] = str(sum(c[0] for c in contract))
        out["contract_write_bytes"] = str(sum(c[1] for c in contract))
        ms = [measured.get(key_of(row) + (kn,)) for kn in kernels]
        for col in ["ncu_time_s", "dram_read_bytes", "dram_write_bytes", "l2_read_bytes",
                    "l2_write_bytes", "xbar_read_bytes", "xbar_write_bytes"]:
            if all(m is not None and col in m for m in ms):
                total = sum(m[col] for m in ms)
                out[col] = f"{total:.6e}" if col == "ncu_time_s" else str(int(round(total)))
            else:
                out[col] = ""
        for col, want in (("xbar_read_bytes", "contract_read_bytes"),
                          ("xbar_write_bytes", "contract_write_bytes")):
            if out[col] != "" and int(out[col]) != int(out[want]):
                mismatches.append(f"{kernel} {col} {out[col]} != contract {out[want]} "
                                  f"({','.join(f'{p}={row[p]}' for p in PARAMS if row.get(p))})")
        t = torch_rows.get((row["batch"], row["heads"], row["kv_heads"], row["seq"],
                            row["seq_kv"], row["head_dim"], row["causal"]))
        out["torch_flash_time_s"] = t["time_s"] if t and kernel == "total" else ""
        out_rows.append(out)

    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(out_rows)
    print(f"wrote {args.out}: {len(out_rows)} rows, {len(measured)} kernels with ncu metrics")
    print(f"SM-side bytes against the contract: {len(mismatches)} kernel rows differ")
    for m in mismatches:
        print("  " + m)

    print("\n| B | H | Hkv | Nq | Nkv | d | causal | S | time (ms) | torch (ms) | xbar read | "
          "xbar write | dram read | dram write |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for o in out_rows:
        if o["kernel"] != "total":
            continue
        t = f"{float(o['time_s']) * 1e3:.4f}" if o["time_s"] else ""
        tt = f"{float(o['torch_flash_time_s']) * 1e3:.4f}" if o["torch_flash_time_s"] else ""
        print(f"| {o['batch']} | {o['heads']} | {o['kv_heads']} | {o['seq']} | {o['seq_kv']} | "
              f"{o['head_dim']} | {o['causal']} | {o['splits']} | {t} | {tt} | "
              f"{o['xbar_read_bytes']} | {o['xbar_write_bytes']} | {o['dram_read_bytes']} | "
              f"{o['dram_write_bytes']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
