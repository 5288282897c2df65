#!/usr/bin/env bash
# Builds, checks, times and profiles the FlashAttention-2 backward kernels
# (models/cuda/flash2_backward.cu, the twin of memwall's flash2-bwd workload) on an NVIDIA GPU,
# with PyTorch SDPA's backward at the same shapes beside it (for comparison only). From the
# repository root:
#
#   models/cuda/flash2_bwd.sh OUTDIR
#
# Writes into OUTDIR: check.txt (the check sweep against the CPU reference, compute-sanitizer
# memcheck and racecheck of one case), timing.csv (--sweep measure, CUDA events), ncu.csv (Nsight
# Compute: SM-side xbar bytes, lts and DRAM bytes, time; --once), torch.csv
# (torch_sdpa_bwd.py), build.txt (nvcc and ptxas -v). Never changes the GPU's clocks or settings
# (ncu --clock-control none).
set -u
export PATH=$PATH:/usr/local/cuda/bin
out=${1:?usage: flash2_bwd.sh OUTDIR}
mkdir -p "$out"
bin=${BUILD_DIR:-/tmp/flash2-bwd-build}
mkdir -p "$bin"
step() { echo "== $(date -u +%H:%M:%S) (${SECONDS}s) $*" | tee -a "$out/check.txt"; }
step build
{
  nvcc --version | tail -2
  for f in models/cuda/flash2_bwd_main.cu models/cuda/flash2_backward.cu \
           models/cuda/flash2_attention.cu models/cuda/harness_cases.cc sim/core/error.cc; do
    nvcc -std=c++17 -O3 -I. -gencode arch=compute_90,code=sm_90 -Xptxas -v \
      -x "$([[ $f == *.cu ]] && echo cu || echo c++)" -c "$f" -o "$bin/$(basename "$f").o" || exit 1
  done
  nvcc -o "$bin/flash2-bwd-cuda" "$bin"/*.o -lcuda
} >"$out/build.txt" 2>&1 || { step "build FAILED"; tail -30 "$out/build.txt"; exit 1; }
exe=$bin/flash2-bwd-cuda
step "check sweep"
timeout 120 "$exe" --sweep check --repeats 3 >>"$out/check.txt" 2>&1
echo "rc=$?" | tee -a "$out/check.txt"
step "compute-sanitizer memcheck, racecheck (B=2 H=3 N=1000, d 64 and 128)"
for d in 64 128; do
  timeout 120 compute-sanitizer --tool memcheck "$exe" --case 2,3,1000,$d,1 --once 2>&1 |
    grep -E "ERROR SUMMARY|pass|FAIL" >>"$out/check.txt"
  timeout 120 compute-sanitizer --tool racecheck "$exe" --case 1,1,256,$d,0 --once 2>&1 |
    grep -E "RACECHECK SUMMARY|hazard|pass|FAIL" >>"$out/check.txt"
done
step "timing (measure sweep)"
timeout 150 "$exe" --sweep measure --csv "$out/timing.csv" >>"$out/check.txt" 2>&1
echo "rc=$?" | tee -a "$out/check.txt"
step "ncu"
timeout 200 ncu --clock-control none --csv --print-units base --kernel-name regex:flash2_bwd \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_sectors_srcunit_tex_op_atom.sum,gpu__time_duration.sum,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second \
  --log-file "$out/ncu.csv" "$exe" --sweep measure --once >>"$out/check.txt" 2>&1
echo "rc=$?" | tee -a "$out/check.txt"
step "torch"
PYTHONUNBUFFERED=1 timeout 90 python3 models/cuda/torch_sdpa_bwd.py --csv "$out/torch.csv" >>"$out/check.txt" 2>&1
echo "rc=$?" | tee -a "$out/check.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv >>"$out/check.txt"
step done
