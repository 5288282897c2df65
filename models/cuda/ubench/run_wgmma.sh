#!/usr/bin/env bash
# Builds and runs wgmma.cu (Hopper warpgroup MMA throughput and latency) on the GPU of this
# machine. Needs an H100/H200 and nvcc; run from anywhere:
#
#   models/cuda/ubench/run_wgmma.sh OUTDIR
#
# OUTDIR gets wgmma.csv and wgmma_log.txt: provenance, the ptxas report, SASS opcode counts per
# kernel and the timed loops of the m64n256k16 kernels in full, the program's stderr (the check
# against the CPU reference) and the summary table that it also prints. Built for sm_90a with the
# -gencode form (the -arch=sm_90a shorthand also runs a plain sm_90 pass that rejects wgmma).
# Never changes the GPU's clocks or settings. Exit status 1 if the build or the program fails.
set -u -o pipefail
out=${1:?usage: run_wgmma.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mkdir -p "$out"
log=$out/wgmma_log.txt
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
note() { echo "== $(date -u +%H:%M:%S.%N | cut -c1-12) $*" >>"$log"; }
flags=(-O3 -gencode=arch=compute_90a,code=sm_90a -std=c++20)

. "$root/models/cuda/provenance.sh"
provenance "$log" "nvcc: $(nvcc --version | grep release)" \
  "command: models/cuda/ubench/run_wgmma.sh OUTDIR" \
  "tree: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no git metadata')"
{
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu --format=csv
  echo "sources (sha256):"
  (cd "$here" && sha256sum wgmma.cu ubench_common.cuh run_wgmma.sh)
} >>"$log" 2>&1

note "build: nvcc ${flags[*]} -Xptxas -v"
if ! nvcc "${flags[@]}" -Xptxas -v -o "$bin/wgmma" "$here/wgmma.cu" >"$bin/build" 2>&1; then
  cat "$bin/build" >>"$log"
  echo "FAILED: build of wgmma" >>"$log"
  exit 1
fi
grep -E "Compiling entry|Used|spill" "$bin/build" | sed -e 's/ptxas info    : //' | c++filt >>"$log"
grep -iE "error|warning" "$bin/build" >>"$log"

note "SASS: opcode counts per kernel"
cuobjdump -sass "$bin/wgmma" | awk '
  /Function :/ { fn = $3; next }
  /\/\*[0-9a-f]+\*\// {
    line = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line); sub(/^@!?U?P[0-9T]+[ \t]+/, "", line)
    split(line, f, /[ \t;]+/); op = f[1]
    if (op ~ /^(HGMMA|HMMA|WARPGROUP|WARPSYNC|BAR|BRA|FENCE|R2UR|UMOV|LDL|STL)/) n[fn " " op]++
  }
  END { for (k in n) print k, n[k] }' | sort | c++filt >>"$log" 2>&1
for k in 16wgmma_throughputILi256ELi1ELi1E 15wgmma_dependentILi256E; do
  echo "-- SASS of $k" >>"$log"
  cuobjdump -sass "$bin/wgmma" | awk -v k="$k" '/Function :/ { on = index($3, k) > 0 } on' |
    grep -E "/\*[0-9a-f]+\*/" | sed -e 's/ \{2,\}/ /g' -e 's| */\* 0x[0-9a-f]* \*/||' >>"$log"
done

note "run wgmma"
status=0
timeout 240 "$bin/wgmma" >"$out/wgmma.csv" 2>>"$log" || {
  echo "FAILED: wgmma rc=$?" >>"$log"
  status=1
}
note "done, status $status"
{
  echo "FLOP/cycle/SM (best over chains; chains in brackets) and cycles per wgmma per warpgroup"
  awk -F, 'NR > 1 && $1 == "throughput" {
      key = $2 " " $3
      if (!(key in best) || $8 > best[key]) { best[key] = $8; ch[key] = $4; cpw[key] = $7 }
    }
    NR > 1 && $1 == "dependent" { dep[$2] = $7 }
    END {
      printf "%-6s %-22s %-22s %-22s %-22s\n", "N", "1 warpgroup", "2", "3", "4"
      for (n = 64; n <= 256; n *= 2) {
        printf "%-6d", n
        for (w = 1; w <= 4; ++w) {
          key = n " " w
          if (key in best) printf " %-22s", sprintf("%.0f (%d) %.1f cyc", best[key], ch[key], cpw[key])
          else printf " %-22s", "not run"
        }
        printf "\n"
      }
      for (n = 64; n <= 256; n *= 2) if (n in dep) printf "dependent m64n%dk16: %.1f cycles\n", n, dep[n]
    }' "$out/wgmma.csv"
} 2>&1 | tee -a "$log"
exit $status
