#!/usr/bin/env python3
"""The split-KV combine's time against its rounds of O_accum loads, measured and simulated.

The combine (models/cuda/flash2_attention.cu, models/flash2.cc `combine`) loads each row's L_accum
values, then O_accum four splits at a time per thread (kCombineSplitsInFlight), waiting for each
round before the next: ceil(S / 4) dependent rounds. A least-squares line of time against rounds,
over the combine launches of a `memwall validate`-format CSV (variants_table.py --csv), splits
what the model misses into a part per launch (the intercept) and a part per round (the slope).

Usage: python3 traces/measured/combine_rounds.py [traces/measured/h200-variants-validate.csv]
Standard library only.
"""
import csv
import math
import re
import statistics
import sys


def fit(xs, ys):
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def main(path):
    rows = []
    for r in csv.DictReader(open(path, newline="")):
        if r["kernel"] != "flash2_combine":
            continue
        splits = int(re.search(r"\bS=(\d+)", r["case"]).group(1))
        rows.append((math.ceil(splits / 4), float(r["meas_time_s"]) * 1e6,
                     float(r["sim_time_s"]) * 1e6))
    if len(rows) < 2:
        sys.exit(f"{path}: fewer than two flash2_combine rows")
    rounds = [r[0] for r in rows]
    print(f"{path}: {len(rows)} combine launches, "
          f"{min(rounds)}-{max(rounds)} rounds of O_accum loads")
    for name, i in (("measured", 1), ("simulated", 2)):
        a, b = fit(rounds, [r[i] for r in rows])
        print(f"  {name:9s}  {a:5.2f} us per launch + {b:5.3f} us per round")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "traces/measured/h200-variants-validate.csv")
