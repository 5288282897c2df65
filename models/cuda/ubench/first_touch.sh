#!/usr/bin/env bash
# Builds first_touch.cu and runs it three times on the GPU of this machine: alone, under
# `ncu --cache-control all` (the calibration's condition: caches flushed before each kernel) and
# under `ncu --cache-control none`. Writes OUT/loads-plain.csv,
# OUT/loads-all.csv, OUT/loads-none.csv (the program's rows: each launch's cold and warm chain,
# per-load samples), OUT/ncu-all.csv, OUT/ncu-none.csv (gpu__time_duration of each first_touch
# launch, base units) and OUT/log.txt (GPU, clocks, ptxas, sha256 of the sources, the commit
# given as COMMIT). Never changes the GPU's clocks or settings (ncu --clock-control none).
# Usage: models/cuda/ubench/first_touch.sh OUT
set -euo pipefail
out=${1:?usage: first_touch.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh"
mkdir -p "$out"
log="$out/log.txt"
ub_log_header "$log" first_touch.cu ubench_common.cuh first_touch.sh
bin=$(mktemp -d)
ub_build "$bin/first_touch" first_touch.cu "$log"
"$bin/first_touch" >"$out/loads-plain.csv" 2>>"$log"
for cc in all none; do
  ncu --clock-control none --cache-control "$cc" -k regex:first_touch \
    --metrics gpu__time_duration.sum,gpc__cycles_elapsed.max \
    --csv --print-units base --log-file "$out/ncu-$cc.csv" "$bin/first_touch" >"$out/loads-$cc.csv" 2>>"$log"
done
echo "done" >>"$log"
