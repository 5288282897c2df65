# Sourced by the ncu scripts of models/cuda: provenance FILE [LINE...] writes the date, the GPU
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
