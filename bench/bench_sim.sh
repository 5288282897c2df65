#!/usr/bin/env bash
# Simulator throughput benchmark: for fixed large cases, prints wall time, CPU (user) time,
# L2 line accesses simulated, line accesses per CPU-second (the simulator is single-threaded) and
# peak resident memory, measured with /usr/bin/time.
#
# Usage: bench/bench_sim.sh [MEMWALL_BINARY]     (default: build/memwall)
# Environment: CONFIG (default h200), CASES ("full", the default, or "quick" for small shapes).
set -euo pipefail

memwall=${1:-build/memwall}
config=${CONFIG:-h200}
cases=${CASES:-full}
if [[ ! -x "$memwall" ]]; then
  echo "bench_sim.sh: $memwall is not an executable (build it first: make build)" >&2
  exit 2
fi
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

printf '%-8s %-38s %9s %9s %14s %16s %10s\n' workload shape "wall_s" "user_s" "line_accesses" \
  "M_lines_per_cpu_s" "peak_MiB"
for workload in flash2 naive; do
  /usr/bin/time -f '%e %U %M' -o "$scratch/time" \
    "$memwall" run --config "$config" --workload "$workload" $shape --json "$scratch/r.json" > /dev/null
  read -r wall user rss_kb < "$scratch/time"
  lines=$(grep -m1 '"l2_line_accesses"' "$scratch/r.json" | sed 's/.*: *\([0-9]*\).*/\1/')
  awk -v w="$workload" -v s="$shape" -v wall="$wall" -v user="$user" -v lines="$lines" -v rss="$rss_kb" \
    'BEGIN { printf "%-8s %-38s %9.2f %9.2f %14d %16.1f %10.1f\n", w, s, wall, user, lines,
             (user > 0 ? lines / user / 1e6 : 0), rss / 1024 }'
done
