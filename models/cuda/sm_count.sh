#!/usr/bin/env bash
# Times a subset of the sweep's cases on fewer SMs: memwall-cuda without a green context, then in
# green contexts of 132 (all SMs, a control), 66, 33 and 16 SMs (--sms; the driver may round a
# count up, and the sms column records what it gave), so that the simulator's `--set sm.count=N`
# can be checked against the same kernels. Run from the repository root on a machine with an
# NVIDIA GPU:
#
#   GIT_COMMIT=$(git rev-parse HEAD) models/cuda/sm_count.sh OUTDIR
#
# The cases: flash2 at the contract's default blocks (d = 64: 128x128, d = 128: 128x64, 2 stages)
# and naive at its default blocks, d = 64 and 128, N = 1024, 4096 and 16384, B.H = 1.8 and 4.16
# (naive at 4.16 stops at N = 4096, as in the sweep): 22 cases of the "sweep" list. Timing is the
# harness's (CUDA events, 3 warm-ups, median of 25 repeats, cold L2 before each), every case
# checked against the CPU reference. Then, where ncu runs under green contexts, the DRAM bytes of
# two cases at each SM count, and a second timing pass in the opposite order.
#
# Writes into OUTDIR: TAG-sm-count.csv (TAG: the GPU's short name, h200 or h100, models/cuda/
# provenance.sh's gpu_tag; the harness's columns + sms_requested, empty without a
# green context, and sms, the SMs the kernels had), repeat.csv (the second pass, same columns),
# ncu.csv (per kernel: sms_requested, sms, ncu_time_s, dram_read_bytes, dram_write_bytes),
# clocks.csv (nvidia-smi every 200 ms throughout), log.txt (every run's output, the green
# contexts' SM ids, source hashes, a summary table), provenance.txt (models/cuda/provenance.sh)
# and build-log.txt (profile.sh's build step). Never changes the GPU's clocks or settings.
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
out=${1:?usage: sm_count.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
table="$out/$(gpu_tag)-sm-count.csv"  # named once, after the GPU (provenance.sh)
build=${BUILD_DIR:-/tmp/memwall-cuda-build}
exe="$build/memwall-cuda"
tmp=$(mktemp -d)
log="$out/log.txt"
read -r -a sm_counts <<<"${SM_COUNTS:-132 66 33 16}"
step() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$log"; }

cases=()
for d in 64 128; do
  bkv=$([[ $d == 64 ]] && echo 128 || echo 64)
  for n in 1024 4096 16384; do
    for bh in 1,8 4,16; do
      b=${bh%,*} h=${bh#*,}
      cases+=("workload=flash2,batch=$b,heads=$h,seq=$n,head_dim=$d,block_q=128,block_kv=$bkv,stages=2")
      if ! [[ $bh == 4,16 && $n == 16384 ]]; then
        cases+=("workload=naive,batch=$b,heads=$h,seq=$n,head_dim=$d,block_q=128,block_kv=128,block_k=64,softmax_rows=4")
      fi
    done
  done
done
case_args=()
for c in "${cases[@]}"; do case_args+=(--case "$c"); done
ncu_cases=(--case workload=flash2,batch=4,heads=16,seq=4096,head_dim=128,block_q=128,block_kv=64,stages=2
           --case workload=naive,batch=1,heads=8,seq=4096,head_dim=128,block_q=128,block_kv=128,block_k=64,softmax_rows=4)
ncu_metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
kernels='regex:naive_qk_kernel|naive_softmax_kernel|naive_pv_kernel|flash2_fwd_kernel'

step "build (profile.sh, build step only)"
STEPS=build BUILD_DIR="$build" bash models/cuda/profile.sh "$tmp/profile" >/dev/null 2>&1
cp "$tmp/profile/log.txt" "$out/build-log.txt"
[[ -x $exe ]] || { step "build FAILED (build-log.txt)"; exit 1; }

provenance "$out/provenance.txt" \
  "git_commit: ${GIT_COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}" \
  "nvcc: $(nvcc --version | grep release)" \
  "sm counts: none ${sm_counts[*]}" \
  "timing: $exe <22 --case specs> [--sms N] --csv FILE (specs in log.txt)" \
  "ncu: ncu --clock-control none --metrics $ncu_metrics --csv --print-units base --kernel-name '$kernels' --log-file FILE $exe ${ncu_cases[*]} [--sms N] --once --csv LAUNCHES"
cat "$out/provenance.txt" >>"$log"
nvidia-smi -q -d CLOCK,PERFORMANCE >>"$log" 2>&1
printf 'case: %s\n' "${cases[@]}" >>"$log"
sha256sum models/cuda/*.cu models/cuda/*.cc models/cuda/*.h models/cuda/sm_count.sh >>"$log"

nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 200 >"$out/clocks.csv" 2>&1 &
smi_pid=$!

# time_pass FILE LABEL...: one harness run per label ("none" or an SM count), merged into FILE.
time_pass() {
  local file=$1
  shift
  for label in "$@"; do
    local sms=()
    [[ $label != none ]] && sms=(--sms "$label")
    step "timing, sms $label"
    timeout 200 "$exe" "${case_args[@]}" "${sms[@]}" --csv "$tmp/t-$label.csv" >>"$log" 2>&1
    echo "rc=$?" | tee -a "$log"
  done
  device_sms=$(grep -m1 -oE ', [0-9]+ SMs, L2' "$log" | grep -oE '^, [0-9]+' | grep -oE '[0-9]+')
  {
    head -1 "$tmp/t-none.csv" | sed 's/$/,sms_requested,sms/'
    tail -n +2 "$tmp/t-none.csv" | sed "s/\$/,,$device_sms/"
    for label in "$@"; do
      [[ $label != none ]] && tail -n +2 "$tmp/t-$label.csv"
    done
  } >"$file"
  rm -f "$tmp"/t-*.csv
}

# The rows without a green context get the device's SM count, as memwall-cuda reports it.
device_sms=0
time_pass "$table" none "${sm_counts[@]}"

step "ncu under green contexts"
for label in none "${sm_counts[@]}"; do
  sms=()
  [[ $label != none ]] && sms=(--sms "$label")
  timeout 120 ncu --clock-control none --metrics "$ncu_metrics" --csv --print-units base \
    --kernel-name "$kernels" --log-file "$tmp/ncu-$label.csv" \
    "$exe" "${ncu_cases[@]}" "${sms[@]}" --once --csv "$tmp/launches-$label.csv" >>"$log" 2>&1
  echo "ncu sms $label rc=$?" | tee -a "$log"
done
python3 - "$tmp" "$out/ncu.csv" "$device_sms" none "${sm_counts[@]}" <<'EOF' 2>&1 | tee -a "$log"
import csv, os, sys
sys.path.insert(0, "models/cuda")
from merge_ncu import PARAMS, read_csv, read_ncu
tmp, dest, device_sms, labels = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
cols = PARAMS + ["kernel", "sms_requested", "sms", "ncu_time_s", "dram_read_bytes", "dram_write_bytes"]
with open(dest, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=cols)
    w.writeheader()
    for label in labels:
        try:
            launches = [r for r in read_csv(f"{tmp}/launches-{label}.csv") if r["kernel"] != "total"]
            prof = read_ncu(f"{tmp}/ncu-{label}.csv")
        except (OSError, SystemExit, KeyError) as e:
            print(f"ncu sms {label}: no data ({e})")
            continue
        if len(prof) != len(launches):
            print(f"ncu sms {label}: {len(prof)} profiled launches, {len(launches)} kernels run")
            continue
        for row, (name, m) in zip(launches, prof):
            out = {p: row[p] for p in PARAMS}
            out.update(kernel=row["kernel"], sms_requested=row.get("sms_requested", ""),
                       sms=row.get("sms", device_sms),
                       **{k: f"{v:.6e}" if k == "ncu_time_s" else int(v) for k, v in m.items()})
            w.writerow(out)
print(f"wrote {dest}")
EOF

if (( SECONDS < 400 )); then
  rev=()
  for (( i=${#sm_counts[@]}-1; i>=0; i-- )); do rev+=("${sm_counts[i]}"); done
  time_pass "$out/repeat.csv" "${rev[@]}" none
else
  step "second pass skipped (${SECONDS} s elapsed)"
fi
kill "$smi_pid" 2>/dev/null
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >>"$log" 2>&1

step summary
python3 - "$table" "$out/repeat.csv" <<'EOF' 2>&1 | tee -a "$log"
import csv, os, sys
def load(path):
    if not os.path.exists(path):
        return {}
    t = {}
    for r in csv.DictReader(open(path)):
        if r["kernel"] != "total" or not r["time_s"]:
            continue
        key = (r["workload"], r["batch"], r["heads"], r["seq"], r["head_dim"])
        t[(key, r["sms_requested"] or "none")] = (float(r["time_s"]), r["sms"], r["check"])
    return t
a, b = load(sys.argv[1]), load(sys.argv[2])
labels = []
for _, label in a:
    if label not in labels:
        labels.append(label)
print("total time (ms) per case; [sms held]; slowdown against no green context; repeat pass in ()")
print("case".ljust(28) + "".join(f"{l:>22}" for l in labels))
for key in sorted({k for k, _ in a}, key=lambda k: (k[0], int(k[4]), int(k[3]), int(k[1]) * int(k[2]))):
    base = a[(key, "none")][0]
    cells = []
    for l in labels:
        t, sms, chk = a[(key, l)]
        rep = b.get((key, l))
        cells.append(f"{t*1e3:8.3f}[{sms}]x{t/base:5.2f}" + (f"({rep[0]*1e3:.3f})" if rep else "") + ("" if chk == "pass" else " FAIL"))
    print(f"{key[0]} B={key[1]} H={key[2]} N={key[3]} d={key[4]}".ljust(28) + "".join(f"{c:>22}" for c in cells))
EOF
rm -rf "$tmp"
step done
