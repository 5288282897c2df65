#!/usr/bin/env bash
# Builds and runs warp_loads.cu (what a warp's consecutive loads cost, ld.global and cp.async,
# from HBM and from the L2, one CTA on one SM) on the GPU of this machine: two passes; writes
# OUT/warp_loads-{1,2}.csv and OUT/log.txt (the GPU, its clocks, the build's ptxas lines, the SASS
# opcode counts of the timed kernels, the sources' sha256, the commit given as COMMIT). Never
# changes the GPU's clocks or settings.
# Usage: models/cuda/ubench/warp_loads.sh OUT
set -euo pipefail
out=${1:?usage: warp_loads.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh"
mkdir -p "$out"
log="$out/log.txt"
ub_log_header "$log" warp_loads.cu ubench_common.cuh warp_loads.sh
bin=$(mktemp -d)
ub_build "$bin/warp_loads" warp_loads.cu "$log"
echo "SASS opcode counts (LDG, LDGSTS, LDGDEPBAR, DEPBAR) per kernel:" >>"$log"
cuobjdump -sass "$bin/warp_loads" | awk '/Function :/ { f = $3; next }
  { for (i = 1; i <= NF; ++i) if ($i ~ /^(LDG|LDGSTS|LDGDEPBAR|DEPBAR)/) { sub(/;$/, "", $i); c[f " " $i]++ } }
  END { for (k in c) print k, c[k] }' | sort >>"$log"
for pass in 1 2; do "$bin/warp_loads" >"$out/warp_loads-$pass.csv" 2>>"$log"; done
echo "done" >>"$log"
