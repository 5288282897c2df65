#!/usr/bin/env bash
# The issue-slot mechanism tried on the simulator (README.md): flash2's forward and backward
# kernels at the shapes whose warp instructions are measured, on the calibrated H200 as it is and
# with the mechanism (every tile's or pair's instructions an issue op on the tensor pipe, shared
# memory on its own pipe, no mma.sync factor). Needs a build with experiment.patch applied:
#   git apply traces/measured/h200-issue-probe/experiment.patch && make build
#   traces/measured/h200-issue-probe/experiment.sh [build/memwall]
#   git apply -R traces/measured/h200-issue-probe/experiment.patch
set -euo pipefail
memwall=${1:-build/memwall}
mechanism="--set efficiency.mma_sync=1 --set sm.issue_pipe=tensor --set sm.smem_pipe=own"
# workload, head dim, block_kv, instructions per tile or pair, measured ncu time (us) and source
cases=(
  "flash2 64 128 8029 986.72 h200-pipe-probe/pipes.csv (B 4, H 16, N 4096)"
  "flash2 128 64 7955 2043.264 h200-pipe-probe/pipes.csv (B 4, H 16, N 4096)"
  "flash2-bwd 64 128 21994 1342.18 h200-flash2-bwd.csv (B 1, H 16, N 4096)"
  "flash2-bwd 128 128 17500 2119.9 h200-flash2-bwd.csv (B 1, H 16, N 4096)"
)
json=$(mktemp)
trap 'rm -f "$json"' EXIT
printf '%-10s %4s %10s %12s %8s %12s %8s\n' workload d measured_us calibrated_us error mechanism_us error
for c in "${cases[@]}"; do
  read -r workload d bkv inst measured _ <<<"$c"
  if [[ $workload == flash2 ]]; then
    shape="--batch 4 --heads 16 --seq 4096 --head-dim $d --block-q 128 --block-kv $bkv"
    var=MW_ISSUE
  else
    shape="--batch 1 --heads 16 --seq 4096 --head-dim $d"
    var=MW_BISSUE
  fi
  kernel_us() {
    python3 -c "import json, sys; k = [k for k in json.load(open('$json'))['kernels'] if k['name'] in ('flash2_fwd', 'flash2_bwd')][0]; print(f\"{k['time_s'] * 1e6:.1f}\")"
  }
  "$memwall" run -c h200-calibrated --workload "$workload" $shape --json "$json" >/dev/null
  base=$(kernel_us)
  env "$var=$inst" "$memwall" run -c h200-calibrated $mechanism --workload "$workload" $shape \
    --json "$json" >/dev/null
  mech=$(kernel_us)
  python3 -c "
m, b, x = $measured, $base, $mech
print(f'{\"$workload\":10} {$d:4} {m:10.1f} {b:12.1f} {100 * (b / m - 1):+7.1f}% {x:12.1f} {100 * (x / m - 1):+7.1f}%')"
done
