#!/usr/bin/env python3
"""The flash3 green-context runs as a `memwall validate --sm-count` table.

    python3 models/cuda/hopper/fa3_validate_csv.py traces/measured/h200-flash3 \
        -o traces/measured/h200-flash3/sm-count.csv

Reads fa3_sm{132,66,33,16}.csv of that directory (run_flash3.sh's `smcount` step: three shapes,
each in green contexts of 132, 66, 34 (33 asked) and 16 SMs) and writes one row per (shape, SM
count) in the columns `memwall validate` reads: the workload `flash3`, the shape and its stages (the
kernel's instantiation, from the kernel's name: flash3_fwd_d128_s2 is head_dim 128, 2 stages),
the model's kernel name `flash3_fwd`, the time in seconds, and sms_requested (the file's count) and
sms (the SMs the context held, as measured). Nothing is computed beyond units: ms → s.

The 132-SM rows are the reference (validate's slowdowns divide by them): a green context of all
132 SMs is the whole chip, so their sms_requested is left empty, which is how validate's table
marks the unchanged chip; they were measured in the same process as the smaller contexts, at
the clocks of that run.
"""
import argparse
import csv
import pathlib
import re
import sys

COLUMNS = ["workload", "batch", "heads", "kv_heads", "seq", "seq_kv", "head_dim", "causal", "dtype",
           "block_q", "block_kv", "block_k", "stages", "softmax_rows", "kernel", "time_s",
           "sms_requested", "sms"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=pathlib.Path)
    ap.add_argument("-o", "--output", type=pathlib.Path, required=True)
    args = ap.parse_args()
    rows = []
    for asked in (132, 66, 33, 16):
        path = args.directory / f"fa3_sm{asked}.csv"
        with open(path, newline="", encoding="utf-8") as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                m = re.fullmatch(r"flash3_fwd_d(\d+)_s(\d+)", r["kernel"])
                if not m or m.group(1) != r["head_dim"]:
                    sys.exit(f"{path}:{line}: kernel {r['kernel']!r} is not flash3_fwd_d<head_dim>_s<N>")
                rows.append({
                    "workload": "flash3", "batch": r["batch"], "heads": r["heads"],
                    "kv_heads": r["kv_heads"], "seq": r["seq"], "seq_kv": r["seq_kv"],
                    "head_dim": r["head_dim"], "causal": r["causal"],
                    "dtype": "fp16", "block_q": "", "block_kv": "", "block_k": "",
                    "stages": m.group(2), "softmax_rows": "", "kernel": "flash3_fwd",
                    "time_s": f"{float(r['ms']) / 1e3:.6e}", "sms_requested": "" if asked == 132 else str(asked),
                    "sms": r["sms"]})
    if args.output.resolve().parent == args.directory.resolve() and args.output.name.startswith("fa3_sm"):
        sys.exit(f"{args.output}: would overwrite an input")
    tmp = args.output.with_name(args.output.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    tmp.replace(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
