#!/usr/bin/env bash
# The same simulations through the CLI and through the Python module, side by side: for each
# case, `memwall run --json` and `memwall.run(...)` (which writes the same JSON), interleaved
# REPEATS times (default 3), each row the run with the least CPU time (user + system, from
# /usr/bin/time; the module's includes starting Python and importing memwall). The last column is
# the module's CPU time over the CLI's; the two JSON reports are compared byte for byte.
#
# Usage: bench/bench_python.sh [BUILD_DIR]   (default: build; needs BUILD/memwall and
#        BUILD/python, and Debian's /usr/bin/python3 or PYTHON)
# Environment: REPEATS, CASES ("full", the default, or "quick").
set -euo pipefail

build=${1:-build}
python=${PYTHON:-/usr/bin/python3}
repeats=${REPEATS:-3}
memwall=$build/memwall
if [[ ! -x "$memwall" || ! -d "$build/python/memwall" ]]; then
  echo "bench_python.sh: $build has no memwall or python/memwall (build it first: make build)" >&2
  exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "bench_python.sh: /usr/bin/time is needed (Debian package: time)" >&2
  exit 2
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if [[ "${CASES:-full}" == quick ]]; then
  cases=("flash2 4096 64 16" "naive 4096 64 16")
else
  cases=("flash2 16384 128 16" "naive 8192 128 16")
fi

printf '%-8s %-38s %-7s %9s %9s %10s\n' workload shape via wall_s cpu_s cpu_ratio
for c in "${cases[@]}"; do
  read -r workload seq d heads <<< "$c"
  shape="--seq $seq --head-dim $d --heads $heads"
  best_cli="" best_py=""
  for ((r = 0; r < repeats; ++r)); do
    /usr/bin/time -f '%e %U %S' -o "$scratch/t" "$memwall" run --config h200 --workload "$workload" \
      $shape --json "$scratch/cli.json" > /dev/null
    read -r wall user sys < "$scratch/t"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    if [[ -z "$best_cli" ]] || awk -v a="$cpu" -v b="${best_cli%% *}" 'BEGIN { exit !(a < b) }'; then
      best_cli="$cpu $wall"
    fi
    PYTHONPATH="$build/python" /usr/bin/time -f '%e %U %S' -o "$scratch/t" "$python" -c "
import memwall, sys
report = memwall.run('h200', workload='$workload', seq=$seq, head_dim=$d, heads=$heads)
open(sys.argv[1], 'w').write(report.json)" "$scratch/py.json"
    read -r wall user sys < "$scratch/t"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    if [[ -z "$best_py" ]] || awk -v a="$cpu" -v b="${best_py%% *}" 'BEGIN { exit !(a < b) }'; then
      best_py="$cpu $wall"
    fi
  done
  if ! cmp -s "$scratch/cli.json" "$scratch/py.json"; then
    echo "bench_python.sh: $workload $shape: the module's JSON differs from the CLI's" >&2
    exit 1
  fi
  read -r cli_cpu cli_wall <<< "$best_cli"
  read -r py_cpu py_wall <<< "$best_py"
  printf '%-8s %-38s %-7s %9.2f %9.2f %10.2f\n' "$workload" "$shape" cli "$cli_wall" "$cli_cpu" 1
  printf '%-8s %-38s %-7s %9.2f %9.2f %10.2f\n' "$workload" "$shape" python "$py_wall" "$py_cpu" \
    "$(awk -v p="$py_cpu" -v c="$cli_cpu" 'BEGIN { printf "%.2f", (c > 0 ? p / c : 0) }')"
done
