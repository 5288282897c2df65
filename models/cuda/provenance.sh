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
