#!/usr/bin/env bash
# Looks into naive qk, the kernel the calibrated simulator is most too fast on (d = 64): HBM
# bandwidth of write-only, read-only and copy streams (hbm_rw_bandwidth.py), then Nsight
# Compute's SpeedOfLight, ComputeWorkloadAnalysis, MemoryWorkloadAnalysis, WarpStateStats and
# Occupancy sections of qk at B = 4, H = 16, N = 4096 with d = 64 and d = 128.
# Run from the repository root on a machine with an NVIDIA GPU, PyTorch and a built memwall-cuda:
#
#   models/cuda/qk_probe.sh OUTDIR [MEMWALL_CUDA]
#
# Writes OUTDIR/bw.txt, OUTDIR/qk-d64.txt and OUTDIR/qk-d128.txt. Never changes the GPU's clocks
# or settings (ncu --clock-control none).
set -u
out=${1:?usage: qk_probe.sh OUTDIR [MEMWALL_CUDA]}
exe=${2:-build/memwall-cuda}
mkdir -p "$out"
python3 "$(dirname "$0")/hbm_rw_bandwidth.py" >"$out/bw.txt" 2>&1
for d in 64 128; do
  ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
    --metrics dram__bytes_write.sum.per_second,dram__bytes_read.sum.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum \
    -k regex:naive_qk_kernel "$exe" \
    --case workload=naive,batch=4,heads=16,seq=4096,head_dim=$d,block_q=128,block_kv=128,block_k=64,softmax_rows=4 \
    --once >"$out/qk-d$d.txt" 2>&1
done
