#!/usr/bin/env bash
# Builds the Hopper-native kernels of models/cuda/hopper for sm_90a, checks and times them beside
# cuBLAS, and profiles them under Nsight Compute. Needs an H100/H200 and nvcc; run from anywhere:
#
#   models/cuda/hopper/run_gemm.sh OUTDIR            # every step
#   STEPS="smcount ncu" models/cuda/hopper/run_gemm.sh OUTDIR   # some steps only
#
# Steps (STEPS, default "timing smcount ncu"; the build and a quick check run always):
#   timing   gemm.csv: every case timed beside cuBLAS on the same buffers, with the SM clock;
#   smcount  gemm_sm<N>.csv for N in SMS (default "132 66 33 16"): the SM-count experiment's
#            shapes in a green context of N SMs, one process each;
#   ncu      gemm_ncu.csv: ncu of each kernel once at three shapes, bytes in base units;
#   phases   gemm_phases.csv: wgmma_gemm --phases (where CTA 0's time goes in the small launches:
#            its stamps from entry to the first TMA issue, the first stage landed, the first
#            tile's wgmmas done, the first and last store issued and the end; warm and after an L2
#            scrub), not in the default steps;
#   ncu-small  gemm_ncu_small.csv: the same for the naive shapes of B*H 8, N 1024 and 2048
#            (wgmma_gemm --profile-small: the timed sweep's smallest launches, under ncu's
#            duration and clock instead of CUDA events), and gemm_stalls_small.txt (ncu's warp
#            state and scheduler sections of the same launches, the checks' 10 skipped), not in
#            the default steps;
#   tma      tma_bw.csv: per-SM bandwidth of TMA stores, TMA loads and st.global against active
#            SMs and transfers in flight (tma_bw.cu).
# log.txt: provenance, the ptxas report, SASS opcode counts, the checks against the CPU and
# cuBLAS, the TMA- and tensor-pipe-related metric names ncu offers.
# Never changes the GPU's clocks or settings (ncu --clock-control none). Exit status 1 on failure.
set -u -o pipefail
out=${1:?usage: run_gemm.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mkdir -p "$out"
log=$out/log.txt
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
note() { echo "== $(date -u +%H:%M:%S.%N | cut -c1-12) $*" >>"$log"; }
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I"$root")
status=0

. "$root/models/cuda/provenance.sh"
provenance "$log" "nvcc: $(nvcc --version | grep release)" \
  "command: models/cuda/hopper/run_gemm.sh OUTDIR${QUICK:+ (QUICK=1)}" \
  "tree: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no git metadata')"
{
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu --format=csv
  echo "sources (sha256):"
  (cd "$here" && sha256sum ./*.cu ./*.cuh ./*.sh)
} >>"$log" 2>&1

note "build: nvcc ${flags[*]} -Xptxas -v"
steps=" ${STEPS:-timing smcount ncu tma} "
want() { [[ $steps == *" $1 "* ]]; }
if ! nvcc "${flags[@]}" -Xptxas -v -o "$bin/wgmma_gemm" "$here/wgmma_gemm.cu" \
    "$root/models/cuda/green_context.cu" -lcuda -lcublas \
    >"$bin/build" 2>&1; then
  cat "$bin/build" >>"$log"
  echo "FAILED: build" | tee -a "$log"
  exit 1
fi
grep -E "Compiling entry|Used|spill|warning" "$bin/build" | sed -e 's/ptxas info    : //' | c++filt >>"$log"

note "SASS: opcode counts per kernel"
sass_counts "$bin/wgmma_gemm" >>"$log" 2>&1

if want tma; then
  note "build and run tma_bw"
  if nvcc "${flags[@]}" -o "$bin/tma_bw" "$here/tma_bw.cu" -lcuda >>"$log" 2>&1 &&
     timeout 120 "$bin/tma_bw" >"$out/tma_bw.csv" 2>>"$log"; then
    awk -F, 'NR == 1 || $4 == 4 || $4 == 1' "$out/tma_bw.csv" | cut -d, -f1-4,7,8,10 | tail -100
  else
    echo "FAILED: tma_bw" | tee -a "$log"
    status=1
  fi
fi
# A hang (a barrier never completing) costs at most the quick run's minute.
note "run --quick"
if ! timeout 60 "$bin/wgmma_gemm" --quick >"$bin/quick.csv" 2>>"$log"; then
  echo "FAILED: wgmma_gemm --quick" | tee -a "$log"
  tail -20 "$log"
  exit 1
fi
if want timing; then
  note "run"
  if ! timeout 300 "$bin/wgmma_gemm" >"$out/gemm.csv" 2>>"$log"; then
    echo "FAILED: wgmma_gemm" | tee -a "$log"
    status=1
  fi
fi
if want smcount; then
  for n in ${SMS:-132 66 33 16}; do
    note "run --smcount --sms $n"
    if ! timeout 200 "$bin/wgmma_gemm" --smcount --sms "$n" >"$out/gemm_sm$n.csv" 2>>"$log"; then
      echo "FAILED: wgmma_gemm --smcount --sms $n" | tee -a "$log"
      status=1
    fi
  done
fi
if want phases; then
  note "run --phases"
  if ! timeout 120 "$bin/wgmma_gemm" --phases >"$out/gemm_phases.csv" 2>>"$log"; then
    echo "FAILED: wgmma_gemm --phases" | tee -a "$log"
    status=1
  fi
fi
grep -E "check|FAIL" "$log" | tail -12

want ncu || want ncu-small || { note "done, status $status"; exit $status; }
note "ncu metric names with tma/bulk/gmma/tensor"
ncu --query-metrics --chip gh100 2>/dev/null | grep -iE "tma|bulk|xbar2l1tex|l1tex2xbar|gmma|pipe_tensor" >>"$log" || true
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics+=,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
metrics+=,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum
metrics+=,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,smsp__inst_executed.sum
extra=$(ncu --query-metrics --chip gh100 2>/dev/null | awk '{print $1}' |
  grep -iE "^(l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma|l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma|smsp__inst_executed_op_tma|l1tex__t_bytes_pipe_tma|lts__t_sectors_srcunit_.*tma|sm__pipe_tensor_op_gmma_cycles_active|sm__inst_executed_pipe_tensor_op_gmma)" |
  sed 's/$/.sum/' | paste -sd, -)
[[ -n $extra ]] && metrics+=,$extra
echo "metrics: $metrics" >>"$log"
for run in "ncu --profile gemm_ncu" "ncu-small --profile-small gemm_ncu_small"; do
  read -r step flag file <<<"$run"
  want "$step" || continue
  note "ncu $flag"
  if timeout 240 ncu --clock-control none --kernel-name regex:wgmma_gemm_kernel --metrics "$metrics" \
      -o "$bin/$file" "$bin/wgmma_gemm" "$flag" >>"$log" 2>&1; then
    ncu -i "$bin/$file.ncu-rep" --csv --page raw --print-units base >"$out/$file.csv" 2>>"$log"
  else
    echo "FAILED: ncu $flag" | tee -a "$log"
    status=1
  fi
done
if want ncu-small; then
  note "ncu sections --profile-small"
  timeout 240 ncu --clock-control none --kernel-name regex:wgmma_gemm_kernel --launch-skip 10 \
    --section WarpStateStats --section SchedulerStats --section LaunchStats \
    "$bin/wgmma_gemm" --profile-small >"$out/gemm_stalls_small.txt" 2>>"$log" ||
    { echo "FAILED: ncu sections" | tee -a "$log"; status=1; }
fi
note "done, status $status"
for f in "$out"/gemm*.csv; do [[ $f == *ncu* ]] || { echo "-- $f"; cut -d, -f1-10 "$f"; }; done | tail -60
exit $status
