#!/usr/bin/env bash
# Builds memwall-cuda with nvcc alone, checks every kernel variant, times the sweep, times
# PyTorch's flash backend at the same shapes, profiles a subset under Nsight Compute and merges
# everything into one CSV. Run from the repository root on a machine with an NVIDIA GPU:
#
#   models/cuda/profile.sh OUTDIR            # the full H200 sweep (sweep, profile)
#   QUICK=1 models/cuda/profile.sh OUTDIR    # the small check cases only, for a trial run
#   STEPS="check ncu" NCU_SWEEP=profile models/cuda/profile.sh OUTDIR   # some steps only
#
# STEPS (default "check timing torch ncu merge") picks the steps after the build; SWEEP (default
# sweep) and NCU_SWEEP (default profile) pick the case lists timed and profiled.
#
# Writes into OUTDIR: provenance.txt (GPU, driver, clocks, tool versions, date, commands),
# log.txt (every step's output), check.csv, timing.csv, torch_sdpa.csv, launches.csv, ncu.csv and
# merged.csv. Never changes the GPU's clocks or settings (ncu --clock-control none).
set -uo pipefail
out=${1:?usage: profile.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD_DIR:-/tmp/memwall-cuda-build}
mkdir -p "$build"
nvcc=${NVCC:-nvcc}
arch=${CUDA_ARCH:-90}
sweep=${SWEEP:-sweep}
profile_sweep=${NCU_SWEEP:-profile}
if [[ -n "${QUICK:-}" ]]; then sweep=check; profile_sweep=check; fi
steps=" ${STEPS:-check timing torch ncu merge} "
want() { [[ $steps == *" $1 "* ]]; }
log="$out/log.txt"
exe="$build/memwall-cuda"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum
kernels='regex:naive_qk_kernel|naive_softmax_kernel|naive_pv_kernel|flash2_fwd_kernel'
# The same traffic counted at the SMs (L1TEX <-> crossbar), where the chip has these metrics.
xbar_metrics=l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum

step() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$log"; }

step "metrics available"
ncu --query-metrics >"$build/metrics.txt" 2>&1 || true
grep -iE "^(lrc__|l1tex__m_xbar2l1tex_read_bytes|l1tex__m_l1tex2xbar_write_bytes)" \
  "$build/metrics.txt" >>"$log" || true
if grep -q "^l1tex__m_xbar2l1tex_read_bytes" "$build/metrics.txt" &&
   grep -q "^l1tex__m_l1tex2xbar_write_bytes" "$build/metrics.txt"; then
  metrics="$metrics,$xbar_metrics"
fi

step provenance
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git_commit: ${GIT_COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}"
  echo "--- nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  echo "--- nvidia-smi --query-gpu=memory.total,power.limit,clocks.max.mem,pstate --format=csv"
  nvidia-smi --query-gpu=memory.total,power.limit,clocks.max.mem,pstate --format=csv
  echo "--- nvcc --version"; "$nvcc" --version | tail -2
  echo "--- ncu --version"; ncu --version | tail -1
  echo "--- python3 / torch"
  python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.cuda.get_device_name())'
  echo "--- commands"
  echo "$exe --sweep check --csv check.csv"
  echo "$exe --sweep $sweep --csv timing.csv"
  echo "$exe --sweep $sweep --list > cases.csv; python3 models/cuda/torch_sdpa.py --cases cases.csv --csv torch_sdpa.csv"
  echo "ncu --clock-control none --metrics $metrics --csv --print-units base --kernel-name '$kernels' --log-file ncu.csv $exe --sweep $profile_sweep --once --csv launches.csv"
  echo "python3 models/cuda/merge_ncu.py --timing timing.csv --launches launches.csv --ncu ncu.csv --torch torch_sdpa.csv --out merged.csv"
} >"$out/provenance.txt" 2>&1
cat "$out/provenance.txt" >>"$log"

step build
mkdir -p "$build"
srcs=(models/cuda/harness.cu models/cuda/naive_attention.cu models/cuda/flash2_attention.cu
      models/cuda/green_context.cu models/cuda/l2_reserve.cu models/cuda/harness_cases.cc models/cuda/reference.cc
      sim/core/error.cc sim/core/atomic_file.cc)
pids=()
for src in "${srcs[@]}"; do
  obj="$build/$(basename "$src").o"
  "$nvcc" -std=c++17 -O3 -I. -gencode "arch=compute_$arch,code=sm_$arch" -Xptxas -v \
    -x "$([[ $src == *.cu ]] && echo cu || echo c++)" -c "$src" -o "$obj" >"$obj.log" 2>&1 &
  pids+=($!)
done
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
cat "$build"/*.o.log >>"$log"
if [[ $ok != 1 ]]; then step "build FAILED"; exit 1; fi
"$nvcc" -o "$exe" "$build"/*.o -lcuda >>"$log" 2>&1 || { step "link FAILED"; exit 1; }

if want check; then
  step "check (every variant, partial blocks)"
  "$exe" --sweep check --csv "$out/check.csv" 2>&1 | tee -a "$log" | tail -3
  [[ ${PIPESTATUS[0]} == 0 ]] || { step "check FAILED: not timing"; exit 1; }
fi

if want timing; then
  step "timing sweep ($sweep)"
  "$exe" --sweep "$sweep" --csv "$out/timing.csv" >>"$log" 2>&1; echo "rc=$?" | tee -a "$log"
fi

if want torch; then
  step "torch flash backend"
  "$exe" --sweep "$sweep" --list >"$build/cases.csv"
  PYTHONUNBUFFERED=1 python3 models/cuda/torch_sdpa.py --cases "$build/cases.csv" \
    --csv "$out/torch_sdpa.csv" >>"$log" 2>&1; echo "rc=$?" | tee -a "$log"
fi

if want ncu; then
  step "ncu ($profile_sweep, once each)"
  ncu --clock-control none --metrics "$metrics" --csv --print-units base \
    --kernel-name "$kernels" --log-file "$out/ncu.csv" \
    "$exe" --sweep "$profile_sweep" --once --csv "$out/launches.csv" >>"$log" 2>&1
  echo "rc=$?" | tee -a "$log"
fi

if want merge; then
  step merge
  python3 models/cuda/merge_ncu.py --timing "$out/timing.csv" --launches "$out/launches.csv" \
    --ncu "$out/ncu.csv" --torch "$out/torch_sdpa.csv" --out "$out/merged.csv" 2>&1 | tee -a "$log"
fi
step done
