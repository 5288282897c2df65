#!/usr/bin/env bash
# Runs and measures the streaming softmax of naive attention (naive_softmax_stream_kernel, issue
# "A user's first hour", finding 22), in one device call:
#   1. `memwall-cuda --sweep check`: every naive check case also runs the streaming softmax on its
#      S and compares P with the shared-memory kernel's ("streamed softmax vs shared-memory
#      softmax: P rel diff ...");
#   2. the kernel's warp instructions per row and per 1024 keys (smsp__inst_executed at N = 32768
#      and 65536, where the launcher streams; the model's 320 and 760 in models/naive.cc are
#      estimates until then), with its DRAM bytes (the model predicts the second pass misses the
#      L2 at these N) and its time;
#   3. the timed runs of the same two cases (CUDA events, the harness's CSV).
# Run from the repository root on a machine with an NVIDIA GPU and a built memwall-cuda:
#
#   models/cuda/softmax_stream.sh OUTDIR [MEMWALL_CUDA]
#
# Writes OUTDIR/check.txt, OUTDIR/ncu-N.txt and OUTDIR/timed.csv. Never changes the GPU's clocks
# or settings (ncu --clock-control none).
set -u
out=${1:?usage: softmax_stream.sh OUTDIR [MEMWALL_CUDA]}
exe=${2:-build/memwall-cuda}
mkdir -p "$out"
"$exe" --sweep check >"$out/check.txt" 2>&1
for n in 32768 65536; do
  ncu --clock-control none --section SpeedOfLight \
    --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum \
    -k regex:naive_softmax_stream_kernel "$exe" \
    --case workload=naive,batch=1,heads=1,seq=$n,head_dim=64,block_q=128,block_kv=128,block_k=64,softmax_rows=4 \
    --once >"$out/ncu-$n.txt" 2>&1
done
"$exe" --case workload=naive,batch=1,heads=1,seq=32768,head_dim=64,block_q=128,block_kv=128,block_k=64,softmax_rows=4 \
  --case workload=naive,batch=1,heads=1,seq=65536,head_dim=64,block_q=128,block_kv=128,block_k=64,softmax_rows=4 \
  >"$out/timed.csv" 2>"$out/timed.log"
