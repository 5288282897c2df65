#!/usr/bin/env bash
# Builds and runs l2_carveout.cu (what a persisting-L2 carve-out costs normal HBM streams, L2 hits
# and load latency) on the GPU of this machine, two passes; writes OUT/carveout-{1,2}.csv and
# OUT/log.txt (the GPU, its clocks, the build's ptxas lines, the sources' sha256, the commit given
# as COMMIT). The carve-out is this process's limit and ends with it; no GPU setting is changed.
# Usage: models/cuda/ubench/l2_carveout.sh OUT
set -euo pipefail
out=${1:?usage: l2_carveout.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh"
mkdir -p "$out"
log="$out/log.txt"
ub_log_header "$log" l2_carveout.cu ubench_common.cuh l2_carveout.sh
bin=$(mktemp -d)
ub_build "$bin/l2_carveout" l2_carveout.cu "$log"
for pass in 1 2; do "$bin/l2_carveout" >"$out/carveout-$pass.csv" 2>>"$log"; done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >>"$log" 2>&1
echo "done" >>"$log"
