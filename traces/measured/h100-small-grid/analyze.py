#!/usr/bin/env python3
"""naive qk and pv on small grids (STALL_SET=small models/cuda/stall_reasons.sh, stalls.csv):
how much of a lone (or one of two) CTA's time its MMAs, shared-memory reads and other warp
instructions take, and whether they take turns or overlap.

Per launch, in shares of the active cycles of the SMs that ran CTAs (sm__cycles_active.avg times
the 132 SMs over the SMs in use, min(CTAs, 132)): T, the tensor pipe (HMMA instructions at the
measured mma.sync ceiling, 2660 FLOP per cycle per SM, as ../h200-issue-probe/analyze.py); I, the
issue slots (smsp__issue_active over four schedulers); S, the shared-memory pipe (its LSU
wavefronts, one per cycle); then T + I, max(T + I, T + S) (the pipes' law the model books for
flash2) and T + I + S (what the model books for the naive kernels: the three one after the
other); chain, I · (1 + L) / w with L the stall cycles per instruction that are a warp's own
dependencies (as ../h100-stall-probe/analyze.py) and w the warps per scheduler; and CTAs per SM
over the launch (sm__ctas_launched over the SMs in use). A share near 1 is a law that explains
the time; over 1, a law the chip does not follow.

  python3 traces/measured/h100-small-grid/analyze.py
"""
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def _stall_probe():
    """../h100-stall-probe/analyze.py: its CSV reader, ceilings and stall-reason lists."""
    path = os.path.join(HERE, "..", "h100-stall-probe", "analyze.py")
    spec = importlib.util.spec_from_file_location("stall_probe_analyze", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


P = _stall_probe()
SMS, MMA_FLOP_PER_CYCLE, HMMA_FLOP, OWN = P.SMS, P.MMA_FLOP_PER_CYCLE, P.HMMA_FLOP, P.OWN
launches = P.launches
# The cases of stall_reasons.sh's small set, in order: B = 1, H = 8 at N = 512, 1024, 2048 and
# d = 64, 128; then B = 4, H = 16, N = 1024, d = 64 and 128. Each case runs qk, softmax, pv; the
# profiled kernels are qk and pv.
CASES = [(1, 8, n, d) for n in (512, 1024, 2048) for d in (64, 128)] + [(4, 16, 1024, 64),
                                                                       (4, 16, 1024, 128)]


def main():
    rows = list(launches(os.path.join(HERE, "stalls.csv")).items())
    assert len(rows) == 2 * len(CASES), len(rows)
    print("naive qk and pv on the lent H100 (ncu, L2 flushed before each kernel); shares of the "
          "active cycles of the SMs in use")
    print(f"{'kernel':<4} {'B·H':>5} {'N':>5} {'d':>4} {'CTAs':>5} {'CTA/SM':>6} {'us':>7} "
          f"{'w':>5} {'T':>6} {'I':>6} {'S':>6} {'T+I':>6} {'max':>6} {'T+I+S':>6} {'chain':>6} "
          f"{'L':>5}")
    for k, ((i, name, grid), m) in enumerate(rows):
        b, h, n, d = CASES[k // 2]
        kernel = "qk" if "qk" in name else "pv"
        ctas = int(grid.strip("()").split(",")[0])
        used = min(ctas, SMS)
        active = m["sm__cycles_active.avg"] * SMS / used
        t = m["sm__inst_executed_pipe_tensor_op_hmma.sum"] * HMMA_FLOP / MMA_FLOP_PER_CYCLE
        t /= used * active
        issue = m["smsp__issue_active.sum"] / (4 * used * active)
        s = m["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"] / (used * active)
        w = m["smsp__warps_active.avg.per_cycle_active"]
        own = sum(m.get(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio", 0.0)
                  for r in OWN)
        chain = issue * (1 + own) / w
        print(f"{kernel:<4} {b * h:>5} {n:>5} {d:>4} {ctas:>5} {ctas / used:>6.2f} "
              f"{m['gpu__time_duration.sum'] / 1e3:>7.2f} {w:>5.2f} {t:>6.3f} {issue:>6.3f} "
              f"{s:>6.3f} {t + issue:>6.3f} {max(t + issue, t + s):>6.3f} {t + issue + s:>6.3f} "
              f"{chain:>6.3f} {own:>5.2f}")
    print()
    print("The same in microseconds of one SM at the launch's clock (sm__cycles_elapsed.avg."
          "per_second): active, and T, I, S as above")
    print(f"{'kernel':<4} {'B·H':>5} {'N':>5} {'d':>4} {'GHz':>5} {'active':>7} {'T':>6} "
          f"{'I':>6} {'S':>6}")
    for k, ((i, name, grid), m) in enumerate(rows):
        b, h, n, d = CASES[k // 2]
        kernel = "qk" if "qk" in name else "pv"
        used = min(int(grid.strip("()").split(",")[0]), SMS)
        hz = m["sm__cycles_elapsed.avg.per_second"]
        us = 1e6 / hz
        active = m["sm__cycles_active.avg"] * SMS / used
        t = m["sm__inst_executed_pipe_tensor_op_hmma.sum"] * HMMA_FLOP / MMA_FLOP_PER_CYCLE / used
        issue = m["smsp__issue_active.sum"] / (4 * used)
        s = m["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"] / used
        print(f"{kernel:<4} {b * h:>5} {n:>5} {d:>4} {hz / 1e9:>5.2f} {active * us:>7.2f} "
              f"{t * us:>6.2f} {issue * us:>6.2f} {s * us:>6.2f}")


def reasons():
    rows = list(launches(os.path.join(HERE, "stalls.csv")).items())
    names = OWN + P.OTHER
    print()
    print("Stall cycles per issued instruction by reason (smsp__average_warps_issue_stalled_<r>_"
          "per_issue_active.ratio); L above is the sum of the first eight, a warp's own")
    print(f"{'kernel':<4} {'B·H':>5} {'N':>5} {'d':>4} " + " ".join(f"{r[:8]:>8}" for r in names))
    for k, ((i, name, grid), m) in enumerate(rows):
        b, h, n, d = CASES[k // 2]
        kernel = "qk" if "qk" in name else "pv"
        print(f"{kernel:<4} {b * h:>5} {n:>5} {d:>4} " + " ".join(
            f"{m.get(f'smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio', 0.0):>8.2f}"
            for r in names))


def cta_life():
    """A qk CTA's life on its SM. The CTA has 8 warps, two per scheduler, so r = w / 2 CTAs run
    at a time; with n CTAs per SM over the launch, one CTA lives L = r · active / n. Its products
    take C = max(T + I, T + S) · active / n of the SM (the pipes' law: what its MMAs, fragment
    reads and other instructions need, whoever else is on the SM). Where r > 1 and L > r · C, the
    CTAs cannot all be computing while one waits: the SM is idle while every resident CTA waits,
    and a CTA spends M = L − C outside its products (its Q and K loads, its S tile's staging and
    store, its start and end). M is what a model of the kernel must give a CTA beside its
    products; here it is measured."""
    rows = list(launches(os.path.join(HERE, "stalls.csv")).items())
    print()
    print("A qk CTA's life in microseconds at the launch's clock: r CTAs at a time (w / 2), L a "
          "CTA's life, C its products by the pipes' law, M = L - C the rest")
    print(f"{'kernel':<4} {'B·H':>5} {'N':>5} {'d':>4} {'CTA/SM':>6} {'r':>5} {'L':>6} {'C':>6} "
          f"{'r·C':>6} {'M':>6}")
    for k, ((i, name, grid), m) in enumerate(rows):
        if "qk" not in name:
            continue
        b, h, n, d = CASES[k // 2]
        ctas = int(grid.strip("()").split(",")[0])
        used = min(ctas, SMS)
        per_sm = ctas / used
        us = 1e6 / m["sm__cycles_elapsed.avg.per_second"]
        active = m["sm__cycles_active.avg"] * SMS / used
        t = m["sm__inst_executed_pipe_tensor_op_hmma.sum"] * HMMA_FLOP / MMA_FLOP_PER_CYCLE / used
        issue = m["smsp__issue_active.sum"] / (4 * used)
        s = m["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"] / used
        r = m["smsp__warps_active.avg.per_cycle_active"] / 2
        life = r * active * us / per_sm
        c = max(t + issue, t + s) * us / per_sm
        print(f"{'qk':<4} {b * h:>5} {n:>5} {d:>4} {per_sm:>6.2f} {r:>5.2f} {life:>6.2f} {c:>6.2f} "
              f"{r * c:>6.2f} {life - c:>6.2f}")


if __name__ == "__main__":
    main()
    reasons()
    cta_life()
