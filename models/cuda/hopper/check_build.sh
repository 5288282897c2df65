#!/bin/sh
# Compiles the Hopper-native programs of models/cuda/hopper for sm_90a (no GPU needed) and checks
# that ptxas gives every wgmma_gemm_kernel instantiation the registers the model takes for its
# occupancy (kWgmmaRegisters in models/wgmma_gemm.h), with no spills.
#
# Usage: sh models/cuda/hopper/check_build.sh [NVCC]
#   exit 0: built and checked; 1: a build failed or a count differs; 77: no nvcc, or a release
#   other than the one the count was read with (13.0: register allocation is the compiler's)
set -eu
nvcc=${1:-nvcc}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
command -v "$nvcc" >/dev/null 2>&1 || { echo "skipped: no nvcc"; exit 77; }
release=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
[ "$release" = "13.0" ] || { echo "skipped: nvcc $release (the counts are nvcc 13.0's)"; exit 77; }
expected=$(sed -n 's/^inline constexpr std::uint32_t kWgmmaRegisters = \([0-9]*\);.*/\1/p' \
  "$root/models/wgmma_gemm.h")
[ -n "$expected" ] || { echo "kWgmmaRegisters not found in models/wgmma_gemm.h"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="-std=c++17 -gencode=arch=compute_90a,code=sm_90a -I$root -Xptxas -v"
"$nvcc" $flags -c -o "$tmp/gemm.o" "$here/wgmma_gemm.cu" >"$tmp/gemm.log" 2>&1 ||
  { cat "$tmp/gemm.log"; echo "FAILED: build of wgmma_gemm.cu"; exit 1; }
"$nvcc" $flags -c -o "$tmp/tma.o" "$here/tma_bw.cu" >"$tmp/tma.log" 2>&1 ||
  { cat "$tmp/tma.log"; echo "FAILED: build of tma_bw.cu"; exit 1; }
# One "Compiling entry function" line per kernel, then its "Used N registers" line.
awk -v want="$expected" '
  /Compiling entry function/ { gemm = index($0, "wgmma_gemm_kernel") > 0; name = $0; next }
  gemm && /Used [0-9]+ registers/ {
    for (i = 1; i <= NF; ++i) if ($i == "Used") regs = $(i + 1)
    ++n; if (regs != want) { print "differs: " regs " registers, want " want ": " name; bad = 1 }
  }
  gemm && /spill stores/ && $5 != 0 { print "spills: " $0; bad = 1 }
  END { if (n == 0) { print "no wgmma_gemm_kernel in the ptxas report"; exit 1 }
        print n " wgmma_gemm_kernel instantiations, " want " registers each"; exit bad }' "$tmp/gemm.log"
