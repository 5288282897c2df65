#!/usr/bin/env bash
# The board's power and SM clock while our mma.sync kernels run back to back, sampled by
# nvidia-smi every 20 ms: the data to check the simulator's power limiter (docs/simulator.md, "The
# power limiter") on kernels it was not fitted on (its energies come from models/cuda/ubench/
# power.cu). Each case runs memwall-cuda with many repeats (a few seconds); phases.txt says when.
# Reads the GPU's state only, never changes its clocks or settings.
#
#   models/cuda/power_check.sh OUTDIR
#
# OUTDIR: smi.csv (samples), phases.txt (each case's start and end, UTC), timing.csv (memwall-cuda's
# rows), build-log.txt, log.txt. Analysis: traces/measured/h200-power-check/analyze.py.
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
probe_setup "${1:?usage: power_check.sh OUTDIR}" || exit 1
q=timestamp,clocks.sm,power.draw,power.draw.instant,temperature.gpu,clocks_event_reasons.sw_power_cap
nvidia-smi --query-gpu=$q --format=csv,nounits -lms 20 >"$out/smi.csv" 2>>"$log" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT
sleep 1
cases=(
  "workload=flash2,batch=4,heads=16,seq=16384,head_dim=128,block_q=128,block_kv=64 150"
  "workload=flash2,batch=4,heads=16,seq=16384,head_dim=64,block_q=128,block_kv=128 200"
  "workload=naive,batch=4,heads=16,seq=4096,head_dim=64 1000"
  "workload=naive,batch=4,heads=16,seq=4096,head_dim=128 800"
)
first=1
for c in "${cases[@]}"; do
  spec=${c% *} reps=${c##* }
  echo "start $spec $(date -u +%H:%M:%S.%N)" >>"$out/phases.txt"
  args=(--case "$spec" --repeats "$reps" --csv "$tmp/t.csv")
  timeout 150 "$exe" "${args[@]}" >>"$log" 2>&1 || step "FAILED: $spec"
  echo "end $spec $(date -u +%H:%M:%S.%N)" >>"$out/phases.txt"
  if [[ $first == 1 ]]; then cat "$tmp/t.csv" >"$out/timing.csv"; first=0
  else tail -n +2 "$tmp/t.csv" >>"$out/timing.csv"; fi
  sleep 2
done
step "done"
