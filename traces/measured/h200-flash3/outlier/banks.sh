#!/usr/bin/env bash
# The outlier's mechanism, tried on the simulator: hbm.banks_per_channel 16 (the H200 preset, the
# schema's default) against JESD238's 32 per HBM3 channel (two pseudo-channels of 4 bank groups x
# 4 banks), on configs/calibrated/h200.yaml as it is otherwise (README.md). Writes nothing but a
# temporary config; about 10 minutes on two cores. From the repository root:
#   traces/measured/h200-flash3/outlier/banks.sh [build/memwall] > banks.txt
set -euo pipefail
memwall=${1:-build/memwall}
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for b in 32; do
  printf 'extends: %s/configs/calibrated/h200.yaml\nname: NVIDIA H200 (calibrated, %s banks per channel)\nhbm:\n  banks_per_channel: %s\n' \
    "$root" "$b" "$b" >"$tmp/banks$b.yaml"
done

echo "== 1. the outlier (flash3, B 8, H 16, N 2048, d 128, causal; chip under ncu: 0.310 ms, 3.55 TB/s)"
for b in 16 32 64 96; do
  "$memwall" run -c h200-calibrated --set hbm.banks_per_channel=$b --workload flash3 --batch 8 \
    --heads 16 --seq 2048 --head-dim 128 --causal --flush-l2 --json "$tmp/r.json" >/dev/null
  python3 - "$tmp/r.json" "$b" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]
lines = k["dram_bytes"] / 128
print(f"banks {sys.argv[2]:>3}: {k['time_s'] * 1e3:.4f} ms, DRAM {k['dram_bytes'] / 1e9:.3f} GB at "
      f"{k['achieved_dram_bandwidth'] / 1e12:.2f} TB/s, row misses {k['dram_row_misses'] / lines:.1%} "
      f"of line fetches")
PY
done

m=traces/measured/h200-flash3
echo
echo "== 2. flash3's 39 measured launches (models/cuda/hopper/compare_fa3.py)"
for c in configs/calibrated/h200.yaml "$tmp/banks32.yaml"; do
  python3 models/cuda/hopper/compare_fa3.py --memwall "$memwall" -j 2 --config "$c" \
    --measured $m/fa3.csv --measured $m/fa3_sm132.csv --measured $m/fa3_sm66.csv \
    --measured $m/fa3_sm33.csv --measured $m/fa3_sm16.csv | grep -E "time MAPE|SM clock" |
    sed "s|$tmp/||"
done

echo
echo "== 3. the flash2 variants (traces/measured/variants_table.py), summary rows"
for c in configs/calibrated/h200.yaml "$tmp/banks32.yaml"; do
  echo "-- ${c#$tmp/}"
  python3 traces/measured/variants_table.py --memwall "$memwall" --config "$c" -j 2 |
    grep -E "^\| (causal|GQA|decode|all)"
done

echo
echo "== 4. the calibration sweep (memwall calibrate --evaluate), summary rows"
for c in configs/calibrated/h200.yaml "$tmp/banks32.yaml"; do
  echo "-- ${c#$tmp/}"
  "$memwall" calibrate --config "$c" --measured traces/measured/h200-sweep.csv --evaluate -j 2 |
    grep -E "^  (fit set|held out)"
done
