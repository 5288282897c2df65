#!/bin/sh
# Regenerates every figure in docs/figures/ from memwall's own output, in one command:
#   docs/plots/make_figures.sh            (uses build/memwall; MEMWALL=path overrides; -j 2)
# The data behind each figure is kept beside it in docs/figures/data/. Needs /usr/bin/python3 with
# matplotlib (Debian: python3-matplotlib).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
memwall=${MEMWALL:-build/memwall}
jobs=${JOBS:-2}
plot="/usr/bin/python3 docs/plots/plot.py"
out=docs/figures
data=$out/data
mkdir -p "$data"
[ -x "$memwall" ] || { echo "make_figures.sh: $memwall not found (build first, or set MEMWALL)" >&2; exit 2; }
teach=configs/hypothetical/teaching-gpu.yaml

# Theorem 2 in the ideal two-level model (teaching GPU, d = 16, M = 2 KiB): traffic vs N and vs M.
"$memwall" io --config $teach --workload flash1 --head-dim 16 --seq 1024..16384x2 --sram "2 KiB" \
  --ideal -j "$jobs" --json $data/io_flash1_seq.json > $data/io_flash1_seq.txt
"$memwall" io --config $teach --workload naive --head-dim 16 --seq 1024..8192x2 \
  --ideal -j "$jobs" --json $data/io_naive_seq.json > $data/io_naive_seq.txt
"$memwall" io --config $teach --workload flash1 --head-dim 16 --seq 8192 --sram 2048..32768x2 \
  --ideal -j "$jobs" --json $data/io_flash1_sram.json > $data/io_flash1_sram.txt
# The same on an H200 with its L2: SM→L2 bytes follow N², HBM bytes stay near compulsory.
"$memwall" io --config h200 --workload flash2 --heads 16 --head-dim 64 --seq 1024..16384x2 \
  -j "$jobs" --json $data/io_flash2_h200_seq.json > $data/io_flash2_h200_seq.txt
# Simulated against measured (traces/measured/h200-sweep.csv: Nsight Compute flushes the L2
# between kernels, so the simulation does too).
"$memwall" io --config h200 --workload flash2 --heads 8 --head-dim 64 --seq 512..16384x2 \
  --block-q 128 --block-kv 128 --flush-l2 --measured traces/measured/h200-sweep.csv \
  -j "$jobs" --json $data/io_flash2_h200_measured.json > $data/io_flash2_h200_measured.txt

# Naive vs flash2 on the H200: time and stall breakdown vs N.
for w in naive flash2; do
  "$memwall" sweep --config h200 --workload $w --heads 16 --head-dim 64 --seq 1024..8192x2 \
    -j "$jobs" -o $data/sweep_${w}_h200.csv > /dev/null
done

# One run of each, placed on the H200's roofline.
"$memwall" run --config h200 --workload naive,flash2 --heads 16 --head-dim 64 --seq 4096 \
  --json $data/run_h200_4096.json > $data/run_h200_4096.txt
"$memwall" roofline --config h200 --from $data/run_h200_4096.json \
  --json $data/roofline_h200_4096.json > $data/roofline_h200_4096.txt

$plot io-seq $out/traffic_vs_n_ideal $data/io_flash1_seq.json $data/io_naive_seq.json
$plot io-seq $out/traffic_vs_n_h200 $data/io_flash2_h200_seq.json
$plot io-seq $out/traffic_vs_n_h200_measured $data/io_flash2_h200_measured.json
$plot io-sram $out/traffic_vs_sram_ideal $data/io_flash1_sram.json
$plot time $out/time_naive_vs_flash2_h200 $data/sweep_naive_h200.csv $data/sweep_flash2_h200.csv
$plot stalls $out/stalls_h200 $data/sweep_naive_h200.csv $data/sweep_flash2_h200.csv
$plot roofline $out/roofline_h200 $data/roofline_h200_4096.json
