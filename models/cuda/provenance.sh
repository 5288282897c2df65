# Sourced by the ncu scripts of models/cuda. provenance FILE [LINE...] writes the date, the GPU
# (name, driver, clocks as found), the ncu release and then each LINE to FILE.
provenance() {
  local file=$1
  shift
  {
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv
    ncu --version | tail -1
    printf '%s\n' "$@"
  } >"$file"
}

# gpu_tag: the short name of GPU 0 that the scripts put in their output files' names (h200, h100,
# a100, rtx4090: the first word of its name made of letters then a digit, up to a dash, or a
# number with the word before it; lower case) of nvidia-smi's GPU 0, or $GPU_TAG when set (set it
# when CUDA_VISIBLE_DEVICES picks another GPU); "gpu" when nvidia-smi names none.
gpu_tag() {
  if [[ -n ${GPU_TAG:-} ]]; then
    echo "$GPU_TAG"
    return
  fi
  local name word prev=""
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
  for word in $name; do
    word=${word%%-*}
    if [[ $word =~ ^[A-Za-z]+[0-9] ]]; then
      echo "${word,,}" | tr -cd 'a-z0-9'
      return
    elif [[ $word =~ ^[0-9]+$ && -n $prev && $prev != NVIDIA ]]; then
      echo "${prev,,}${word}" | tr -cd 'a-z0-9'
      return
    fi
    prev=$word
  done
  echo gpu
}

# sass_counts BINARY: per kernel, how many of each opcode that matters to the Hopper kernels
# (wgmma, mma.sync, TMA, mbarriers, setmaxnreg, local-memory spills, barriers, MUFU) its SASS holds,
# one "kernel opcode count" line each, demangled.
sass_counts() {
  cuobjdump -sass "$1" | awk '
    /Function :/ { fn = $3; next }
    /\/\*[0-9a-f]+\*\// {
      line = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line); sub(/^@!?U?P[0-9T]+[ \t]+/, "", line)
      split(line, f, /[ \t;.]+/); op = f[1]
      if (op ~ /^(HGMMA|HMMA|UTMALDG|UTMASTG|UTMA|SYNCS|USETMAXREG|LDL|STL|WARPGROUP|BAR|MUFU)/) n[fn " " op]++
    }
    END { for (k in n) print k, n[k] }' | sort | c++filt
}

# known_metrics METRICS_FILE METRIC...: the METRICs (comma-separated) that METRICS_FILE (the output
# of `ncu --query-metrics`) lists, each without its roll-up suffix (.sum, .avg.per_second);
# launch__* are always kept. One unknown name would fail a whole ncu run. Each dropped one goes to
# stderr.
known_metrics() {
  local file=$1 m base list=""
  shift
  for m in "$@"; do
    base=${m%%.*}
    if [[ $m == launch__* ]] || grep -qE "^${base}( |$)" "$file"; then
      list+="${list:+,}$m"
    else
      echo "metric not in this ncu: $m" >&2
    fi
  done
  echo "$list"
}

# The counters of the issue probes (issue_probe.sh, stall_probe.sh): warp instructions, issue
# slots, pipes, cycles, clock, time, occupancy and launch shape.
ISSUE_METRICS=(smsp__inst_executed.sum smsp__issue_active.sum sm__inst_executed_pipe_tensor_op_hmma.sum
  smsp__inst_executed_op_ldsm.sum sm__inst_executed_pipe_fma.sum sm__inst_executed_pipe_alu.sum
  sm__inst_executed_pipe_xu.sum sm__inst_executed_pipe_lsu.sum
  sm__pipe_tensor_op_hmma_cycles_active.avg sm__cycles_elapsed.avg
  sm__cycles_elapsed.avg.per_second gpu__time_duration.sum smsp__warps_active.avg.per_cycle_active
  l1tex__data_pipe_lsu_wavefronts_mem_shared.sum launch__grid_size launch__occupancy_limit_registers
  sm__ctas_launched.sum)

# probe_setup OUTDIR: the common start of the ncu probes. Makes OUTDIR and sets out (its absolute
# path), tmp (a scratch folder), log (OUTDIR/log.txt), build and exe (memwall-cuda, built by
# profile.sh's build step; its log in OUTDIR/build-log.txt); defines step MESSAGE (a timestamped
# line to the log and stdout). Returns non-zero when the build failed.
probe_setup() {
  mkdir -p "$1"
  out=$(cd "$1" && pwd)
  build=${BUILD_DIR:-/tmp/memwall-cuda-build}
  exe="$build/memwall-cuda"
  tmp=$(mktemp -d)
  log="$out/log.txt"
  step() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$log"; }
  step "build (profile.sh, build step only)"
  STEPS=build BUILD_DIR="$build" bash models/cuda/profile.sh "$tmp/profile" >/dev/null 2>&1
  cp "$tmp/profile/log.txt" "$out/build-log.txt" 2>/dev/null
  [[ -x $exe ]] || { step "build FAILED (build-log.txt)"; return 1; }
}
