#!/usr/bin/env bash
# Every tracked C++ and CUDA source follows .clang-format: clang-format --dry-run --Werror names
# each file and line that it would change. Run from anywhere; `make format` fixes what it reports.
#   tests/format_check.sh [CLANG_FORMAT]
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${1:-clang-format}
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "format_check: not a git checkout; nothing to check" >&2
  exit 77
fi
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
"$clang_format" --dry-run --Werror "${files[@]}"
echo "format_check: ${#files[@]} files follow .clang-format"
