#!/usr/bin/env bash
# Builds hbm_bw.cu and runs its L2-resident streams (`hbm_bw l2`) on the GPU of this machine:
# OUT/l2_bw-1.csv and l2_bw-2.csv (two passes: the L2's read and write bandwidth from 1 ... all
# SMs against the bytes each SM keeps in flight; columns in hbm_bw.cu), OUT/hbm_bw.csv (the same
# build's HBM streams, to set beside the earlier runs of traces/measured/h*-ubench), OUT/smi.csv (nvidia-smi every 100 ms during the run) and
# OUT/log.txt (the GPU, its clocks, the build's ptxas lines, the sources' sha256, the commit given
# as COMMIT). No GPU setting is changed. Then: python3 models/cuda/ubench/l2_bw_table.py OUT.
# Usage: models/cuda/ubench/l2_bw.sh OUT
set -euo pipefail
out=${1:?usage: l2_bw.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh"
mkdir -p "$out"
log="$out/log.txt"
ub_log_header "$log" hbm_bw.cu ubench_common.cuh l2_bw.sh
bin=$(mktemp -d)
ub_build "$bin/hbm_bw" hbm_bw.cu "$log"
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv -lms 100 >"$out/smi.csv" 2>&1 &
smi=$!
for pass in 1 2; do "$bin/hbm_bw" l2 >"$out/l2_bw-$pass.csv" 2>>"$log"; done
"$bin/hbm_bw" >"$out/hbm_bw.csv" 2>>"$log"
kill "$smi" 2>/dev/null || true
wait "$smi" 2>/dev/null || true
echo "done" >>"$log"
