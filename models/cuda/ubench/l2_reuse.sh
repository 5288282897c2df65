#!/usr/bin/env bash
# Builds and runs l2_reuse.cu (how much of a footprint the L2 keeps from one kernel to the next)
# on the GPU of this machine: OUT/reuse-{1,2}.csv (two timed passes), OUT/reuse-once.csv (the
# cases in the order ncu meets them: one sequence each), OUT/reuse-ncu.csv (Nsight
# Compute, one sequence per case, application replay, the L2 never flushed by the profiler:
# --cache-control none) and OUT/log.txt (the GPU, its clocks, the build's ptxas lines, the
# sources' sha256, the commit given as COMMIT). No GPU setting is changed (--clock-control none).
# Then: python3 models/cuda/ubench/l2_reuse_table.py OUT > OUT/reuse.csv.
# Usage: models/cuda/ubench/l2_reuse.sh OUT
set -euo pipefail
out=${1:?usage: l2_reuse.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh"
mkdir -p "$out"
log="$out/log.txt"
ub_log_header "$log" l2_reuse.cu ubench_common.cuh l2_reuse.sh
bin=$(mktemp -d)
ub_build "$bin/l2_reuse" l2_reuse.cu "$log"
for pass in 1 2; do "$bin/l2_reuse" >"$out/reuse-$pass.csv" 2>>"$log"; done
"$bin/l2_reuse" --once >"$out/reuse-once.csv" 2>>"$log"
ncu --csv --print-units base --cache-control none --clock-control none --replay-mode application \
  --kernel-name regex:'first_read|first_write|second_read' \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,gpu__time_duration.sum \
  "$bin/l2_reuse" --once >"$out/reuse-ncu.csv" 2>>"$log" || echo "ncu failed: $?" >>"$log"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >>"$log" 2>&1
echo "done" >>"$log"
