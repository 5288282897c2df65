#!/usr/bin/env bash
# Builds and runs cta_phases.cu (what a short CTA's loads, stores and turnaround cost with one or
# two CTAs per SM: the shape of a naive qk CTA) on the GPU of this machine: OUT/cta_phases-1.csv
# and -2.csv (two passes) and OUT/log.txt (the GPU, its clocks, the build's ptxas lines, the
# sources' sha256, the commit given as COMMIT). No GPU setting is changed.
# Then: python3 models/cuda/ubench/cta_phases_table.py OUT.
# Usage: models/cuda/ubench/cta_phases.sh OUT
set -euo pipefail
out=${1:?usage: cta_phases.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh"
mkdir -p "$out"
log="$out/log.txt"
ub_log_header "$log" cta_phases.cu ubench_common.cuh ../device_primitives.cuh cta_phases.sh
bin=$(mktemp -d)
ub_build "$bin/cta_phases" cta_phases.cu "$log"
for pass in 1 2; do "$bin/cta_phases" >"$out/cta_phases-$pass.csv" 2>>"$log"; done
echo "done" >>"$log"
