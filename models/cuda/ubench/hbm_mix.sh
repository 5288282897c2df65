#!/usr/bin/env bash
# Builds and runs hbm_mix.cu (HBM bandwidth against the read:write mix) on the GPU of this
# machine: three passes on every SM and one on 66; writes OUT/hbm_mix-all-{1,2,3}.csv,
# OUT/hbm_mix-66.csv and OUT/log.txt (the GPU, its clocks, the build's ptxas lines,
# the sources' sha256, the commit given as COMMIT).
# Usage: models/cuda/ubench/hbm_mix.sh OUT
set -euo pipefail
out=${1:?usage: hbm_mix.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh"
mkdir -p "$out"
log="$out/log.txt"
ub_log_header "$log" hbm_mix.cu ubench_common.cuh hbm_mix.sh
bin=$(mktemp -d)
ub_build "$bin/hbm_mix" hbm_mix.cu "$log"
# Three passes on every SM (run to run spread), one on half of them.
for pass in 1 2 3; do "$bin/hbm_mix" >"$out/hbm_mix-all-$pass.csv" 2>>"$log"; done
"$bin/hbm_mix" 66 >"$out/hbm_mix-66.csv" 2>>"$log"
echo "done" >>"$log"
