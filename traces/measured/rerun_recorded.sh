#!/usr/bin/env bash
# Re-runs the recorded comparisons of the simulator against the committed measurements: what to
# run after a preset or the calibration changes. From the repository root, build/memwall built:
#
#   traces/measured/rerun_recorded.sh STAGE...        (LOG=DIR keeps each command's output; default
#                                                      /tmp/memwall-rerun)
# Stages, in the order they depend on each other:
#   calibrate  configs/calibrated/h200.yaml and traces/measured/calibration-h200.json (about 5 min
#              at -j 2 on a 2-core machine; docs/calibration.md). configs/calibrated/h100-sxm.yaml carries the same
#              three values: copy them there by hand (its header says why).
#   holdout    the two kernel hold-outs of traces/measured/h200-kernel-holdout (about 5 min each)
#   h200       the H200 tables: SM count, L2 size (with and without the carve-out's write rates),
#              the variants, flash3 and the wgmma GEMM (132 SMs, SM counts, the write port)
#   h100       the same on the H100 with configs/calibrated/h100-sxm.yaml, and naive-bwd
# Every CSV, and every page that is the script's whole output (the H200's compare*.md), is
# written in place. The pages with prose around a table (traces/measured/*.md, the H100's
# compare*.md, docs/validation.md, docs/hopper.md) take the new tables from $LOG/*.txt by hand,
# and `python3 tests/e2e/doc_blocks.py --update` re-runs their `$ memwall` blocks. Then the tests
# name what still differs (the recorded bounds of tests/studies/test_measured_*.cc).
set -euo pipefail
[[ $# -gt 0 ]] || { sed -n '2,20p' "$0"; exit 2; }
mw=${MEMWALL:-build/memwall}
log=${LOG:-/tmp/memwall-rerun}
mkdir -p "$log"
m=traces/measured
fit=(--params l2_capacity,mma_sync,launch_overhead --fit-budget "4 GiB" --max-iterations 8)
say() { echo "== $(date -u +%T) $*" >&2; }
# The --measured arguments of an SM-count experiment, PREFIX_sm132.csv ... PREFIX_sm16.csv, into
# the array `sm_runs`.
sm_count_runs() {
  sm_runs=()
  for n in 132 66 33 16; do sm_runs+=(--measured "${1}_sm$n.csv"); done
}
# CHIP CONFIG: flash3 on CHIP's 132-SM run and its SM-count runs, the CSV beside them.
flash3() {
  local d=$m/$1-flash3
  sm_count_runs $d/fa3
  python3 models/cuda/hopper/compare_fa3.py -j 2 --config "$2" --measured $d/fa3.csv \
    "${sm_runs[@]}" --csv $d/compare.csv
}
# CHIP CONFIG NAME [ARG...]: the wgmma GEMM's SM-count runs on CHIP, the CSV as NAME.csv.
gemm_sm_counts() {
  local g=$m/$1-hopper-gemm config=$2 name=$3
  shift 3
  sm_count_runs $g/gemm
  python3 models/cuda/hopper/compare_gemm.py -j 2 --config "$config" "${sm_runs[@]}" "$@" \
    --csv $g/$name.csv
}

for stage in "$@"; do
  case $stage in
    calibrate)
      say calibrate
      "$mw" calibrate --config configs/h200.yaml --measured $m/h200-sweep.csv \
        -o configs/calibrated/h200.yaml --json $m/calibration-h200.json -j 2 "${fit[@]}" \
        >"$log/calibrate.txt" 2>&1
      ;;
    holdout)
      for h in block_q=64 stages=3; do
        say "holdout $h"
        n=${h/=/-}
        "$mw" calibrate --config configs/h200.yaml --measured $m/h200-sweep.csv \
          -o $m/h200-kernel-holdout/h200-$n.yaml --json $m/h200-kernel-holdout/cal-$n.json \
          "${fit[@]}" --hold-out "$h" -j 2 2>&1 | sed "s|$PWD/||g" >$m/h200-kernel-holdout/cal-$n.txt
      done
      ;;
    h200)
      say h200 validate
      "$mw" validate --sm-count $m/h200-sm-count.csv -j 2 --csv $m/h200-sm-count-validate.csv \
        >"$log/h200-sm-count.txt"
      "$mw" validate --l2-size $m/h200-l2-size.csv -j 2 --csv $m/h200-l2-size-validate.csv \
        >"$log/h200-l2-size.txt"
      "$mw" validate --l2-size $m/h200-l2-size.csv -j 2 \
        --carveout-rates $m/h100-l2-carveout/carveout-1.csv \
        --csv $m/h200-l2-size-carveout-validate.csv >"$log/h200-l2-size-carveout.txt"
      say h200 variants
      python3 $m/variants_table.py -j 2 --csv $m/h200-variants-validate.csv >"$log/h200-variants.txt"
      say h200 flash3
      flash3 h200 h200-calibrated >$m/h200-flash3/compare.md
      say h200 gemm
      g=$m/h200-hopper-gemm
      python3 models/cuda/hopper/compare_gemm.py -j 2 --measured $g/gemm.csv \
        --csv $g/compare-132.csv >$g/compare-132.md
      gemm_sm_counts h200 h200-calibrated compare-smcount >$g/compare-smcount.md
      gemm_sm_counts h200 h200-calibrated compare-smcount-writeport \
        --set "xbar.write_port_bandwidth=28.5 B/cycle" >$g/compare-smcount-writeport.md
      ;;
    h100)
      cal=configs/calibrated/h100-sxm.yaml
      say h100 validate
      "$mw" validate --config $cal --sm-count $m/h100-sm-count.csv -j 2 \
        --csv $m/h100-sm-count-validate.csv >"$log/h100-sm-count.txt"
      "$mw" validate --config $cal --l2-size $m/h100-l2-size.csv -j 2 \
        --csv $m/h100-l2-size-validate.csv >"$log/h100-l2-size.txt"
      "$mw" validate --config $cal --l2-size $m/h100-l2-size.csv \
        --carveout-rates $m/h100-l2-carveout/carveout-1.csv -j 2 \
        --csv $m/h100-l2-size-carveout-validate.csv >"$log/h100-l2-size-carveout.txt"
      say h100 variants, naive-bwd
      python3 $m/variants_table.py --config $cal --measured $m/h100-variants/h100-variants.csv -j 2 \
        --csv $m/h100-variants/compare.csv >"$log/h100-variants.txt"
      python3 $m/compare_naive_bwd.py --csv $m/h100-naive-bwd/compare.csv >"$log/h100-naive-bwd.txt"
      say h100 flash3
      flash3 h100 h100-sxm-calibrated >"$log/h100-flash3.txt"
      say h100 gemm
      g=$m/h100-hopper-gemm
      python3 models/cuda/hopper/compare_gemm.py -j 2 --config h100-sxm --config h100-sxm-calibrated \
        --measured $g/gemm.csv --csv $g/compare-132.csv >"$log/h100-gemm-132.txt"
      gemm_sm_counts h100 h100-sxm-calibrated compare-smcount >"$log/h100-gemm-smcount.txt"
      ;;
    *)
      echo "rerun_recorded.sh: unknown stage '$stage' (calibrate, holdout, h200, h100)" >&2
      exit 2
      ;;
  esac
done
say done
