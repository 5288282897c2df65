#!/usr/bin/env bash
# Checks that two memwall binaries give byte-identical outputs (the text report, the JSON report,
# the timeline, the what-if JSON, a replayed trace's report) on a fixed set of workloads and
# configs: the check behind a change that is meant to alter speed only.
#
# Usage: bench/compare_outputs.sh OLD_BINARY NEW_BINARY
# Prints one line per case (same / DIFFERS) and exits 1 if any output differs; the git describe
# each report records (the build's identity) is not compared.
# Environment: KEEP=DIR keeps every output under DIR (default: a temporary folder, removed).
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: bench/compare_outputs.sh OLD_BINARY NEW_BINARY" >&2
  exit 2
fi
for memwall in "$@"; do
  if [[ ! -x "$memwall" ]]; then
    echo "compare_outputs.sh: $memwall is not an executable" >&2
    exit 2
  fi
done

if [[ -n "${KEEP:-}" ]]; then
  out=$KEEP
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi

# Each case: a name, then the arguments of `memwall run` (without --json / --timeline).
cases=(
  "naive-h200|--config h200 --workload naive --seq 2048 --head-dim 128 --heads 4"
  "flash2-h200|--config h200 --workload flash2 --seq 4096 --head-dim 128 --heads 8"
  "flash1-h200|--config h200 --workload flash1 --seq 2048 --head-dim 64 --heads 4"
  "gemm-h200|--config h200 --workload gemm --m 2048 --n 2048 --k 2048"
  "naive-bwd-h200|--config h200 --workload naive-bwd --seq 1024 --head-dim 64 --heads 4"
  "flash2-bwd-h200|--config h200 --workload flash2-bwd --seq 2048 --head-dim 64 --heads 4"
  "naive-causal-gqa-a100|--config a100-40gb --workload naive --seq 2048 --head-dim 64 --heads 8 --kv-heads 2 --causal"
  "flash2-decode-split-h100|--config h100-sxm --workload flash2 --seq 1 --seq-kv 65536 --heads 32 --kv-heads 8 --splits auto"
  "flash2-fp32-4090|--config rtx-4090 --workload flash2 --seq 2048 --head-dim 64 --heads 8 --dtype fp32 --block-kv 32"
  "flash2-spill-4090|--config rtx-4090 --workload flash2 --seq 2048 --head-dim 128 --heads 4 --block-kv 128 --allow-spill"
  "naive-flush-teaching|--config configs/hypothetical/teaching-gpu.yaml --workload naive --seq 512 --head-dim 64 --heads 2 --flush-l2-between-kernels"
  "naive-small-l2|--config h200 --workload naive --seq 2048 --head-dim 64 --heads 4 --set l2.size=\"4 MiB\" --set l2.ways=8"
  "flash2-sector64|--config h200 --workload flash2 --seq 2048 --head-dim 64 --heads 4 --set l2.sector_size=\"64 B\""
  "gemm-sector16-odd-hbm|--config a100-80gb --workload gemm --m 1000 --n 1000 --k 1000 --set l2.sector_size=\"16 B\" --set hbm.interleave=\"384 B\" --set hbm.row_size=\"1536 B\""
  "naive-calibrated|--config configs/calibrated/h200.yaml --workload naive,flash2 --seq 1024 --head-dim 64 --heads 8"
  "flash2-2x-hbm-whatif|--config configs/hypothetical/h100-2x-hbm.yaml --workload flash2 --seq 2048 --heads 8 --what-if perfect-l2,infinite-sram,hbm-x2,l2-x2,smem-direct"
)

# The build's own identity (the git describe each report records) differs between two builds of
# different commits by design, and a preset named on the command line resolves to the configs/ of
# the tree each binary was built from (an old binary built in a worktree names that worktree's
# path); every other line must be the same.
ignore=(-I '"git_describe": ' -I '^memwall [0-9.]* (git ' -I '"file": ".*/configs/[^"]*",$'
  -I '^config [^ ]* (/.*/configs/[^)]*)')

status=0
run_case() {  # binary tag name args...
  local memwall=$1 tag=$2 name=$3
  shift 3
  local dir="$out/$tag/$name"
  mkdir -p "$dir"
  local extra=()
  if [[ "$*" == *--what-if* ]]; then extra=(--what-if-json "$dir/what_if.json"); fi
  local timeline=(--timeline "$dir/timeline.json")
  if [[ "$*" == *,* ]]; then timeline=(); fi
  local rc=0
  "$memwall" run "$@" --json "$dir/report.json" "${timeline[@]}" "${extra[@]}" \
    > "$dir/stdout.txt" 2> "$dir/stderr.txt" || rc=$?
  echo "$rc" > "$dir/exit_status"
}

for entry in "${cases[@]}"; do
  name=${entry%%|*}
  eval "args=(${entry#*|})"
  run_case "$1" old "$name" "${args[@]}"
  run_case "$2" new "$name" "${args[@]}"
  if diff -r "${ignore[@]}" "$out/old/$name" "$out/new/$name" > /dev/null; then
    echo "same     $name ($(ls "$out/new/$name" | tr '\n' ' '))"
  else
    echo "DIFFERS  $name"
    status=1
  fi
done

# A trace file written by each binary, and replayed by each.
for tag in old new; do
  memwall=$1
  [[ $tag == new ]] && memwall=$2
  mkdir -p "$out/$tag/replay"
  "$memwall" trace --workload flash2 --seq 2048 --head-dim 64 --heads 4 --causal -o "$out/$tag/replay/trace.mwt" \
    > /dev/null
  "$memwall" replay "$out/$tag/replay/trace.mwt" --config h200 --json "$out/$tag/replay/report.json" \
    > "$out/$tag/replay/stdout.txt"
done
if diff -r "${ignore[@]}" "$out/old/replay" "$out/new/replay" > /dev/null; then
  echo "same     replay ($(ls "$out/new/replay" | tr '\n' ' '))"
else
  echo "DIFFERS  replay"
  status=1
fi
exit $status
