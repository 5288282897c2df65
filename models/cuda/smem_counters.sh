#!/usr/bin/env bash
# Counts the shared-memory traffic of the real kernels under Nsight Compute, for comparison with
# the bytes the models put on the shared-memory pipe (memwall run --json: kernels[].smem_bytes).
# Run from the repository root on a machine with an NVIDIA GPU and a built memwall-cuda:
#
#   models/cuda/smem_counters.sh OUTDIR [MEMWALL_CUDA]
#
# Writes OUTDIR/metrics.txt (the shared-memory metrics this ncu knows), OUTDIR/smem.csv (ncu's
# raw CSV, one row per kernel launch and metric) and OUTDIR/provenance.txt. Never changes the
# GPU's clocks or settings (ncu --clock-control none).
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
out=${1:?usage: smem_counters.sh OUTDIR [MEMWALL_CUDA]}
exe=${2:-build/memwall-cuda}
mkdir -p "$out"
ncu --query-metrics >"$out/all-metrics.txt" 2>&1 || true
grep -iE "^(sm__sass_data_bytes_mem_shared|smsp__sass_inst_executed_op_ldsm|smsp__sass_inst_executed_op_shared|smsp__inst_executed_op_ldsm|l1tex__data_pipe_lsu_wavefronts_mem_shared)" \
  "$out/all-metrics.txt" >"$out/metrics.txt"
metrics=$(awk '{print $1 ".sum"}' "$out/metrics.txt" | paste -sd, -)
provenance "$out/provenance.txt" "metrics: $metrics"
cases=(
  workload=flash2,batch=1,heads=8,seq=1024,head_dim=64,block_q=64,block_kv=64,stages=2
  workload=flash2,batch=1,heads=8,seq=1024,head_dim=64,block_q=128,block_kv=128,stages=2
  workload=flash2,batch=1,heads=8,seq=1024,head_dim=128,block_q=128,block_kv=64,stages=2
  workload=flash2,batch=1,heads=8,seq=1024,head_dim=128,block_q=64,block_kv=128,stages=2
  workload=naive,batch=1,heads=8,seq=1024,head_dim=64,block_q=128,block_kv=128,block_k=64,softmax_rows=4
  workload=naive,batch=1,heads=8,seq=1024,head_dim=128,block_q=128,block_kv=128,block_k=64,softmax_rows=4
)
args=()
for c in "${cases[@]}"; do args+=(--case "$c"); done
ncu --clock-control none --csv --print-units base --metrics "$metrics" \
  -k 'regex:naive_qk_kernel|naive_softmax_kernel|naive_pv_kernel|flash2_fwd_kernel' \
  "$exe" "${args[@]}" --once --csv "$out/launches.csv" >"$out/smem.csv" 2>"$out/ncu.log"
echo "ncu exit $?" >>"$out/provenance.txt"
