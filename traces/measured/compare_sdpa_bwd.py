#!/usr/bin/env python3
"""PyTorch SDPA flash forward and autograd backward (traces/measured/h200-torch-sdpa-bwd.csv,
measured) beside memwall's flash2 and flash2-bwd on configs/calibrated/h200.yaml, as a Markdown
table. Run from the repository root after building build/memwall. Comparison only: nothing is
fitted to these times."""
import csv, json, subprocess, sys
rows = list(csv.DictReader(open('traces/measured/h200-torch-sdpa-bwd.csv')))
print("| B·H (Hkv) | N | d | causal | torch fwd ms | torch bwd ms | torch bwd/fwd | sim flash2 ms | sim flash2-bwd ms | sim bwd/fwd | sim bwd / torch bwd |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    args = ["build/memwall","run","--config","configs/calibrated/h200.yaml","--workload","flash2,flash2-bwd",
            "--batch",r["batch"],"--heads",r["heads"],"--kv-heads",r["kv_heads"],"--seq",r["seq"],"--head-dim",r["head_dim"],"--json","/tmp/cmp.json"]
    if r["causal"]=="1": args.append("--causal")
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    rep = json.load(open("/tmp/cmp.json"))
    tf, tb = rep[0]["time_s"], rep[1]["time_s"]
    mf, mb = float(r["fwd_time_s"]), float(r["bwd_time_s"])
    print(f"| {int(r['batch'])*int(r['heads'])} ({r['kv_heads']}) | {r['seq']} | {r['head_dim']} | {r['causal']} | {mf*1e3:.3f} | {mb*1e3:.3f} | {mb/mf:.2f} | {tf*1e3:.3f} | {tb*1e3:.3f} | {tb/tf:.2f} | {tb/mb:.2f} |")
