#!/usr/bin/env bash
# What bounds our kernels on the SM side, and what the L2 carve-out costs naive: per-pipe warp
# instruction counts, issue-slot use and the SM clock of naive qk / softmax / pv and flash2 under
# Nsight Compute, on the whole chip and in a green context of 16 SMs (where naive softmax is
# limited per SM, not by HBM); the SASS opcode histogram of every kernel; and the memory and warp
# state sections of naive qk and softmax with and without the full persisting-L2 carve-out.
# Run from the repository root on a machine with an NVIDIA GPU:
#
#   GIT_COMMIT=$(git rev-parse HEAD) models/cuda/pipe_probe.sh OUTDIR
#
# Writes into OUTDIR: pipes.csv (ncu, one row per kernel launch and SM setting: the metrics
# below), sass-ops.txt (opcode counts per kernel, cuobjdump), carveout-*.txt (ncu sections),
# log.txt, provenance.txt, build-log.txt. Never changes the GPU's clocks or settings
# (ncu --clock-control none).
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
probe_setup "${1:?usage: pipe_probe.sh OUTDIR}" || exit 1

naive() { echo "workload=naive,batch=$1,heads=$2,seq=$3,head_dim=$4,block_q=128,block_kv=128,block_k=64,softmax_rows=4"; }
flash() { echo "workload=flash2,batch=$1,heads=$2,seq=$3,head_dim=$4,block_q=128,block_kv=$5,stages=2"; }
cases=(--case "$(naive 4 16 1024 64)" --case "$(naive 4 16 4096 64)" --case "$(naive 1 8 16384 64)"
       --case "$(flash 4 16 4096 64 128)" --case "$(flash 4 16 4096 128 64)")
kernels='regex:naive_qk_kernel|naive_softmax_kernel|naive_pv_kernel|flash2_fwd_kernel'

# Every per-pipe instruction counter this ncu has, then issue, clock, time and DRAM.
ncu --query-metrics >"$tmp/metrics.txt" 2>&1
pipe_metrics=$(grep -oE '^sm__inst_executed_pipe_[a-z0-9_]+' "$tmp/metrics.txt" | sort -u |
               sed 's/$/.sum/' | paste -sd, -)
metrics="$pipe_metrics,smsp__inst_executed.sum,smsp__issue_active.sum,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,sm__cycles_active.avg,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__warps_active.avg.per_cycle_active"
echo "metrics: $metrics" >>"$log"

provenance "$out/provenance.txt" \
  "git_commit: ${GIT_COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}" \
  "nvcc: $(nvcc --version | grep release)" \
  "pipes: ncu --clock-control none --metrics <log.txt> --csv --print-units base --kernel-name '$kernels' $exe ${cases[*]} [--sms 16] --once" \
  "carve-out: ncu --clock-control none --cache-control none --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section SpeedOfLight -k regex:naive_qk_kernel|naive_softmax_kernel $exe --case $(naive 4 16 4096 64) [--l2-reserve 100%] --once"
cat "$out/provenance.txt" >>"$log"
sha256sum models/cuda/*.cu models/cuda/*.h models/cuda/pipe_probe.sh >>"$log"

step "sass opcode counts"
cuobjdump -sass "$exe" 2>>"$log" | awk '
  /Function :/ { fn = $3 }
  /^ +\/\*[0-9a-f]+\*\// {
    line = $0; sub(/^ +\/\*[0-9a-f]+\*\/ +/, "", line); sub(/^@!?U?P[0-9T] +/, "", line)
    split(line, w, /[ ;]/); op = w[1]; if (op != "") count[fn "\t" op]++ }
  END { for (k in count) print k "\t" count[k] }' | sort >"$out/sass-ops.txt"
wc -l "$out/sass-ops.txt" | tee -a "$log"

for sms in none 16; do
  extra=()
  [[ $sms != none ]] && extra=(--sms "$sms")
  step "pipes, sms $sms"
  timeout 240 ncu --clock-control none --metrics "$metrics" --csv --print-units base \
    --kernel-name "$kernels" --log-file "$tmp/pipes-$sms.csv" \
    "$exe" "${cases[@]}" "${extra[@]}" --once >>"$log" 2>&1
  echo "rc=$?" | tee -a "$log"
  sed "s/^/$sms,/" "$tmp/pipes-$sms.csv" | grep -v '^[a-z0-9]*,==' >>"$tmp/pipes.csv"
done
cp "$tmp/pipes.csv" "$out/pipes.csv"

for r in none 100%; do
  extra=()
  [[ $r != none ]] && extra=(--l2-reserve "$r")
  step "carve-out $r"
  timeout 120 ncu --clock-control none --cache-control none --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section SpeedOfLight \
    --metrics lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__d_sectors_fill_sysmem.sum,lts__d_sectors_fill_device.sum \
    -k 'regex:naive_qk_kernel|naive_softmax_kernel' "$exe" --case "$(naive 4 16 4096 64)" \
    "${extra[@]}" --once >"$out/carveout-${r%\%}.txt" 2>&1
  echo "rc=$?" | tee -a "$log"
done
step done
