#!/usr/bin/env bash
# Builds and runs power.cu (board power and SM clock under sustained work of one kind on n SMs)
# on the GPU of this machine, with nvidia-smi sampling power and clocks every 20 ms beside it.
# Needs an H100/H200 and nvcc; run from anywhere:
#
#   COMMIT=$(git rev-parse --short HEAD) models/cuda/ubench/power.sh OUTDIR [power.cu options]
#
# OUTDIR gets power.csv (the program's table), smi.csv (the samples), log.txt (provenance, the
# ptxas report, stderr). Reads the GPU's state, never changes its clocks or settings.
set -u -o pipefail
out=${1:?usage: power.sh OUTDIR [options]}
shift
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh"
mkdir -p "$out"
log=$out/log.txt
ub_log_header "$log" power.cu ubench_common.cuh ../hopper/hopper_ptx.cuh power.sh
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
# wgmma needs sm_90a (the -gencode form: -arch=sm_90a also runs a plain sm_90 pass).
if ! nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -std=c++20 -Xptxas -v -o "$bin/power" \
  "$here/power.cu" -ldl >"$bin/build.txt" 2>&1; then
  cat "$bin/build.txt" >>"$log"
  echo "FAILED: build of power.cu" >>"$log"
  exit 1
fi
grep -E "Compiling entry|Used|spill|warning" "$bin/build.txt" | sed -e 's/ptxas info    : //' >>"$log"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,power.draw.instant,power.limit,temperature.gpu,clocks_event_reasons.sw_power_cap \
  --format=csv,nounits -lms 20 >"$out/smi.csv" 2>>"$log" &
smi=$!
echo "run: power $* (started $(date -u +%H:%M:%S.%N | cut -c1-12))" >>"$log"
"$bin/power" "$@" >"$out/power.csv" 2>>"$log"
status=$?
echo "ended $(date -u +%H:%M:%S.%N | cut -c1-12), status $status" >>"$log"
kill "$smi" 2>/dev/null
wait "$smi" 2>/dev/null
exit $status
