#!/usr/bin/env bash
# Simulator throughput benchmark: for fixed large cases, prints wall time, user and system CPU
# time, L2 line accesses simulated, line accesses per CPU-second (user + system; the simulator is
# single-threaded) and peak resident memory, measured with /usr/bin/time.
#
# Usage: bench/bench_sim.sh [MEMWALL_BINARY ...]     (default: build/memwall)
# With several binaries (e.g. an old build and a new one) every case runs each binary in turn,
# REPEATS times (default 1, or 3 with several binaries), interleaved so that a noisy machine
# slows them alike, and each row is the run with the least CPU time (user + system); a last column
# gives each binary's CPU time over the first binary's.
# Environment: CONFIG (default h200), CASES ("full", the default, or "quick" for small shapes),
# REPEATS. naive runs `--gemm mma_sync`, the kernels of every figure in docs/performance.md (a
# Hopper config's default has been wgmma since 2026-12-07).
set -euo pipefail

if [[ $# -eq 0 ]]; then set -- build/memwall; fi
config=${CONFIG:-h200}
cases=${CASES:-full}
if [[ $# -gt 1 ]]; then repeats=${REPEATS:-3}; else repeats=${REPEATS:-1}; fi
for memwall in "$@"; do
  if [[ ! -x "$memwall" ]]; then
    echo "bench_sim.sh: $memwall is not an executable (build it first: make build)" >&2
    exit 2
  fi
done
if [[ ! -x /usr/bin/time ]]; then
  echo "bench_sim.sh: /usr/bin/time is needed (Debian package: time)" >&2
  exit 2
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if [[ "$cases" == quick ]]; then
  shape="--seq 4096 --head-dim 64 --heads 16"
else
  shape="--seq 16384 --head-dim 128 --heads 16"
fi

printf '%-8s %-38s %9s %9s %8s %9s %14s %16s %10s' workload shape "wall_s" "user_s" "sys_s" "cpu_s" \
  "line_accesses" "M_lines_per_cpu_s" "peak_MiB"
if [[ $# -gt 1 ]]; then printf ' %9s  %s' "cpu_ratio" "binary"; fi
printf '\n'
for workload in flash2 naive; do
  declare -A best=()
  for ((r = 0; r < repeats; ++r)); do
    for i in $(seq 0 $(($# - 1))); do
      memwall=${@:$((i + 1)):1}
      kernel=()
      if [[ "$workload" == naive ]]; then kernel=(--gemm mma_sync); fi
      /usr/bin/time -f '%e %U %S %M' -o "$scratch/time" \
        "$memwall" run --config "$config" --workload "$workload" "${kernel[@]}" $shape --json "$scratch/r.json" > /dev/null
      read -r wall user sys rss_kb < "$scratch/time"
      cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
      lines=$(grep -m1 '"l2_line_accesses"' "$scratch/r.json" | sed 's/.*: *\([0-9]*\).*/\1/')
      if [[ -z "${best[$i]:-}" ]] || awk -v a="$cpu" -v b="${best[$i]%% *}" 'BEGIN { exit !(a < b) }'; then
        best[$i]="$cpu $wall $user $sys $lines $rss_kb"
      fi
    done
  done
  first_cpu=${best[0]%% *}
  for i in $(seq 0 $(($# - 1))); do
    read -r cpu wall user sys lines rss_kb <<< "${best[$i]}"
    awk -v w="$workload" -v s="$shape" -v wall="$wall" -v user="$user" -v sys="$sys" -v cpu="$cpu" \
      -v lines="$lines" -v rss="$rss_kb" \
      'BEGIN { printf "%-8s %-38s %9.2f %9.2f %8.2f %9.2f %14d %16.1f %10.1f", w, s, wall, user, sys, cpu,
               lines, (cpu > 0 ? lines / cpu / 1e6 : 0), rss / 1024 }'
    if [[ $# -gt 1 ]]; then
      awk -v u="$cpu" -v f="$first_cpu" -v b="${@:$((i + 1)):1}" \
        'BEGIN { printf " %9.2f  %s", (f > 0 ? u / f : 0), b }'
    fi
    printf '\n'
  done
  unset best
done
