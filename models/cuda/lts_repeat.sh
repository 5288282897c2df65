#!/usr/bin/env bash
# Measures how repeatable the L2-side read counter is: profiles the same kernels several times
# under Nsight Compute and records, per launch, the L2 slices' read sectors from the SMs
# (lts__t_sectors_srcunit_tex_op_read), the SM-side read bytes (l1tex__m_xbar2l1tex_read_bytes)
# and, where this ncu has them, the L2 request coalescer's (lrc__) counters.
# Run from the repository root on a machine with an NVIDIA GPU and a built memwall-cuda:
#
#   models/cuda/lts_repeat.sh OUTDIR [MEMWALL_CUDA] [REPEATS]
#
# Writes OUTDIR/lrc-metrics.txt (the lrc__ and lts srcunit metrics this ncu knows), OUTDIR/lts.csv
# (ncu's raw CSV, one row per launch and metric), OUTDIR/launches.csv and OUTDIR/provenance.txt.
# Never changes the GPU's clocks or settings (ncu --clock-control none).
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
out=${1:?usage: lts_repeat.sh OUTDIR [MEMWALL_CUDA] [REPEATS]}
exe=${2:-build/memwall-cuda}
repeats=${3:-5}
mkdir -p "$out"
ncu --query-metrics >"$out/all-metrics.txt" 2>&1 || true
grep -iE "^(lrc__|lts__t_(sectors|requests)_srcunit_tex_op_read|lts__t_sectors_srcunit_ltcfabric)" \
  "$out/all-metrics.txt" >"$out/lrc-metrics.txt"
metrics=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,gpu__time_duration.sum
lrc=$(awk '/^lrc__/ {print $1 ".sum"}' "$out/lrc-metrics.txt" | paste -sd, -)
[ -n "$lrc" ] && metrics="$metrics,$lrc"
provenance "$out/provenance.txt" "repeats: $repeats" "metrics: $metrics"
cases=(
  workload=flash2,batch=1,heads=8,seq=1024,head_dim=64,block_q=64,block_kv=64,stages=2
  workload=flash2,batch=1,heads=8,seq=1024,head_dim=64,block_q=64,block_kv=64,stages=3
  workload=flash2,batch=1,heads=64,seq=2048,head_dim=64,block_q=128,block_kv=128,stages=2
  workload=naive,batch=1,heads=8,seq=1024,head_dim=64,block_q=128,block_kv=128,block_k=64,softmax_rows=4
  workload=naive,batch=1,heads=64,seq=2048,head_dim=128,block_q=128,block_kv=128,block_k=64,softmax_rows=4
)
args=()
for r in $(seq "$repeats"); do
  for c in "${cases[@]}"; do args+=(--case "$c"); done
done
ncu --clock-control none --csv --print-units base --metrics "$metrics" \
  -k 'regex:naive_qk_kernel|naive_softmax_kernel|naive_pv_kernel|flash2_fwd_kernel' \
  "$exe" "${args[@]}" --once --csv "$out/launches.csv" >"$out/lts.csv" 2>"$out/ncu.log"
echo "ncu exit $?" >>"$out/provenance.txt"
