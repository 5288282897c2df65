#!/usr/bin/env bash
# Times a subset of the sweep's cases with less L2: memwall-cuda without --l2-reserve, then with
# persisting-L2 carve-outs of 0, 25, 50, 75 and 100% of the device's maximum (--l2-reserve P%: a
# hog buffer's persisting lines hold the set-aside part, and the kernels, which run without an
# access policy window, get the rest), so that the simulator's `--set l2.size=...` can be checked
# against the same kernels. Run from the repository root on a machine with an NVIDIA GPU:
#
#   GIT_COMMIT=$(git rev-parse HEAD) models/cuda/l2_size.sh OUTDIR
#
# The cases (all in the harness's "sweep" list), whose DRAM bytes depend on the L2's capacity:
# naive at B.H = 1.8, N = 1024, 2048 and 4096 (S and P of 16, 64 and 256 MiB), and flash2 at
# B.H = 4.16, N = 4096 and 8192, each at d = 64 and 128, at the contract's default blocks. Timing
# is the harness's (CUDA events, 3 warm-ups, median of 25 repeats, the L2 flushed and the hog
# re-read before each), every case checked against the CPU reference. Each run with a reserve
# also runs the harness's L2 probe (--l2-probe: re-reads of buffers of 2-56 MiB, and the hog read
# after a flush). Then ncu on the same cases and probe at each reserve, one launch per kernel:
# `--cache-control none` with the harness's own flush and hog read before every kernel (ncu's
# flush would drop the hog's lines); the run without a reserve keeps ncu's default flush, as the
# sweep was profiled. Then a second timing pass in the opposite order, if time is left.
#
# Writes into OUTDIR: TAG-l2-size.csv (TAG: the GPU's short name, h200 or h100, models/cuda/
# provenance.sh's gpu_tag; the harness's columns + reserve, the --l2-reserve
# argument, "none" without it, reserve_bytes, granted_bytes (the limit the driver granted, read
# back), ncu_time_s, dram_read_bytes, dram_write_bytes), probe.csv (per reserve and probe read:
# CUDA-event time, and ncu's time and DRAM bytes), repeat.csv (the second pass, harness columns),
# clocks.csv (nvidia-smi every 200 ms), log.txt (every run's output, source hashes, the summary),
# provenance.txt (models/cuda/provenance.sh), build-log.txt (profile.sh's build step) and
# ncu-raw.tar.gz (ncu's own CSVs and the launch lists). Never changes the GPU's clocks or
# settings; the persisting-L2 limit is the harness process's and ends with it.
set -uo pipefail
. "$(dirname "$0")/provenance.sh"
out=${1:?usage: l2_size.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
table="$out/$(gpu_tag)-l2-size.csv"  # named once, after the GPU (provenance.sh)
build=${BUILD_DIR:-/tmp/memwall-cuda-build}
exe="$build/memwall-cuda"
tmp=$(mktemp -d)
log="$out/log.txt"
read -r -a reserves <<<"${RESERVES:-0% 25% 50% 75% 100%}"
step() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$log"; }
label_of() { [[ $1 == none ]] && echo none || echo "r${1%\%}"; }

cases=()
for d in 64 128; do
  for n in 1024 2048 4096; do
    cases+=("workload=naive,batch=1,heads=8,seq=$n,head_dim=$d,block_q=128,block_kv=128,block_k=64,softmax_rows=4")
  done
  bkv=$([[ $d == 64 ]] && echo 128 || echo 64)
  for n in 4096 8192; do
    cases+=("workload=flash2,batch=4,heads=16,seq=$n,head_dim=$d,block_q=128,block_kv=$bkv,stages=2")
  done
done
case_args=()
for c in "${cases[@]}"; do case_args+=(--case "$c"); done
ncu_metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
kernels='regex:naive_qk_kernel|naive_softmax_kernel|naive_pv_kernel|flash2_fwd_kernel|l2_probe_reread_kernel|l2_probe_hog_kernel'

step "build (profile.sh, build step only)"
STEPS=build BUILD_DIR="$build" bash models/cuda/profile.sh "$tmp/profile" >/dev/null 2>&1
cp "$tmp/profile/log.txt" "$out/build-log.txt"
[[ -x $exe ]] || { step "build FAILED (build-log.txt)"; exit 1; }

provenance "$out/provenance.txt" \
  "git_commit: ${GIT_COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}" \
  "nvcc: $(nvcc --version | grep release)" \
  "reserves: none ${reserves[*]}" \
  "timing: $exe <${#cases[@]} --case specs> [--l2-reserve R --l2-probe FILE] --csv FILE (specs in log.txt)" \
  "ncu, no reserve: ncu --clock-control none --metrics $ncu_metrics --csv --print-units base --kernel-name '$kernels' --log-file FILE $exe <cases> --once --csv LAUNCHES" \
  "ncu, reserve R: ncu --clock-control none --cache-control none --metrics $ncu_metrics --csv --print-units base --kernel-name '$kernels' --log-file FILE $exe <cases> --l2-reserve R --l2-probe FILE --once --csv LAUNCHES"
cat "$out/provenance.txt" >>"$log"
nvidia-smi -q -d CLOCK,PERFORMANCE >>"$log" 2>&1
printf 'case: %s\n' "${cases[@]}" >>"$log"
sha256sum models/cuda/*.cu models/cuda/*.cc models/cuda/*.h models/cuda/l2_size.sh >>"$log"

nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 200 >"$out/clocks.csv" 2>&1 &
smi_pid=$!

# time_pass PREFIX RESERVE...: one harness run per reserve ("none": no --l2-reserve).
time_pass() {
  local prefix=$1
  shift
  for r in "$@"; do
    local l extra=()
    l=$(label_of "$r")
    [[ $r != none ]] && extra=(--l2-reserve "$r" --l2-probe "$tmp/$prefix-probe-$l.csv")
    step "timing ($prefix), reserve $r"
    timeout 120 "$exe" "${case_args[@]}" "${extra[@]}" --csv "$tmp/$prefix-$l.csv" >>"$log" 2>&1
    echo "rc=$?" | tee -a "$log"
  done
}
time_pass t none "${reserves[@]}"

step "ncu at each reserve"
for r in none "${reserves[@]}"; do
  l=$(label_of "$r")
  if (( SECONDS > 420 )); then step "ncu reserve $r skipped (${SECONDS} s elapsed)"; continue; fi
  extra=() cc=()
  [[ $r != none ]] && extra=(--l2-reserve "$r" --l2-probe "$tmp/n-probe-$l.csv") cc=(--cache-control none)
  timeout 100 ncu --clock-control none "${cc[@]}" --metrics "$ncu_metrics" --csv --print-units base \
    --kernel-name "$kernels" --log-file "$tmp/ncu-$l.csv" \
    "$exe" "${case_args[@]}" "${extra[@]}" --once --csv "$tmp/launches-$l.csv" >>"$log" 2>&1
  echo "ncu reserve $r rc=$?" | tee -a "$log"
done

if (( SECONDS < 380 )); then
  rev=()
  for (( i=${#reserves[@]}-1; i>=0; i-- )); do rev+=("${reserves[i]}"); done
  time_pass p "${rev[@]}" none
else
  step "second pass skipped (${SECONDS} s elapsed)"
fi
kill "$smi_pid" 2>/dev/null
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >>"$log" 2>&1

step merge
python3 - "$tmp" "$table" none "${reserves[@]}" <<'EOF' 2>&1 | tee -a "$log"
import csv, os, sys
sys.path.insert(0, "models/cuda")
from merge_ncu import PARAMS, read_csv, read_ncu
tmp, table, reserves = sys.argv[1], sys.argv[2], sys.argv[3:]
out = os.path.dirname(table)
label = lambda r: "none" if r == "none" else "r" + r.rstrip("%")
ncu_cols = ["ncu_time_s", "dram_read_bytes", "dram_write_bytes"]
fmt = lambda k, v: f"{v:.6e}" if k.endswith("_s") else str(int(round(v)))

def load(path):
    return read_csv(path) if os.path.exists(path) else []

def ncu_of(r):
    """(per case-kernel key: ncu metrics, per probe launch: [(name, metrics)])."""
    l = label(r)
    try:
        launches = [x for x in read_csv(f"{tmp}/launches-{l}.csv") if x["kernel"] != "total"]
        prof = read_ncu(f"{tmp}/ncu-{l}.csv")
    except (OSError, SystemExit, KeyError) as e:
        print(f"ncu reserve {r}: no data ({e})")
        return {}, []
    probe = [p for p in prof if "l2_probe" in p[0]]
    attn = [p for p in prof if "l2_probe" not in p[0]]
    if len(attn) != len(launches):
        print(f"ncu reserve {r}: {len(attn)} profiled launches, {len(launches)} kernels run")
        return {}, probe
    per = {}
    for row, (name, m) in zip(launches, attn):
        key = tuple(row[p] for p in PARAMS) + (row["kernel"],)
        per[key] = m
    for row in read_csv(f"{tmp}/launches-{l}.csv"):  # totals: the sum of the case's kernels
        if row["kernel"] == "total":
            ks = [k for k in per if k[:-1] == tuple(row[p] for p in PARAMS)]
            per[tuple(row[p] for p in PARAMS) + ("total",)] = {
                c: sum(per[k][c] for k in ks) for c in ncu_cols}
    return per, probe

rows, probe_rows = [], []
cols = None
for r in reserves:
    l = label(r)
    timing = load(f"{tmp}/t-{l}.csv")
    per, probe = ncu_of(r)
    for t in timing:
        key = tuple(t[p] for p in PARAMS) + (t["kernel"],)
        o = {k: v for k, v in t.items() if k not in ("reserve_bytes", "granted_bytes")}
        o["reserve"] = r
        o["reserve_bytes"] = t.get("reserve_bytes", "")
        o["granted_bytes"] = t.get("granted_bytes", "")
        m = per.get(key, {})
        for c in ncu_cols:
            o[c] = fmt(c, m[c]) if c in m else ""
        rows.append(o)
        cols = cols or list(o.keys())
    tprobe = load(f"{tmp}/t-probe-{l}.csv")
    for i, p in enumerate(tprobe):
        o = {"reserve": r, "reserve_bytes": p["reserve_bytes"], "granted_bytes": p["granted_bytes"],
             "probe": p["probe"], "bytes": p["bytes"], "time_s": p["time_s"], "repeats": p["repeats"]}
        m = probe[i][1] if i < len(probe) else {}
        for c in ncu_cols:
            o["ncu_" + c if not c.startswith("ncu") else c] = fmt(c, m[c]) if c in m else ""
        probe_rows.append(o)
if rows:
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {table} ({len(rows)} rows)")
if probe_rows:
    with open(f"{out}/probe.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(probe_rows[0].keys()))
        w.writeheader()
        w.writerows(probe_rows)
    print(f"wrote {out}/probe.csv ({len(probe_rows)} rows)")
rep = []
for r in reserves:
    for t in load(f"{tmp}/p-{label(r)}.csv"):
        t = dict(t)
        t["reserve"] = r
        rep.append(t)
if rep:
    keys = list(dict.fromkeys(k for t in rep for k in t))
    with open(f"{out}/repeat.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rep)
    print(f"wrote {out}/repeat.csv ({len(rep)} rows)")

print("\nprobe: re-read time (us) and ncu DRAM read / bytes read, per reserve")
sizes = sorted({int(p["bytes"]) for p in probe_rows if p["probe"] == "reread"})
print("MiB".ljust(8) + "".join(f"{r:>18}" for r in reserves if r != "none"))
for s in sizes + ["hog"]:
    cells = []
    for r in reserves:
        if r == "none":
            continue
        p = [x for x in probe_rows if x["reserve"] == r and
             (x["probe"] == "hog" if s == "hog" else x["probe"] == "reread" and int(x["bytes"]) == s)]
        if not p:
            cells.append("-")
            continue
        p = p[0]
        frac = (f"{int(p['ncu_dram_read_bytes']) / int(p['bytes']):.2f}"
                if p["ncu_dram_read_bytes"] else "?")
        cells.append(f"{float(p['time_s'])*1e6:8.2f} {frac:>6}")
    name = "hog" if s == "hog" else f"{s / 2**20:.0f}"
    print(name.ljust(8) + "".join(f"{c:>18}" for c in cells))

print("\ntotal time (ms) and ncu DRAM read+write (MiB) per case and reserve")
print("case".ljust(28) + "".join(f"{r:>20}" for r in reserves))
keys = list(dict.fromkeys(tuple(x[p] for p in PARAMS) for x in rows))
for key in keys:
    cells = []
    for r in reserves:
        x = [y for y in rows if y["reserve"] == r and y["kernel"] == "total" and
             tuple(y[p] for p in PARAMS) == key]
        if not x or not x[0]["time_s"]:
            cells.append("-")
            continue
        x = x[0]
        dram = (int(x["dram_read_bytes"]) + int(x["dram_write_bytes"])) / 2**20 if x["dram_read_bytes"] else float("nan")
        cells.append(f"{float(x['time_s'])*1e3:8.4f} {dram:8.1f}" + ("" if x["check"] == "pass" else " FAIL"))
    print(f"{key[0]} B={key[1]} H={key[2]} N={key[3]} d={key[4]}".ljust(28) + "".join(f"{c:>20}" for c in cells))
EOF
grep -hoE -- '- [0-9]+ pass(es)?' "$log" "$tmp"/ncu-*.csv | sort | uniq -c |
  sed 's/^/ncu, profiled launches by passes: /' | tee -a "$log"
(cd "$tmp" && tar -czf "$out/ncu-raw.tar.gz" ncu-*.csv launches-*.csv ./*probe-*.csv) >>"$log" 2>&1
rm -rf "$tmp"
step done
