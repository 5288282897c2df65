#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) and runs each on its checked-in corpus.
#   tests/fuzz/run.sh [SECONDS] [HARNESS...]
# SECONDS (default 30) is each harness's time budget (-max_total_time). Without names, every
# harness runs, one after the other. New inputs go to a scratch corpus copy, never into
# tests/fuzz/corpus/; a crash, leak, timeout (> 5 s) or sanitizer report fails the script and
# leaves the input in BUILD/artifacts/. BUILD defaults to build-fuzz; set it to build elsewhere.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-30}
shift || true
HARNESSES=("$@")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(config trace csv sweep_resume)
BUILD=${BUILD:-build-fuzz}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found; skipping the fuzz harnesses" >&2
  exit 0
fi
cmake -S . -B "$BUILD" -DMEMWALL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMEMWALL_WERROR=OFF -DMEMWALL_CUDA=OFF -DMEMWALL_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
targets=()
for h in "${HARNESSES[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}"

mkdir -p "$BUILD/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for h in "${HARNESSES[@]}"; do
  work="$BUILD/corpus/$h"
  mkdir -p "$work"
  cp -f tests/fuzz/corpus/"$h"/* "$work"/ 2>/dev/null || true
  echo "fuzz: $h for ${SECONDS_EACH}s on $(ls "$work" | wc -l) corpus inputs"
  "$BUILD/fuzz_$h" -max_total_time="$SECONDS_EACH" -timeout=5 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$h-" "$work" 2>"$BUILD/fuzz_$h.log" || {
    tail -n 60 "$BUILD/fuzz_$h.log" >&2
    echo "fuzz: $h FAILED; the input is in $BUILD/artifacts/" >&2
    exit 1
  }
  grep -E "^stat::number_of_executed_units|^#[0-9]+ +DONE" "$BUILD/fuzz_$h.log" || true
done
