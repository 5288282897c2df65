# Sourced by the single-program microbenchmark scripts of models/cuda/ubench (hbm_mix.sh,
# warp_loads.sh, kernel_floor.sh): the log's provenance header and the build.
#
#   ub_log_header LOG SOURCE...   writes to LOG: the commit given as COMMIT, the date, the GPU and
#                                 its clocks (nvidia-smi), nvcc's and ncu's versions, the sha256
#                                 of each SOURCE (names relative to this folder) and of this file
#   ub_build BIN SOURCE LOG       nvcc -O3 -arch=sm_90 -std=c++20 SOURCE -> BIN, ptxas lines to LOG
# Neither changes the GPU's clocks or settings.
ub_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ub_log_header() {
  local log=$1
  shift
  {
    echo "commit: ${COMMIT:-unknown}"
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
    nvcc --version | tail -2
    if command -v ncu >/dev/null; then ncu --version | tail -1; fi
    echo "sources (sha256):"
    (cd "$ub_here" && sha256sum "$@" script_common.sh)
  } >"$log" 2>&1
}

ub_build() {
  local bin=$1 source=$2 log=$3
  nvcc -O3 -arch=sm_90 -std=c++20 -Xptxas -v -o "$bin" "$ub_here/$source" >"$bin.build.txt" 2>&1
  grep -E "Compiling entry|Used|spill" "$bin.build.txt" | sed -e 's/ptxas info    : //' >>"$log"
}
