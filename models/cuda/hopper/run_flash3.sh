#!/usr/bin/env bash
# Builds the FlashAttention-3-style forward (flash3_attention.cu) for sm_90a, checks it against a
# CPU reference, times it beside PyTorch's SDPA (flash and cuDNN backends, the same shapes), runs
# the SM-count experiment in green contexts and profiles it under Nsight Compute. Needs an
# H100/H200, nvcc and (for the PyTorch step) torch; run from anywhere:
#
#   models/cuda/hopper/run_flash3.sh OUTDIR
#   STEPS="timing ncu" models/cuda/hopper/run_flash3.sh OUTDIR
#
# Steps (STEPS, default "timing torch smcount ncu"; the build and a quick run with the checks
# always run first):
#   timing   fa3.csv: the sweep timed (L2 flushed before each launch), with the SM clock;
#   torch    torch_flash.csv, torch_cudnn.csv: PyTorch at the sweep's shapes (comparison only);
#   smcount  fa3_sm<N>.csv for N in SMS (default "132 66 33 16"), one process each;
#   ncu      fa3_ncu.csv: ncu of each --profile case once, bytes in base units, and the
#            speed-of-light, occupancy and warp-state sections of the first case (fa3_ncu_sol.txt);
#   variants fa3_variants.csv: three shapes as the forward, its products alone and its softmax
#            alone (--variants), and fa3_variants_ncu.csv: ncu of each once (not in the default).
# log.txt: provenance, the ptxas report, SASS opcode counts, the checks.
# Never changes the GPU's clocks or settings (ncu --clock-control none). Exit status 1 on failure.
set -u -o pipefail
out=${1:?usage: run_flash3.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mkdir -p "$out"
log=$out/log.txt
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
note() { echo "== $(date -u +%H:%M:%S.%N | cut -c1-12) $*" >>"$log"; }
flags=(-O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I"$root")
status=0
steps=" ${STEPS:-timing torch smcount ncu} "
want() { [[ $steps == *" $1 "* ]]; }

. "$root/models/cuda/provenance.sh"
provenance "$log" "nvcc: $(nvcc --version | grep release)" \
  "command: models/cuda/hopper/run_flash3.sh OUTDIR (STEPS:${steps})" \
  "tree: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no git metadata')"
{
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
  echo "sources (sha256):"
  (cd "$here" && sha256sum flash3_attention.cu hopper_ptx.cuh run_flash3.sh)
} >>"$log" 2>&1

note "build: nvcc ${flags[*]} -Xptxas -v"
if ! nvcc "${flags[@]}" -Xptxas -v -o "$bin/fa3" "$here/flash3_attention.cu" \
    "$root/models/cuda/green_context.cu" -lcuda >"$bin/build" 2>&1; then
  cat "$bin/build" >>"$log"
  echo "FAILED: build" | tee -a "$log"
  exit 1
fi
grep -E "Compiling entry|Used|spill|warning" "$bin/build" | sed -e 's/ptxas info    : //' | c++filt >>"$log"
note "SASS: opcode counts per kernel"
sass_counts "$bin/fa3" >>"$log" 2>&1

# A hang (a barrier never completing) costs at most a minute.
note "run --quick (with the CPU checks)"
if ! timeout 90 "$bin/fa3" --quick >"$out/fa3_quick.csv" 2>>"$log"; then
  echo "FAILED: flash3_attention --quick" | tee -a "$log"
  tail -20 "$log"
  exit 1
fi
grep -E "check|FAIL" "$log" | tail -14
if want timing; then
  note "run"
  timeout 300 "$bin/fa3" >"$out/fa3.csv" 2>>"$log" || { echo "FAILED: timing" | tee -a "$log"; status=1; }
fi
if want torch; then
  "$bin/fa3" --list >"$bin/cases.csv"
  for backend in flash cudnn; do
    note "torch_sdpa.py --backend $backend"
    timeout 300 python3 "$root/models/cuda/torch_sdpa.py" --cases "$bin/cases.csv" \
      --csv "$out/torch_$backend.csv" --backend "$backend" --repeats 20 2>>"$log" ||
      { echo "FAILED: torch $backend" | tee -a "$log"; status=1; }
  done
fi
if want smcount; then
  for n in ${SMS:-132 66 33 16}; do
    note "run --smcount --sms $n"
    timeout 200 "$bin/fa3" --smcount --sms "$n" >"$out/fa3_sm$n.csv" 2>>"$log" ||
      { echo "FAILED: --smcount --sms $n" | tee -a "$log"; status=1; }
  done
fi
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics+=,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum
metrics+=,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum
metrics+=,l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum
metrics+=,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,smsp__inst_executed.sum
metrics+=,sm__inst_executed_pipe_tensor_op_gmma.sum,smsp__inst_executed_op_tma_ld.sum
metrics+=,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed
metrics+=,smsp__inst_executed_pipe_xu.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed
metrics+=,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__issue_active.avg.pct_of_peak_sustained_elapsed
if want variants; then
  note "run --variants"
  timeout 200 "$bin/fa3" --variants >"$out/fa3_variants.csv" 2>>"$log" ||
    { echo "FAILED: --variants" | tee -a "$log"; status=1; }
  note "ncu --variants --profile"
  if timeout 240 ncu --clock-control none --kernel-name regex:flash3_ --metrics "$metrics" \
      -o "$bin/var" "$bin/fa3" --variants --profile >>"$log" 2>&1; then
    ncu -i "$bin/var.ncu-rep" --csv --page raw --print-units base >"$out/fa3_variants_ncu.csv" 2>>"$log"
  else
    echo "FAILED: ncu --variants" | tee -a "$log"
    status=1
  fi
fi
if want ncu; then
  note "ncu --profile"
  if timeout 240 ncu --clock-control none --kernel-name regex:flash3_fwd_kernel --metrics "$metrics" \
      -o "$bin/fa3" "$bin/fa3" --profile >>"$log" 2>&1; then
    ncu -i "$bin/fa3.ncu-rep" --csv --page raw --print-units base >"$out/fa3_ncu.csv" 2>>"$log"
  else
    echo "FAILED: ncu" | tee -a "$log"
    status=1
  fi
  note "ncu sections, first --profile case"
  timeout 200 ncu --clock-control none --kernel-name regex:flash3_fwd_kernel --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
    "$bin/fa3" --profile >"$out/fa3_ncu_sol.txt" 2>>"$log" || { echo "FAILED: ncu sections" | tee -a "$log"; status=1; }
fi
note "done, status $status"
for f in "$out"/fa3*.csv; do [[ $f == *ncu* ]] || { echo "-- $f"; cat "$f"; }; done | tail -70
exit $status
