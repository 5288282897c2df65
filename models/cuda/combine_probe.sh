#!/usr/bin/env bash
# Looks at the split-KV combine kernel (flash2_combine_kernel) of the decode cases whose time the
# model misses most (issue "Attention as it is run in 2026": B = 1, H = 32, Hkv = 8 or 1,
# Nkv = 16384, 32 or 128 splits): its SASS (are the per-split loads of O_accum in flight together,
# or one after another?) and Nsight Compute's full section set (warp stall reasons, memory
# throughput, achieved occupancy). Run from the repository root on a machine with an NVIDIA GPU:
#
#   [CASES="B:HKV:SPLITS ..."] models/cuda/combine_probe.sh OUTDIR [MEMWALL_CUDA]
#
# CASES (default "1:8:32 1:1:128", the cases first probed) are batch:kv_heads:splits at H = 32,
# Nkv = 16384, d = 128. Writes OUTDIR/sass-combine.txt and OUTDIR/ncu-b<B>-hkv<HKV>-s<S>.txt.
# Never changes the GPU's clocks or settings (ncu --clock-control none).
set -u
export PATH=$PATH:/usr/local/cuda/bin
out=${1:?usage: combine_probe.sh OUTDIR [MEMWALL_CUDA]}
exe=${2:-build/memwall-cuda}
mkdir -p "$out"
# (cuobjdump's -fun wants the mangled name: the whole dump, cut to the combine's functions.)
cuobjdump -sass "$exe" | awk '/Function :.*combine/ { p = 1 } /Function :/ && !/combine/ { p = 0 } p' \
  >"$out/sass-combine.txt"
base=workload=flash2,heads=32,seq=1,seq_kv=16384,head_dim=128,block_q=128,block_kv=64,stages=2,causal=0
for c in ${CASES:-1:8:32 1:1:128}; do
  IFS=: read -r b hkv s <<<"$c"
  spec="$base,batch=$b,kv_heads=$hkv,splits=$s"
  ncu --clock-control none --set full -k regex:flash2_combine_kernel "$exe" --case "$spec" --once \
    >"$out/ncu-b$b-hkv$hkv-s$s.txt" 2>&1
done
