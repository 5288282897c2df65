#!/usr/bin/env bash
# Builds and runs the microbenchmarks of models/cuda/ubench on the GPU of this machine, and lists
# models/cuda's kernel registers for sm_80. Needs an NVIDIA GPU and nvcc; run from anywhere:
#
#   models/cuda/ubench/run_all.sh OUTDIR
#
# OUTDIR gets latency.csv and l2_hist.csv (chase), clock.csv, hbm_bw.csv, pipes.csv, launch.csv,
# ptxas-registers-sm80.txt and log.txt: provenance, compiler reports, SASS checks of the timed
# loops, each program's stderr, nvidia-smi samples taken during the clock and bandwidth runs, the
# PyTorch streams of models/cuda/hbm_rw_bandwidth.py for comparison, and the summary tables
# (tabulate.py) that it also prints. Never changes the GPU's clocks or
# settings. A program that fails is logged and the others still run; the exit status is then 1.
set -u -o pipefail
out=${1:?usage: run_all.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mkdir -p "$out"
log=$out/log.txt
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
status=0
note() { echo "== $(date -u +%H:%M:%S.%N | cut -c1-12) $*" >>"$log"; }

. "$root/models/cuda/provenance.sh"
provenance "$log" "nvcc: $(nvcc --version | grep release)" \
  "command: models/cuda/ubench/run_all.sh OUTDIR" \
  "tree: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no git metadata')"
{
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu --format=csv
  nvidia-smi -q -d CLOCK,PERFORMANCE
  echo "sources (sha256):"
  (cd "$here" && sha256sum ./*.cu ./*.cuh ./*.py ./*.sh)
} >>"$log" 2>&1

note "build (nvcc -O3 -arch=sm_90 -std=c++20) and ptxas sm_80 register list"
ARCH=80 sh "$root/models/cuda/ptxas_registers.sh" >"$out/ptxas-registers-sm80.txt" 2>"$bin/ptxas80.err" &
pids=($!)
programs=(launch pipes chase clock hbm_bw)
for p in "${programs[@]}"; do
  nvcc -O3 -arch=sm_90 -std=c++20 -Xptxas -v -o "$bin/$p" "$here/$p.cu" >"$bin/$p.build" 2>&1 &
  pids+=($!)
done
names=(ptxas_registers_sm80 "${programs[@]}")
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "FAILED: build of ${names[$i]}" >>"$log"
    status=1
  fi
done
cat "$bin/ptxas80.err" >>"$log"
for p in "${programs[@]}"; do
  echo "-- ptxas -v $p" >>"$log"
  grep -E "Compiling entry|Used|spill" "$bin/$p.build" | sed -e 's/ptxas info    : //' >>"$log"
  grep -iE "error|warning" "$bin/$p.build" >>"$log"
done

note "SASS checks: opcode counts per kernel, and the chase and read_stream<8> loops"
sass_counts() {  # kernel name, then "count opcode" for the opcodes of the timed loops
  cuobjdump -sass "$1" | awk '
    /Function :/ { fn = $3; next }
    /\/\*[0-9a-f]+\*\// {
      line = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line); sub(/^@!?U?P[0-9T]+[ \t]+/, "", line)
      split(line, f, /[ \t;]+/); op = f[1]
      if (op ~ /^(HMMA|FFMA|MUFU|IMAD|IADD3|VIADD|LOP3|LDSM|LDG|STG|STS|CS2R|BAR|BRA)/) n[fn " " op]++
    }
    END { for (k in n) print k, n[k] }' | sort | c++filt
}
for p in pipes hbm_bw chase clock; do
  [ -x "$bin/$p" ] && { echo "-- $p" >>"$log"; sass_counts "$bin/$p" >>"$log" 2>&1; }
done
if [ -x "$bin/chase" ]; then
  echo "-- chase: SASS of the chase kernel" >>"$log"
  cuobjdump -sass "$bin/chase" | awk '/Function :/ { on = ($3 ~ /5chase/) } on' | grep -E "LDG|STS|CS2R|BRA|ATOM" >>"$log"
fi
if [ -x "$bin/pipes" ]; then
  for k in 11iadd_chainsILi1E 11iadd_chainsILi8E 15iadd_xor_chainsILi8E; do
    echo "-- pipes: SASS of $k" >>"$log"
    cuobjdump -sass "$bin/pipes" | awk -v k="$k" '/Function :/ { on = index($3, k) > 0 } on' |
      grep -E "/\*[0-9a-f]+\*/" | sed -e 's/ \{2,\}/ /g' -e 's| */\* 0x[0-9a-f]* \*/||' >>"$log"
  done
fi
if [ -x "$bin/hbm_bw" ]; then
  echo "-- hbm_bw: SASS of read_stream<8>" >>"$log"
  cuobjdump -sass "$bin/hbm_bw" | awk '/Function :/ { on = ($3 ~ /read_streamILi8/) } on' | grep -E "LDG|IADD3|BRA|ISETP" >>"$log"
fi

run() {  # name csv [args]: runs $bin/name with a time limit, stdout to OUTDIR/csv
  local name=$1 csv=$2
  shift 2
  note "run $name"
  if [ ! -x "$bin/$name" ]; then
    echo "SKIPPED: $name (no binary)" >>"$log"
    status=1
    return
  fi
  timeout 240 "$bin/$name" "$@" >"$out/$csv" 2>>"$log" || {
    echo "FAILED: $name rc=$?" >>"$log"
    status=1
  }
}
run launch launch.csv
run pipes pipes.csv
run chase latency.csv "$out/l2_hist.csv"
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 100 >"$bin/smi.csv" 2>&1 &
smi=$!
run clock clock.csv
run hbm_bw hbm_bw.csv
note "models/cuda/hbm_rw_bandwidth.py (PyTorch streams, for comparison)"
timeout 120 python3 "$root/models/cuda/hbm_rw_bandwidth.py" >>"$log" 2>&1 || echo "FAILED: hbm_rw_bandwidth.py" >>"$log"
kill "$smi" 2>/dev/null
wait "$smi" 2>/dev/null
note "nvidia-smi samples (100 ms) during clock and hbm_bw"
cat "$bin/smi.csv" >>"$log"
note "done, status $status"
python3 "$here/tabulate.py" "$out" 2>&1 | tee -a "$log"
exit $status
