#!/usr/bin/env bash
# The device runs that wait for a GPU, in one call, each stage packed into its own tarball as it
# ends (a lent machine returns at most 8 files): from the repository root,
#
#   CAP=SECONDS GIT_COMMIT=$(git rev-parse HEAD) models/cuda/device_batch.sh OUT
#
# Stages, in order, the whole within CAP seconds (default 540): a stage starts only while at least
# 45 s of CAP are left, and its own limit (below, in the code) is cut to what is left:
#   reuse     models/cuda/ubench/l2_reuse.sh: what the L2 keeps of a footprint between kernels
#   nbwd      models/cuda/bwd.sh naive-bwd: the naive backward, causal and grouped-query included
#   variants  models/cuda/variants.sh          } on any GPU but an H200, whose runs of these
#   flash3    models/cuda/hopper/run_flash3.sh } are committed (traces/measured/h200-*): the
#   gemm      models/cuda/hopper/run_gemm.sh   } second chip's
# OUT gets batch.log (nvidia-smi, each stage's limit, exit status and end) and STAGE.tar.gz
# (the stage's folder and its stdout). Never changes the GPU's clocks or settings.
set -u
out=${1:?usage: device_batch.sh OUT}
mkdir -p "$out"
export GIT_COMMIT=${GIT_COMMIT:-unknown} COMMIT=${GIT_COMMIT:-unknown}
cap=${CAP:-540}
log=$out/batch.log
work=$(mktemp -d)
t0=$SECONDS
stage() {  # NAME SECONDS COMMAND... (the command gets the stage's folder as its last argument)
  local name=$1 secs=$2 left
  shift 2
  left=$((cap - (SECONDS - t0)))
  if ((left < 45)); then
    echo "skip $name: ${left}s left" >>"$log"
    return
  fi
  ((secs > left)) && secs=$left
  mkdir -p "$work/$name"
  echo "== $(date -u +%T) $name (limit ${secs}s)" >>"$log"
  timeout "$secs" "$@" "$work/$name" >"$work/$name/stdout.txt" 2>&1
  echo "   exit $? after $((SECONDS - t0))s" >>"$log"
  tar -czf "$out/$name.tar.gz" -C "$work" "$name"
}
nvidia-smi >"$log" 2>&1
stage reuse 90 models/cuda/ubench/l2_reuse.sh
stage nbwd 200 models/cuda/bwd.sh naive-bwd
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  stage variants 300 models/cuda/variants.sh
  stage flash3 70 models/cuda/hopper/run_flash3.sh
  stage gemm 60 models/cuda/hopper/run_gemm.sh
fi
echo "done after $((SECONDS - t0))s" >>"$log"
