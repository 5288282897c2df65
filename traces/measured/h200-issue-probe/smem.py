#!/usr/bin/env python3
"""Where the mma.sync kernels' shared-memory reads go in their time (issue.csv of issue_probe.sh).

Per launch and SM setting, in fractions of the SM cycles the launch took (ncu's
sm__cycles_elapsed.avg): T, the tensor pipe's bound (HMMA instructions at the measured 2660 FLOP
per cycle per SM); I, the issue slots' (warp instructions over 4 schedulers); S, the shared-memory
pipe's (l1tex__data_pipe_lsu_wavefronts_mem_shared, one wavefront per cycle per SM); and T + I,
T + I + S. CTAs/SM is the flash2 kernels' occupancy from their shared memory (Q block plus
`stages` K and V blocks, 228 KiB per SM, 1 KiB reserved per CTA; capped at 8); for naive qk and pv
it is left blank (their occupancy is set by registers: memwall's report gives qk 2 CTAs per SM,
pv 3 at d = 64 and 1 at d = 128).

  python3 traces/measured/h200-issue-probe/smem.py [issue.csv]   (the output: smem.txt)
"""
import os
import sys

import analyze as A

SMEM_PER_SM = 233472
RESERVED_PER_CTA = 1024


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(A.HERE, "probe", "issue.csv")
    launches = A.read(path)
    expected = A.cases()
    print(f"{'sms':>4} {'kernel':7} {'d':>3} {'N':>5} {'c':>1} {'tile':>14} {'CTAs/SM':>7} "
          f"{'T':>6} {'I':>6} {'S':>6} {'T+I':>6} {'T+I+S':>6}")
    for setting, sms in A.SMS.items():
        ids = sorted(i for s, i in launches if s == setting)
        for i, (family, d, n, causal, bq, bkv, stages) in zip(ids, expected):
            m = launches[(setting, i)]
            cycles = m["sm__cycles_elapsed.avg"]
            t = m["sm__inst_executed_pipe_tensor_op_hmma.sum"] * A.HMMA_FLOP / A.MMA_FLOP_PER_CYCLE
            t /= sms * cycles
            issue = m["smsp__issue_active.sum"] / (A.ISSUE_PER_CYCLE * sms * cycles)
            s = m["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"] / (sms * cycles)
            per_sm = ""
            if family in ("flash2", "variant"):
                smem = (bq * d + stages * 2 * bkv * d) * 2
                per_sm = str(min(SMEM_PER_SM // (smem + RESERVED_PER_CTA), 8))
            tile = f"{bq}x{bkv} st={stages}" if stages else f"{bq}x{bkv}"
            print(f"{sms:>4} {family:7} {d:>3} {n:>5} {causal:>1} {tile:>14} {per_sm:>7} "
                  f"{t:6.3f} {issue:6.3f} {s:6.3f} {t + issue:6.3f} {t + issue + s:6.3f}")


if __name__ == "__main__":
    main()
