#!/usr/bin/env bash
# Why the mma.sync kernels' warps wait, per issued instruction: ncu's per-reason stall ratios
# (smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio: cycles a warp spends
# stalled for that reason per instruction issued) beside the issue probe's counters, on the whole
# GPU: every flash2 tiling of the measured sweep and naive qk and pv at d = 64 and 128 (B = 4,
# H = 16, N = 1024 and 4096), and the variant kernel in decode (d = 128, Nkv = 16384, unsplit) at
# 8, 128 and 512 CTAs. With one warp per scheduler a warp's own dependencies (fixed-latency
# `wait`, scoreboards, dispatch) are not hidden by other warps; with more they are: this measures
# how many cycles per instruction they are, kernel by kernel.
# Run from the repository root on a machine with an NVIDIA GPU:
#
#   GIT_COMMIT=$(git rev-parse HEAD) [STALL_SET=variants] models/cuda/stall_reasons.sh OUTDIR
#
# STALL_SET=variants measures the variant kernels instead: the split-KV combine
# (flash2_combine_kernel, d = 128, H = 32) at the 18 combine launches of the variants table
# (traces/measured/h200-variants.csv) and, for its instruction count, B = 1, Nkv = 16384 with 2 to
# 128 splits at Hkv 8 (4 rows per CTA) and 32 (1); and flash2_fwd_variant_kernel in the table's
# causal prefill (B = 1, H = 16, N = 1024 and 4096, d = 64 and 128).
#
# STALL_SET=small measures naive qk and pv on small grids instead, where a CTA has its SM alone or
# shares it with one other for one or two waves (B = 1, H = 8, N = 512, 1024 and 2048, d = 64 and
# 128), beside the same kernels at B = 4, H = 16, N = 1024 (about 8 waves), with the SMs' active
# cycles: how much of a lone CTA's time its loads, shared-memory reads, MMAs and other
# instructions overlap.
#
# Writes OUTDIR/stalls.csv (ncu's long CSV), provenance.txt, log.txt, build-log.txt. Never changes
# the GPU's clocks or settings (ncu --clock-control none).
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
probe_setup "${1:?usage: stall_reasons.sh OUTDIR}" || exit 1

naive() { echo "workload=naive,batch=4,heads=16,seq=$1,head_dim=$2,block_q=128,block_kv=128,block_k=64,softmax_rows=4"; }
tiled() { echo "workload=flash2,batch=4,heads=16,seq=$1,head_dim=$2,block_q=$3,block_kv=$4,stages=$5"; }
cases=()
for n in 1024 4096; do
  for t in "64 128 128 2" "128 128 64 2" "64 128 64 2" "64 64 128 2" "64 64 64 2" "64 64 64 3" \
           "128 128 32 2" "128 64 128 2" "128 64 64 2" "128 64 64 3"; do
    set -- $t
    cases+=(--case "$(tiled $n $1 $2 $3 $4)")
  done
  cases+=(--case "$(naive $n 64)" --case "$(naive $n 128)")
done
# Decode on the variant kernel (d = 128, 128 x 64 tiles, Nkv = 16384, unsplit): 8 and 128 CTAs
# (one per SM, one warp per scheduler) and 512 (about four per SM).
for bk in "1 8" "16 8" "16 32"; do
  set -- $bk
  cases+=(--case "workload=flash2,batch=$1,heads=32,seq=1,head_dim=128,block_q=128,block_kv=64,stages=2,causal=0,kv_heads=$2,seq_kv=16384,splits=1")
done
kernels='regex:naive_qk_kernel|naive_pv_kernel|flash2_fwd_kernel|flash2_fwd_variant_kernel'
if [[ ${STALL_SET:-mma} == variants ]]; then
  decode() {  # B HKV NKV SPLITS
    echo "workload=flash2,batch=$1,heads=32,seq=1,head_dim=128,block_q=128,block_kv=64,stages=2,causal=0,kv_heads=$2,seq_kv=$3,splits=$4"
  }
  cases=()
  for c in 1:32:1024:8 1:8:1024:8 1:1:1024:8 16:8:1024:2 16:1:1024:8 64:1:1024:4 \
           1:32:16384:7 1:8:16384:32 1:1:16384:128 16:8:16384:2 16:1:16384:15 64:1:16384:4 \
           1:32:65536:7 1:8:65536:29 1:1:65536:128 16:8:65536:2 16:1:65536:14 64:1:65536:4; do
    IFS=: read -r b hkv nkv s <<<"$c"
    cases+=(--case "$(decode "$b" "$hkv" "$nkv" "$s")")
  done
  for s in 2 3 4 5 8 12 16 20 24 28 64 96; do cases+=(--case "$(decode 1 8 16384 "$s")"); done
  for s in 2 4 8 16 32 128; do cases+=(--case "$(decode 1 32 16384 "$s")"); done
  for n in 1024 4096; do
    cases+=(--case "workload=flash2,batch=1,heads=16,seq=$n,head_dim=64,block_q=128,block_kv=128,stages=2,causal=1")
    cases+=(--case "workload=flash2,batch=1,heads=16,seq=$n,head_dim=128,block_q=128,block_kv=64,stages=2,causal=1")
  done
  kernels='regex:flash2_combine_kernel|flash2_fwd_variant_kernel'
elif [[ ${STALL_SET:-mma} == small ]]; then
  cases=()
  for n in 512 1024 2048; do
    for d in 64 128; do
      cases+=(--case "workload=naive,batch=1,heads=8,seq=$n,head_dim=$d,block_q=128,block_kv=128,block_k=64,softmax_rows=4")
    done
  done
  cases+=(--case "$(naive 1024 64)" --case "$(naive 1024 128)")
  kernels='regex:naive_qk_kernel|naive_pv_kernel'
fi
reasons="barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard
  math_pipe_throttle membar mio_throttle misc no_instruction not_selected selected
  short_scoreboard sleeping tex_throttle wait"
wanted=("${ISSUE_METRICS[@]}" smsp__warps_active.avg.per_cycle_active sm__cycles_active.avg
  sm__cycles_active.max dram__bytes_read.sum lts__t_sectors_srcunit_tex_op_read.sum)
for r in $reasons; do wanted+=("smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"); done
ncu --query-metrics >"$tmp/metrics.txt" 2>&1
metrics=$(known_metrics "$tmp/metrics.txt" "${wanted[@]}" 2>>"$log")
echo "metrics: $metrics" >>"$log"
provenance "$out/provenance.txt" \
  "git_commit: ${GIT_COMMIT:-unknown}" "nvcc: $(nvcc --version | grep release)" \
  "stalls: ncu --clock-control none --metrics <log.txt> --csv --print-units base --kernel-name '$kernels' $exe ${cases[*]} --once"
cat "$out/provenance.txt" >>"$log"
sha256sum models/cuda/*.cu models/cuda/*.h models/cuda/stall_reasons.sh >>"$log"
step "stall reasons"
timeout 400 ncu --clock-control none --metrics "$metrics" --csv --print-units base \
  --kernel-name "$kernels" --log-file "$tmp/stalls.csv" "$exe" "${cases[@]}" --once >>"$log" 2>&1
echo "rc=$?" | tee -a "$log"
grep -v '^==' "$tmp/stalls.csv" >"$out/stalls.csv"
step done
