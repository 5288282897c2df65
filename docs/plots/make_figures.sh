#!/bin/sh
# Regenerates every figure of docs/figures (PNG and SVG) from memwall's own output, in one command:
#   docs/plots/make_figures.sh [OUTDIR]
# OUTDIR defaults to a new temporary folder (said on stdout); the repository's docs/figures is
# written only when named (docs/plots/make_figures.sh docs/figures). The data behind each figure
# is kept in OUTDIR/data. Uses build/memwall and the module in build/python (MEMWALL=path and
# MEMWALL_PYTHONPATH=dir override; JOBS=2 points at a time), and /usr/bin/python3 with
# matplotlib (Debian: python3-matplotlib).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-}
[ $# -le 1 ] || { echo "make_figures.sh: usage: make_figures.sh [OUTDIR]" >&2; exit 2; }
if [ -z "$out" ]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/memwall-figures.XXXXXX")
else
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
fi
cd "$root"
memwall=${MEMWALL:-build/memwall}
jobs=${JOBS:-2}
python=${PYTHON:-/usr/bin/python3}
export PYTHONPATH="${MEMWALL_PYTHONPATH:-$root/build/python}"
[ -x "$memwall" ] || { echo "make_figures.sh: $memwall not found (build first, or set MEMWALL)" >&2; exit 2; }
# Fail before any simulation when the plotting cannot work (memwall.plot says what is missing).
"$python" -c "import memwall.plot" 2>/dev/null || {
  "$python" docs/plots/plot.py --help > /dev/null; exit 2; }
plot="$python docs/plots/plot.py"
data=$out/data
mkdir -p "$data"
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
$plot measured $out/sim_vs_measured_h200 $data/io_flash2_h200_measured.json
$plot io-sram $out/traffic_vs_sram_ideal $data/io_flash1_sram.json
$plot --config h200 time $out/time_naive_vs_flash2_h200 $data/sweep_naive_h200.csv $data/sweep_flash2_h200.csv
$plot --config h200 stalls $out/stalls_h200 $data/sweep_naive_h200.csv $data/sweep_flash2_h200.csv
$plot --config h200 roofline $out/roofline_h200 $data/roofline_h200_4096.json $data/run_h200_4096.json
# docs/validation.md: the committed measured comparisons (no simulation: the fits' JSON, the
# validate tables and variants_table.py --csv as committed), simulated against measured, y = x.
m=traces/measured
$plot calibration $out/validation_heldout_h200 $m/calibration-h200.json
$plot calibration $out/validation_holdout_block_q_h200 $m/h200-kernel-holdout/cal-block_q-64.json
$plot calibration $out/validation_holdout_stages_h200 $m/h200-kernel-holdout/cal-stages-3.json
$plot validate $out/validation_sm_count_h200 $m/h200-sm-count-validate.csv
$plot validate $out/validation_l2_size_dram_h200 $m/h200-l2-size-validate.csv --quantity dram
$plot validate $out/validation_l2_size_time_h200 $m/h200-l2-size-validate.csv
$plot validate $out/validation_l2_size_carveout_time_h200 $m/h200-l2-size-carveout-validate.csv
$plot validate $out/validation_sm_count_h100 $m/h100-sm-count-validate.csv
$plot validate $out/validation_l2_size_carveout_time_h100 $m/h100-l2-size-carveout-validate.csv
$plot validate $out/validation_variants_h200 $m/h200-variants-validate.csv
$plot validate $out/validation_variants_dram_h200 $m/h200-variants-validate.csv --quantity dram
echo "make_figures.sh: wrote the figures into $out"
