#!/usr/bin/env bash
# Checks and measures the flash2 variants (causal prefill, GQA prefill, decode with and without
# split-KV) on an NVIDIA GPU: the unvaried check cases and the variant check cases against the CPU
# reference, the "variants" sweep timed (CUDA events, 3 warm-ups, median of 25, cold L2), PyTorch's
# flash backend at the same shapes (torch_sdpa.py), and Nsight Compute with the metrics of
# profile.sh (SM-side l1tex__m_xbar2l1tex_read_bytes / l1tex__m_l1tex2xbar_write_bytes, lts and
# dram bytes, time), merged into one CSV by merge_variants.py. Run from the repository root:
#
#   GIT_COMMIT=$(git rev-parse HEAD) [EXE=path/to/memwall-cuda] [SASS_BASE=old.o] \
#     models/cuda/variants.sh OUTDIR
#
# Without EXE it builds memwall-cuda with profile.sh's build step. With SASS_BASE (an object of
# flash2_attention.cu from before the variants) and SASS_NEW (the same file now), it first
# compares the unvaried flash2_fwd_kernel instantiations' SASS of the two (cuobjdump).
# The one case whose K and V exceed 32 GB (batch 64, 32 KV heads, Nkv 65536) is profiled with
# ncu's application replay, so that kernel replay need not save 69 GB between passes.
#
# Writes into OUTDIR: TAG-variants.csv (TAG: the GPU's short name, h200 or h100, models/cuda/
# provenance.sh's gpu_tag; merge_variants.py's columns), log.txt (every step's
# output, the heuristic's split counts, a summary table), provenance.txt and raw.tar.gz (check,
# timing, launch, ncu and torch CSVs, the SASS comparison). Never changes the GPU's clocks or
# settings (ncu --clock-control none).
set -uo pipefail
export PATH=$PATH:/usr/local/cuda/bin  # cuobjdump, where the image does not put it on PATH
. "$(dirname "$0")/provenance.sh"
out=${1:?usage: variants.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
table="$out/$(gpu_tag)-variants.csv"  # named once, after the GPU (provenance.sh)
build=${BUILD_DIR:-/tmp/memwall-cuda-build}
exe=${EXE:-$build/memwall-cuda}
tmp=$(mktemp -d)
raw="$tmp/raw"
mkdir -p "$raw"
log="$out/log.txt"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum
kernels='regex:flash2_fwd_kernel|flash2_fwd_variant_kernel|flash2_combine_kernel'
step() { echo "== $(date -u +%H:%M:%S) (${SECONDS}s) $*" | tee -a "$log"; }

if [[ ! -x $exe ]]; then
  step "build (profile.sh, build step only)"
  STEPS=build BUILD_DIR="$build" bash models/cuda/profile.sh "$tmp/profile" >/dev/null 2>&1
  cp "$tmp/profile/log.txt" "$raw/build-log.txt"
  exe=$build/memwall-cuda
  [[ -x $exe ]] || { step "build FAILED"; tar -czf "$out/raw.tar.gz" -C "$tmp" raw; exit 1; }
fi

"$exe" --sweep variants --list >"$raw/cases.csv"
# The big case apart (application replay), the rest as --case specs.
python3 - "$raw/cases.csv" "$tmp/small.txt" "$tmp/big.txt" <<'EOF'
import csv, sys
small, big = open(sys.argv[2], "w"), open(sys.argv[3], "w")
keys = ["workload", "batch", "heads", "seq", "head_dim", "block_q", "block_kv", "stages",
        "causal", "kv_heads", "seq_kv", "splits"]
for r in csv.DictReader(open(sys.argv[1])):
    spec = ",".join(f"{k}={r[k]}" for k in keys)
    kv_bytes = 2 * int(r["batch"]) * int(r["kv_heads"]) * int(r["seq_kv"]) * int(r["head_dim"]) * 2
    (big if kv_bytes > 32e9 else small).write(f"--case\n{spec}\n")
EOF
mapfile -t small_args <"$tmp/small.txt"
mapfile -t big_args <"$tmp/big.txt"

provenance "$out/provenance.txt" \
  "git_commit: ${GIT_COMMIT:-$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}" \
  "nvcc (build): $(nvcc --version 2>/dev/null | grep release || echo 'not here: built elsewhere, carried')" \
  "python3 / torch: $(python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)' 2>&1)" \
  "check: $exe --sweep check --csv check.csv; $exe --sweep variants-check --csv variants-check.csv" \
  "timing: $exe --sweep variants --csv timing.csv" \
  "torch: $exe --sweep variants --list > cases.csv; python3 models/cuda/torch_sdpa.py --cases cases.csv --csv torch_sdpa.csv" \
  "ncu: ncu --clock-control none --metrics $metrics --csv --print-units base --kernel-name '$kernels' --log-file ncu.csv $exe <the variants cases but the big one, as --case specs> --once --csv launches.csv" \
  "ncu (big): ncu --replay-mode application --clock-control none --metrics $metrics --csv --print-units base --kernel-name '$kernels' --log-file ncu-big.csv $exe ${big_args[*]} --once --csv launches-big.csv" \
  "merge: python3 models/cuda/merge_variants.py --timing timing.csv --launches launches.csv launches-big.csv --ncu ncu.csv ncu-big.csv --torch torch_sdpa.csv --out $(basename "$table")"
cat "$out/provenance.txt" >>"$log"
nvidia-smi -q -d CLOCK,PERFORMANCE >>"$log" 2>&1
sha256sum models/cuda/*.cu models/cuda/*.cc models/cuda/*.h models/cuda/*.sh models/cuda/*.py "$exe" >>"$log"
cat "$raw/cases.csv" >>"$log"

if [[ -n ${SASS_BASE:-} && -n ${SASS_NEW:-} ]]; then
  step "SASS of the unvaried flash2_fwd_kernel: before the variants against now"
  cuobjdump --dump-sass "$SASS_BASE" >"$tmp/base.sass" 2>&1
  cuobjdump --dump-sass "$SASS_NEW" >"$tmp/new.sass" 2>&1
  python3 - "$tmp/base.sass" "$tmp/new.sass" <<'EOF' 2>&1 | tee "$raw/sass-compare.txt" | tee -a "$log"
import re, sys
def funcs(path):
    out, name = {}, None
    for line in open(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)  # the same mangled name in both: one source file
            out[name] = []
            continue
        if name and "/*" in line:  # instructions and encodings, whitespace normalised
            out[name].append(" ".join(line.split()))
    return out
a, b = funcs(sys.argv[1]), funcs(sys.argv[2])
names = sorted(n for n in a if "flash2_fwd_kernel" in n)
same = 0
for n in names:
    if a[n] == b.get(n):
        same += 1
    else:
        print(f"DIFFERENT: {n} ({len(a[n])} vs {len(b.get(n, []))} instructions)")
print(f"unvaried flash2_fwd_kernel SASS identical in {same} of {len(names)} instantiations")
EOF
fi

step "check: unvaried cases (every instantiated variant)"
timeout 60 "$exe" --sweep check --csv "$raw/check.csv" >>"$log" 2>&1
echo "rc=$?" | tee -a "$log"
step "check: variant cases (causal, GQA, decode, split-KV, against the CPU reference and unsplit)"
timeout 60 "$exe" --sweep variants-check --csv "$raw/variants-check.csv" >>"$log" 2>&1
rc=$?
echo "rc=$rc" | tee -a "$log"
grep -E "FAIL|split .* vs unsplit" "$log" | tail -30

step "timing (variants)"
timeout 120 "$exe" --sweep variants --csv "$raw/timing.csv" >>"$log" 2>&1
echo "rc=$?" | tee -a "$log"

step "ncu (variants but the big case, kernel replay)"
timeout 150 ncu --clock-control none --metrics "$metrics" --csv --print-units base \
  --kernel-name "$kernels" --log-file "$raw/ncu.csv" \
  "$exe" "${small_args[@]}" --once --csv "$raw/launches.csv" >>"$log" 2>&1
echo "rc=$?" | tee -a "$log"
step "ncu (the big case, application replay)"
timeout 60 ncu --replay-mode application --clock-control none --metrics "$metrics" --csv \
  --print-units base --kernel-name "$kernels" --log-file "$raw/ncu-big.csv" \
  "$exe" "${big_args[@]}" --once --csv "$raw/launches-big.csv" >>"$log" 2>&1
echo "rc=$?" | tee -a "$log"

step "torch flash backend"
PYTHONUNBUFFERED=1 timeout 90 python3 models/cuda/torch_sdpa.py --cases "$raw/cases.csv" \
  --csv "$raw/torch_sdpa.csv" >>"$log" 2>&1
echo "rc=$?" | tee -a "$log"

step merge
python3 models/cuda/merge_variants.py --timing "$raw/timing.csv" \
  --launches "$raw/launches.csv" "$raw/launches-big.csv" --ncu "$raw/ncu.csv" "$raw/ncu-big.csv" \
  --torch "$raw/torch_sdpa.csv" --out "$table" 2>&1 | tee -a "$log"

if (( SECONDS < ${SANITIZER_BEFORE_S:-300} )); then
  step "compute-sanitizer memcheck (variant check cases, once each)"
  timeout 60 compute-sanitizer --tool memcheck "$exe" --sweep variants-check --once \
    --csv "$tmp/san.csv" >"$raw/memcheck.txt" 2>&1
  echo "rc=$? $(grep -m1 'ERROR SUMMARY' "$raw/memcheck.txt")" | tee -a "$log"
else
  step "compute-sanitizer skipped (${SECONDS} s elapsed)"
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >>"$log" 2>&1
tar -czf "$out/raw.tar.gz" -C "$tmp" raw
rm -rf "$tmp"
step done
