#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) and runs each on its checked-in corpus.
#   tests/fuzz/run.sh [SECONDS] [HARNESS...]
# SECONDS (default 30) is each harness's time budget (-max_total_time); FUZZ_RUNS=N also stops a
# harness after N executions. Without names, every harness runs, one after the other. New inputs
# go to a scratch copy of the corpus (BUILD/corpus/), never into tests/fuzz/corpus/; a crash,
# leak, timeout (> 5 s), out-of-memory (> 2 GB) or sanitizer report fails the script and leaves
# the input in BUILD/artifacts/. BUILD defaults to build-fuzz.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-30}
shift || true
HARNESSES=("$@")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(config trace csv sweep_resume replay sim_config)
BUILD=${BUILD:-build-fuzz}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
RUNS=${FUZZ_RUNS:--1}

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found; skipping the fuzz harnesses" >&2
  exit 0
fi
cmake -S . -B "$BUILD" -DMEMWALL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DMEMWALL_WERROR=OFF -DMEMWALL_CUDA=OFF -DMEMWALL_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
targets=()
for h in "${HARNESSES[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}"

# The harnesses write their inputs to scratch files: keep those in memory when /dev/shm exists.
scratch_root=/dev/shm
[ -d "$scratch_root" ] && [ -w "$scratch_root" ] || scratch_root=${TMPDIR:-/tmp}
scratch=$(mktemp -d "$scratch_root/memwall-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

mkdir -p "$BUILD/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for h in "${HARNESSES[@]}"; do
  work="$BUILD/corpus/$h"
  mkdir -p "$work"
  cp -f tests/fuzz/corpus/"$h"/* "$work"/
  echo "fuzz: $h for up to ${SECONDS_EACH}s on $(ls "$work" | wc -l) corpus inputs"
  TMPDIR="$scratch" "$BUILD/fuzz_$h" -max_total_time="$SECONDS_EACH" -runs="$RUNS" -timeout=5 \
    -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$h-" \
    "$work" >"$BUILD/fuzz_$h.log" 2>&1 || {
    tail -n 60 "$BUILD/fuzz_$h.log" >&2
    echo "fuzz: $h FAILED; the input is in $BUILD/artifacts/" >&2
    exit 1
  }
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$BUILD/fuzz_$h.log")
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$BUILD/fuzz_$h.log" | tail -1)
  echo "fuzz: $h ok: $execs executions, $cov, no crash, leak, timeout or sanitizer report"
done
