#!/usr/bin/env bash
# Where the mma.sync kernels' time goes beyond the tensor pipe: their warp instructions, issue
# slots and tensor-pipe instructions under Nsight Compute, at several sequence lengths per head
# dimension, so that each kernel's instruction count can be written as a per-tile term plus a
# per-CTA term (the model declares what the kernel issues), on the whole H200 and in a green
# context of 16 SMs. Cases: flash2 (d = 64, 128 x 128 tiles; d = 128, 128 x 64) at N = 1024,
# 2048 and 4096, and its variant kernel (4:1 GQA) at the same shapes without and with the causal
# mask; flash2's other tilings of the measured sweep at N = 1024 and 4096; naive qk and pv
# (d = 64 and 128) at N = 1024 and 4096.
# Run from the repository root on a machine with an NVIDIA GPU:
#
#   GIT_COMMIT=$(git rev-parse HEAD) models/cuda/issue_probe.sh OUTDIR
#
# Writes into OUTDIR: issue.csv (ncu's long CSV, first column the SM setting: `none` = all SMs,
# `16` = a green context), stalls-{fwd,bwd}-d{64,128}.txt (ncu's warp-state, scheduler,
# occupancy and launch sections of flash2's forward and backward kernels), log.txt,
# provenance.txt, build-log.txt. Never changes the GPU's clocks
# or settings (ncu --clock-control none).
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
probe_setup "${1:?usage: issue_probe.sh OUTDIR}" || exit 1

naive() { echo "workload=naive,batch=4,heads=16,seq=$1,head_dim=$2,block_q=128,block_kv=128,block_k=64,softmax_rows=4"; }
flash() { echo "workload=flash2,batch=4,heads=16,seq=$1,head_dim=$2,block_q=128,block_kv=$3,stages=2"; }
variant() { echo "workload=flash2,batch=4,heads=16,seq=$1,head_dim=$2,block_q=128,block_kv=$3,stages=2,causal=$4,kv_heads=4,seq_kv=$1,splits=1"; }
tiled() { echo "workload=flash2,batch=4,heads=16,seq=$1,head_dim=$2,block_q=$3,block_kv=$4,stages=$5"; }
cases=()
for n in 1024 2048 4096; do
  cases+=(--case "$(flash $n 64 128)" --case "$(flash $n 128 64)")
  for c in 0 1; do cases+=(--case "$(variant $n 64 128 $c)" --case "$(variant $n 128 64 $c)"); done
done
# The other tilings of the measured sweep (traces/measured/h200-sweep.csv), at two lengths.
for n in 1024 4096; do
  for t in "64 128 64 2" "64 64 128 2" "64 64 64 2" "64 64 64 3" \
           "128 128 32 2" "128 64 128 2" "128 64 64 2" "128 64 64 3"; do
    set -- $t
    cases+=(--case "$(tiled $n $1 $2 $3 $4)")
  done
done
for n in 1024 4096; do
  cases+=(--case "$(naive $n 64)" --case "$(naive $n 128)")
done
kernels='regex:naive_qk_kernel|naive_pv_kernel|flash2_fwd_kernel|flash2_fwd_variant_kernel'

# The counters wanted, less any this ncu does not have (one unknown name fails the whole run).
ncu --query-metrics >"$tmp/metrics.txt" 2>&1
metrics=$(known_metrics "$tmp/metrics.txt" "${ISSUE_METRICS[@]}" 2>>"$log")
echo "metrics: $metrics" >>"$log"

provenance "$out/provenance.txt" \
  "git_commit: ${GIT_COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}" \
  "nvcc: $(nvcc --version | grep release)" \
  "issue: ncu --clock-control none --metrics <log.txt> --csv --print-units base --kernel-name '$kernels' $exe ${cases[*]} [--sms 16] --once"
cat "$out/provenance.txt" >>"$log"
sha256sum models/cuda/*.cu models/cuda/*.h models/cuda/issue_probe.sh >>"$log"

for sms in none 16; do
  extra=()
  [[ $sms != none ]] && extra=(--sms "$sms")
  step "issue, sms $sms"
  timeout 240 ncu --clock-control none --metrics "$metrics" --csv --print-units base \
    --kernel-name "$kernels" --log-file "$tmp/issue-$sms.csv" \
    "$exe" "${cases[@]}" "${extra[@]}" --once >>"$log" 2>&1
  echo "rc=$?" | tee -a "$log"
  sed "s/^/$sms,/" "$tmp/issue-$sms.csv" | grep -v '^[a-z0-9]*,==' >>"$tmp/issue.csv"
done
cp "$tmp/issue.csv" "$out/issue.csv"

# Where the warps of flash2's forward and backward kernels wait (the backward kernel takes about
# twice its tensor + issue cycles): ncu's warp-state and scheduler sections, whole chip.
step "stall sections: flash2 forward (d = 64, 128), N = 4096"
for d in 64 128; do
  bkv=$([[ $d == 64 ]] && echo 128 || echo 64)
  timeout 120 ncu --clock-control none --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --kernel-name regex:flash2_fwd_kernel \
    "$exe" --case "$(flash 4096 $d $bkv)" --once >"$out/stalls-fwd-d$d.txt" 2>&1
  echo "rc=$?" | tee -a "$log"
done
step "build bwd-cuda (as bwd.sh)"
bin=$tmp/bwd-build
mkdir -p "$bin"
{
  for f in models/cuda/bwd_main.cu models/cuda/flash2_backward.cu models/cuda/naive_backward.cu \
           models/cuda/flash2_attention.cu models/cuda/naive_attention.cu \
           models/cuda/harness_cases.cc sim/core/error.cc; do
    nvcc -std=c++17 -O3 -I. -gencode arch=compute_90,code=sm_90 \
      -x "$([[ $f == *.cu ]] && echo cu || echo c++)" -c "$f" -o "$bin/$(basename "$f").o" || exit 1
  done
  nvcc -o "$bin/bwd-cuda" "$bin"/*.o -lcuda
} >>"$log" 2>&1
step "stall sections: flash2-bwd (d = 64, 128), B = 1, H = 16, N = 4096"
for d in 64 128; do
  timeout 120 ncu --clock-control none --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --kernel-name regex:flash2_bwd_kernel \
    "$bin/bwd-cuda" --workload flash2-bwd --case 1,16,4096,$d,0 --once \
    >"$out/stalls-bwd-d$d.txt" 2>&1
  echo "rc=$?" | tee -a "$log"
done
step done
