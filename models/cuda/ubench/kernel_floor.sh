#!/usr/bin/env bash
# Builds kernel_floor.cu and runs it under Nsight Compute on the GPU of this machine: the
# gpu__time_duration of empty and nearly empty kernels of 1 to 33792 CTAs (what a kernel costs
# before it does anything, in the terms the calibration fits). Writes OUT/launches.csv (the
# program's list of launches), OUT/ncu.csv (ncu's rows, base units) and OUT/log.txt (GPU, clocks,
# ptxas, sha256 of the sources, the commit given as COMMIT). Never changes the GPU's clocks or
# settings (ncu --clock-control none).
# Usage: models/cuda/ubench/kernel_floor.sh OUT
set -euo pipefail
out=${1:?usage: kernel_floor.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh"
mkdir -p "$out"
log="$out/log.txt"
ub_log_header "$log" kernel_floor.cu ubench_common.cuh kernel_floor.sh
bin=$(mktemp -d)
ub_build "$bin/kernel_floor" kernel_floor.cu "$log"
ncu --clock-control none --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,gpc__cycles_elapsed.max \
  --csv --print-units base --log-file "$out/ncu.csv" "$bin/kernel_floor" >"$out/launches.csv" 2>>"$log"
echo "done" >>"$log"
