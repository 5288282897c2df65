#!/bin/sh
# Compiles the Hopper-native programs of models/cuda/hopper for sm_90a (no GPU needed) and checks
# that ptxas gives every wgmma_gemm_kernel instantiation the registers the model takes for its
# occupancy (kWgmmaRegisters in models/wgmma_gemm.h) and every flash3_fwd_kernel instantiation
# kFlash3Registers (models/flash3.h), with no spills, and that ptxas did not serialise the
# flash3 kernel's wgmmas (warning C7514: what a wgmma under a condition causes).
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
expected_fa3=$(sed -n 's/^inline constexpr std::uint32_t kFlash3Registers = \([0-9]*\);.*/\1/p' \
  "$root/models/flash3.h")
[ -n "$expected_fa3" ] || { echo "kFlash3Registers not found in models/flash3.h"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="-std=c++17 -gencode=arch=compute_90a,code=sm_90a -I$root -Xptxas -v"
"$nvcc" $flags -c -o "$tmp/gemm.o" "$here/wgmma_gemm.cu" >"$tmp/gemm.log" 2>&1 ||
  { cat "$tmp/gemm.log"; echo "FAILED: build of wgmma_gemm.cu"; exit 1; }
"$nvcc" $flags -c -o "$tmp/tma.o" "$here/tma_bw.cu" >"$tmp/tma.log" 2>&1 ||
  { cat "$tmp/tma.log"; echo "FAILED: build of tma_bw.cu"; exit 1; }
# One "Compiling entry function" line per kernel, then its "Used N registers" line.
check_registers() {  # LOG KERNEL WANT
  awk -v kernel="$2" -v want="$3" '
    /Compiling entry function/ { mine = index($0, kernel) > 0; name = $0; next }
    mine && /Used [0-9]+ registers/ {
      for (i = 1; i <= NF; ++i) if ($i == "Used") regs = $(i + 1)
      ++n; if (regs != want) { print "differs: " regs " registers, want " want ": " name; bad = 1 }
    }
    mine && /spill stores/ && $5 != 0 { print "spills: " $0; bad = 1 }
    END { if (n == 0) { print "no " kernel " in the ptxas report"; exit 1 }
          print n " " kernel " instantiations, " want " registers each"; exit bad }' "$1"
}
"$nvcc" $flags -c -o "$tmp/fa3.o" "$here/flash3_attention.cu" >"$tmp/fa3.log" 2>&1 ||
  { cat "$tmp/fa3.log"; echo "FAILED: build of flash3_attention.cu"; exit 1; }
if grep -q C7514 "$tmp/fa3.log"; then
  grep C7514 "$tmp/fa3.log"
  echo "FAILED: ptxas serialised flash3_attention.cu's wgmmas (C7514)"
  exit 1
fi
check_registers "$tmp/gemm.log" wgmma_gemm_kernel "$expected" || exit 1
check_registers "$tmp/fa3.log" flash3_fwd_kernel "$expected_fa3"
