#!/usr/bin/env bash
# Builds, checks, times and profiles the attention backward kernels of one workload on an NVIDIA
# GPU: flash2-bwd (models/cuda/flash2_backward.cu, with PyTorch SDPA's backward at the same shapes
# beside it, for comparison only) or naive-bwd (models/cuda/naive_backward.cu). From the
# repository root:
#
#   models/cuda/bwd.sh flash2-bwd|naive-bwd OUTDIR
#
# Writes into OUTDIR: check.txt (the check sweep against the CPU reference, compute-sanitizer
# memcheck and racecheck of small cases), timing.csv (--sweep measure, CUDA events), ncu.csv
# (Nsight Compute: SM-side xbar bytes, lts and DRAM bytes, instructions, time; --once), torch.csv
# (flash2-bwd only: torch_sdpa_bwd.py), build.txt (nvcc and ptxas -v). Never changes the GPU's
# clocks or settings (ncu --clock-control none).
set -u
export PATH=$PATH:/usr/local/cuda/bin
workload=${1:?usage: bwd.sh flash2-bwd|naive-bwd OUTDIR}
out=${2:?usage: bwd.sh flash2-bwd|naive-bwd OUTDIR}
case $workload in
  flash2-bwd) kernels=regex:flash2_bwd ;;
  naive-bwd) kernels="regex:naive_bwd|naive_qk|naive_softmax_bwd" ;;
  *) echo "bwd.sh: workload $workload: expected flash2-bwd or naive-bwd" >&2; exit 2 ;;
esac
mkdir -p "$out"
bin=${BUILD_DIR:-/tmp/bwd-build}
mkdir -p "$bin"
step() { echo "== $(date -u +%H:%M:%S) (${SECONDS}s) $*" | tee -a "$out/check.txt"; }
step build
{
  nvcc --version | tail -2
  for f in models/cuda/bwd_main.cu models/cuda/flash2_backward.cu models/cuda/naive_backward.cu \
           models/cuda/flash2_attention.cu models/cuda/naive_attention.cu \
           models/cuda/harness_cases.cc sim/core/error.cc; do
    nvcc -std=c++17 -O3 -I. -gencode arch=compute_90,code=sm_90 -Xptxas -v \
      -x "$([[ $f == *.cu ]] && echo cu || echo c++)" -c "$f" -o "$bin/$(basename "$f").o" || exit 1
  done
  nvcc -o "$bin/bwd-cuda" "$bin"/*.o -lcuda
} >"$out/build.txt" 2>&1 || { step "build FAILED"; tail -30 "$out/build.txt"; exit 1; }
exe=$bin/bwd-cuda
step "check sweep"
timeout 120 "$exe" --workload "$workload" --sweep check --repeats 3 >>"$out/check.txt" 2>&1
echo "rc=$?" | tee -a "$out/check.txt"
step "compute-sanitizer memcheck, racecheck (B=2 H=3 N=1000 causal, B=H=1 N=256, B=1 H=4 Hkv=2 N=200 causal; d 64 and 128)"
for d in 64 128; do
  timeout 120 compute-sanitizer --tool memcheck "$exe" --workload "$workload" --case 2,3,1000,$d,1 --once 2>&1 |
    grep -E "ERROR SUMMARY|pass|FAIL" >>"$out/check.txt"
  timeout 120 compute-sanitizer --tool racecheck "$exe" --workload "$workload" --case 1,1,256,$d,0 --once 2>&1 |
    grep -E "RACECHECK SUMMARY|hazard|pass|FAIL" >>"$out/check.txt"
  # grouped-query heads and the mask: the sum launch, and naive-bwd's grouped and masked kernels
  timeout 120 compute-sanitizer --tool memcheck "$exe" --workload "$workload" --case 1,4,200,$d,1,2 --once 2>&1 |
    grep -E "ERROR SUMMARY|pass|FAIL" >>"$out/check.txt"
  timeout 120 compute-sanitizer --tool racecheck "$exe" --workload "$workload" --case 1,4,200,$d,1,2 --once 2>&1 |
    grep -E "RACECHECK SUMMARY|hazard|pass|FAIL" >>"$out/check.txt"
done
step "timing (measure sweep)"
timeout 150 "$exe" --workload "$workload" --sweep measure --csv "$out/timing.csv" >>"$out/check.txt" 2>&1
echo "rc=$?" | tee -a "$out/check.txt"
step "ncu"
timeout 200 ncu --clock-control none --csv --print-units base --kernel-name "$kernels" \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_sectors_srcunit_tex_op_atom.sum,gpu__time_duration.sum,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second \
  --log-file "$out/ncu.csv" "$exe" --workload "$workload" --sweep measure --once >>"$out/check.txt" 2>&1
echo "rc=$?" | tee -a "$out/check.txt"
if [[ $workload == flash2-bwd ]]; then
  step "torch"
  PYTHONUNBUFFERED=1 timeout 90 python3 models/cuda/torch_sdpa_bwd.py --csv "$out/torch.csv" >>"$out/check.txt" 2>&1
  echo "rc=$?" | tee -a "$out/check.txt"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv >>"$out/check.txt"
step done
