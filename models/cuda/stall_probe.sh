#!/usr/bin/env bash
# Two questions the issue probe (issue_probe.sh) left open, on the whole H200:
# 1. Where the launches its sum law leaves unexplained spend their cycles: ncu's warp-state (stall
#    reasons), scheduler, compute and memory-workload sections of flash2 at d = 128 with 64 x 128
#    tiles (tensor + issue = 0.69 of its cycles) beside 128 x 64 (0.97), and naive pv at d = 128
#    (0.71) beside d = 64 (0.94); B = 4, H = 16, N = 4096.
# 2. What the variant kernel issues in decode (Nq = 1, the G query heads of a KV head packed into
#    one Q block) and what the split-KV combine issues: the issue probe's counters at B = 16,
#    H = 32, Hkv 8 and 32, Nkv 1024, 4096 and 16384 unsplit, and Nkv 16384 in 4 and 16 splits
#    (d = 128, 128 x 64 tiles, as the measured variants).
# Run from the repository root on a machine with an NVIDIA GPU:
#
#   GIT_COMMIT=$(git rev-parse HEAD) models/cuda/stall_probe.sh OUTDIR
#
# Writes OUTDIR/{flash2-d128-64x128,flash2-d128-128x64,pv-d128,pv-d64}.txt (ncu sections),
# decode.csv (ncu's long CSV), provenance.txt, log.txt, build-log.txt. Never changes the GPU's
# clocks or settings (ncu --clock-control none).
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
probe_setup "${1:?usage: stall_probe.sh OUTDIR}" || exit 1

sections="--section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
  --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats"
decode=()
for kv in 8 32; do
  for nkv in 1024 4096 16384; do
    decode+=(--case "workload=flash2,batch=16,heads=32,seq=1,head_dim=128,causal=0,kv_heads=$kv,seq_kv=$nkv,splits=1")
  done
  for s in 4 16; do
    decode+=(--case "workload=flash2,batch=16,heads=32,seq=1,head_dim=128,causal=0,kv_heads=$kv,seq_kv=16384,splits=$s")
  done
done
decode_kernels='regex:flash2_fwd_variant_kernel|flash2_combine_kernel'
ncu --query-metrics >"$tmp/metrics.txt" 2>&1
metrics=$(known_metrics "$tmp/metrics.txt" "${ISSUE_METRICS[@]}" 2>>"$log")
provenance "$out/provenance.txt" \
  "git_commit: ${GIT_COMMIT:-unknown}" "nvcc: $(nvcc --version | grep release)" \
  "stalls: ncu --clock-control none $sections --kernel-name <kernel> $exe --case <case> --once" \
  "decode: ncu --clock-control none --metrics $metrics --csv --print-units base --kernel-name '$decode_kernels' $exe ${decode[*]} --once"
cat "$out/provenance.txt" >>"$log"
sha256sum models/cuda/*.cu models/cuda/*.h models/cuda/stall_probe.sh >>"$log"

run() {  # name, kernel regex, case
  timeout 120 ncu --clock-control none $sections --kernel-name "regex:$2" "$exe" --case "$3" \
    --once >"$out/$1.txt" 2>&1
  echo "$1 rc=$?" | tee -a "$log"
}
step "stall sections"
f="workload=flash2,batch=4,heads=16,seq=4096,head_dim=128"
n="workload=naive,batch=4,heads=16,seq=4096,block_q=128,block_kv=128,block_k=64,softmax_rows=4"
run flash2-d128-64x128 flash2_fwd_kernel "$f,block_q=64,block_kv=128,stages=2"
run flash2-d128-128x64 flash2_fwd_kernel "$f,block_q=128,block_kv=64,stages=2"
run pv-d128 naive_pv_kernel "$n,head_dim=128"
run pv-d64 naive_pv_kernel "$n,head_dim=64"

step "decode issue counters"
timeout 240 ncu --clock-control none --metrics "$metrics" --csv --print-units base \
  --kernel-name "$decode_kernels" --log-file "$tmp/decode.csv" "$exe" "${decode[@]}" --once \
  >>"$log" 2>&1
echo "decode rc=$?" | tee -a "$log"
grep -v '^==' "$tmp/decode.csv" >"$out/decode.csv"
step done
