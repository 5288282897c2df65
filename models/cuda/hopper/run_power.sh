#!/usr/bin/env bash
# Samples the GPU's SM clock, power draw and clock-event reasons (nvidia-smi, every 50 ms) while
# run_flash3.sh's and run_gemm.sh's `timing` steps run: the data for a model of the SM clock
# under the board's power limit. Reads the GPU's state only (never changes clocks or limits).
#
#   models/cuda/hopper/run_power.sh OUTDIR
#
# OUTDIR/smi.csv (the samples), phases.txt (when each step started and ended, UTC), probe.txt
# (one sample before), smi_q_{before,after}.txt (nvidia-smi -q: power, clocks, performance,
# temperature), fa3/ and gemm/ (the two steps' own outputs and logs), *_stdout.txt.
set -u
d=${1:?usage: run_power.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$d"
q=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,enforced.power.limit,temperature.gpu
q=$q,temperature.memory,clocks_event_reasons.active,clocks_event_reasons.sw_power_cap
q=$q,clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown
q=$q,clocks_event_reasons.hw_power_brake_slowdown
nvidia-smi --query-gpu=$q --format=csv,nounits -i 0 >"$d/probe.txt" 2>&1 ||
  q=timestamp,clocks.sm,power.draw,power.limit,temperature.gpu
nvidia-smi -q -d POWER,CLOCK,PERFORMANCE,TEMPERATURE >"$d/smi_q_before.txt" 2>&1
nvidia-smi --query-gpu=$q --format=csv,nounits -lms 50 >"$d/smi.csv" 2>&1 &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT
sleep 1
stamp() { echo "$1 $(date -u +%H:%M:%S.%N)" >>"$d/phases.txt"; }
stamp "fa3 start"
STEPS=timing timeout 300 "$here/run_flash3.sh" "$d/fa3" >"$d/fa3_stdout.txt" 2>&1
stamp "fa3 end"
sleep 3
stamp "gemm start"
STEPS=timing timeout 200 "$here/run_gemm.sh" "$d/gemm" >"$d/gemm_stdout.txt" 2>&1
stamp "gemm end"
sleep 2
kill $sampler
nvidia-smi -q -d POWER,CLOCK,PERFORMANCE,TEMPERATURE >"$d/smi_q_after.txt" 2>&1
