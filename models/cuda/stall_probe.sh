#!/usr/bin/env bash
# Where the launches the issue probe's sum law leaves unexplained spend their cycles: ncu's
# warp-state (stall reasons), scheduler, compute and memory-workload sections of flash2 at d = 128
# with 64 x 128 tiles (tensor + issue = 0.69 of its cycles) beside 128 x 64 (0.97), and naive pv
# at d = 128 (0.71) beside d = 64 (0.94); B = 4, H = 16, N = 4096, all SMs.
# Run from the repository root on a machine with an NVIDIA GPU:
#
#   GIT_COMMIT=$(git rev-parse HEAD) models/cuda/stall_probe.sh OUTDIR
#
# Writes OUTDIR/{flash2-d128-64x128,flash2-d128-128x64,pv-d128,pv-d64}.txt, provenance.txt,
# log.txt. Never changes the GPU's clocks or settings (ncu --clock-control none).
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
out=${1:?usage: stall_probe.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD_DIR:-/tmp/memwall-cuda-build}
exe="$build/memwall-cuda"
log="$out/log.txt"
STEPS=build BUILD_DIR="$build" bash models/cuda/profile.sh "$(mktemp -d)" >>"$log" 2>&1
[[ -x $exe ]] || { echo "build failed" | tee -a "$log"; exit 1; }
sections="--section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
  --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats"
provenance "$out/provenance.txt" \
  "git_commit: ${GIT_COMMIT:-unknown}" "nvcc: $(nvcc --version | grep release)" \
  "command: ncu --clock-control none $sections --kernel-name <kernel> $exe --case <case> --once"
run() {  # name, kernel regex, case
  timeout 120 ncu --clock-control none $sections --kernel-name "regex:$2" "$exe" --case "$3" \
    --once >"$out/$1.txt" 2>&1
  echo "$1 rc=$?" | tee -a "$log"
}
f="workload=flash2,batch=4,heads=16,seq=4096,head_dim=128"
n="workload=naive,batch=4,heads=16,seq=4096,block_q=128,block_kv=128,block_k=64,softmax_rows=4"
run flash2-d128-64x128 flash2_fwd_kernel "$f,block_q=64,block_kv=128,stages=2"
run flash2-d128-128x64 flash2_fwd_kernel "$f,block_q=128,block_kv=64,stages=2"
run pv-d128 naive_pv_kernel "$n,head_dim=128"
run pv-d64 naive_pv_kernel "$n,head_dim=64"
