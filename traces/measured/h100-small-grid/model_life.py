#!/usr/bin/env python3
"""The model's naive qk CTAs on the shapes of analyze.py's last table: `memwall run` on the
calibrated H100 config (configs/calibrated/h100-sxm.yaml) with the mma.sync kernels and the L2
flushed before each kernel, as ncu ran them, and a timeline of every CTA. Per shape: r, the CTAs
an SM holds at a time (the sum of the CTAs' lives over the SMs in use times the kernel's span
after its launch overhead); L, a CTA's mean life; the mean wait for its Q and K loads and for its
S store (`drain`) and what is left of L beside them, all in microseconds; then the chip's L and M
(analyze.py) beside them.

  python3 traces/measured/h100-small-grid/model_life.py [MEMWALL]   (default build/memwall)
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CASES = [(1, 8, n, d) for n in (512, 1024, 2048) for d in (64, 128)] + [(4, 16, 1024, 64),
                                                                       (4, 16, 1024, 128)]


def life(memwall, b, h, n, d):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.json")
        subprocess.run([memwall, "run", "--config", os.path.join(ROOT, "configs/calibrated/h100-sxm.yaml"),
                        "--workload", "naive", "--gemm", "mma_sync", "--batch", str(b), "--heads",
                        str(h), "--seq", str(n), "--head-dim", str(d), "--flush-l2",
                        "--timeline", path, "--timeline-budget", "5000000"],
                       check=True, stdout=subprocess.DEVNULL)
        events = json.load(open(path))["traceEvents"]
    kernel = next(e for e in events if e.get("pid") == 0 and e.get("name") == "qk")
    t0, t1 = kernel["ts"], kernel["ts"] + kernel["dur"]
    ctas, waits, drains = [], [], []
    first = t1
    sms = set()
    for e in events:
        if e.get("ph") != "X" or e.get("pid", 0) == 0 or not t0 <= e["ts"] < t1:
            continue
        if e["name"] == "qk":
            ctas.append(e["dur"])
            first = min(first, e["ts"])
            sms.add(e["pid"])
        elif e["name"] == "wait" and e.get("args", {}).get("tag") == 0:
            waits.append(e["dur"])
        elif e["name"] == "drain":
            drains.append(e["dur"])
    span = t1 - first
    r = sum(ctas) / (span * len(sms))
    mean = lambda v: sum(v) / len(v)
    return r, mean(ctas), mean(waits), mean(drains)


def main():
    memwall = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "memwall")
    print("The model's qk CTAs (configs/calibrated/h100-sxm.yaml, mma_sync, L2 flushed), "
          "microseconds: r CTAs at a time, L a CTA's life, its load wait and store drain, the rest")
    print(f"{'B·H':>5} {'N':>5} {'d':>4} {'r':>5} {'L':>6} {'loads':>6} {'drain':>6} {'rest':>6}")
    for b, h, n, d in CASES:
        r, l, w, dr = life(memwall, b, h, n, d)
        print(f"{b * h:>5} {n:>5} {d:>4} {r:>5.2f} {l:>6.2f} {w:>6.2f} {dr:>6.2f} "
              f"{l - w - dr:>6.2f}")


if __name__ == "__main__":
    main()
