#!/bin/sh
# Registers per thread that ptxas gives every kernel instantiation in models/cuda, for sm_$ARCH
# (default 90).
# Needs nvcc, not a GPU. Prints a header naming the nvcc release, then one line per
# instantiation, sorted:
#   kernel head_dim block_a block_b stages registers
# with qk <D, BM, BN>, pv <D, BM, BK>, flash2_fwd <D, BR, BC, STAGES> (stages 0 for naive).
# The models take these counts for the occupancy of the kernels they mirror: the list is kept in
# models/cuda/ptxas-registers.txt and models/compiled_registers.cc.
#
# Usage: [ARCH=90] sh models/cuda/ptxas_registers.sh [NVCC]        print the list
#        sh models/cuda/ptxas_registers.sh --check FILE [NVCC]     compare with FILE: exit 0 when
#            equal, 1 (with a diff) when not, 77 when the architecture or the nvcc release is not
#            the one in FILE's header
set -eu
check=
if [ "${1:-}" = "--check" ]; then
  check=$2
  shift 2
fi
nvcc=${1:-nvcc}
arch=${ARCH:-90}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
release=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
header="# ptxas -v, sm_$arch, nvcc release $release"
if [ -n "$check" ] && [ "$(head -n 1 "$check")" != "$header" ]; then
  echo "skipped: $check was made by '$(head -n 1 "$check" | sed 's/^# //')', this run would be '${header#\# }'"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for src in naive_attention.cu flash2_attention.cu; do
  "$nvcc" -std=c++17 -arch="sm_$arch" -O3 -Xptxas -v -I"$root" -c "$here/$src" -o "$tmp/out.o" \
    >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
  # ptxas prints "Compiling entry function '<mangled>' for 'sm_NN'", then "Used N registers".
  sed -n -e "s/.*Compiling entry function '\([^']*\)'.*/E \1/p" \
         -e 's/.*Used \([0-9][0-9]*\) registers.*/R \1/p' "$tmp/log" >>"$tmp/pairs"
done
{
  echo "$header"
  awk '$1 == "E" { name = $2; next } $1 == "R" && name != "" { print name, $2; name = "" }' \
    "$tmp/pairs" | while read -r mangled regs; do
    echo "$(echo "$mangled" | c++filt) @ $regs"
  done | sed -n \
    -e 's/.*naive_\(qk\|pv\)_kernel<\([0-9]*\), \([0-9]*\), \([0-9]*\)>(.* @ \([0-9]*\)$/\1 \2 \3 \4 0 \5/p' \
    -e 's/.*flash2_fwd_kernel<\([0-9]*\), \([0-9]*\), \([0-9]*\), \([0-9]*\)>(.* @ \([0-9]*\)$/flash2_fwd \1 \2 \3 \4 \5/p' \
    | sort
} >"$tmp/list"
if [ -z "$check" ]; then
  cat "$tmp/list"
elif diff -u "$check" "$tmp/list"; then
  echo "$(($(wc -l <"$tmp/list") - 1)) kernel instantiations: registers as in $check"
else
  echo "ptxas gives other registers than $check: update it and models/compiled_registers.cc" >&2
  exit 1
fi
