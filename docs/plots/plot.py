#!/usr/bin/python3
"""Turns memwall's sweep CSVs, io JSON and roofline JSON into figures (PNG and SVG).

Run it with Debian's python3 (it needs python3-matplotlib):

  /usr/bin/python3 docs/plots/plot.py io-seq  OUT IO.json [IO.json ...]   traffic vs N, log-log, theory lines
  /usr/bin/python3 docs/plots/plot.py io-sram OUT IO.json [IO.json ...]   traffic vs SRAM size M
  /usr/bin/python3 docs/plots/plot.py time    OUT SWEEP.csv [SWEEP.csv ...] simulated time vs N per workload
  /usr/bin/python3 docs/plots/plot.py stalls  OUT SWEEP.csv [SWEEP.csv ...] SM-time breakdown per point
  /usr/bin/python3 docs/plots/plot.py roofline OUT ROOFLINE.json            kernels on the chip's roofline

OUT is a path without extension; OUT.png and OUT.svg are written. The same inputs give the same
files (fixed SVG hash salt, no dates in the metadata).
"""

import argparse
import csv
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams["svg.hashsalt"] = "memwall"
plt.rcParams["font.size"] = 10

METRIC_LABELS = {
    "closed_form_bytes": "closed form",
    "sim_l2_bytes": "simulated SM→L2",
    "sim_dram_bytes": "simulated HBM",
    "measured_l2_bytes": "measured SM→L2",
    "measured_dram_bytes": "measured HBM",
}
METRIC_MARKERS = {"closed_form_bytes": "o", "sim_l2_bytes": "s", "sim_dram_bytes": "^",
                  "measured_l2_bytes": "x", "measured_dram_bytes": "D"}


def fail(message):
    sys.stderr.write("plot.py: error: " + message + "\n")
    sys.exit(2)


def save(fig, out):
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=120, metadata={"Software": None})
    fig.savefig(out + ".svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    print("plot.py: wrote %s.png and %s.svg" % (out, out))


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))


def load_csv(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail("%s: %s" % (path, e))
    if not rows:
        fail("%s: no rows" % path)
    return rows


def plot_io(args, over):
    """Traffic against N (over='seq') or M (over='sram') with the fitted and predicted exponents."""
    fig, ax = plt.subplots(figsize=(7, 4.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color_index = 0
    for path in args.inputs:
        report = load_json(path)
        fits = [f for f in report["fits"] if f["over"] == over]
        if not fits:
            fail("%s: no fit over %s (give at least two values of that axis)" % (path, over))
        mode = " (ideal)" if report.get("ideal") else ""
        plotted = set()
        for fit in fits:
            metric = fit["metric"]
            if metric in plotted:
                continue  # the first group of each metric keeps the figure readable
            if metric == "sim_l2_bytes" and report.get("ideal"):
                continue  # in ideal mode SM→L2 traffic is the HBM traffic
            plotted.add(metric)
            xs, ys = fit["x"], fit["y"]
            color = colors[color_index % len(colors)]
            color_index += 1
            var = "N" if over == "seq" else "M"
            ax.plot(xs, ys, METRIC_MARKERS.get(metric, "o"), color=color,
                    label="%s %s%s: fitted %s^%.3f" % (report["workload"],
                                                     METRIC_LABELS.get(metric, metric), mode, var,
                                                     fit["exponent"]))
            # The predicted slope, drawn through the point of largest x.
            x_ref = max(xs)
            y_ref = ys[xs.index(x_ref)]
            line_x = [min(xs), x_ref]
            ax.plot(line_x, [y_ref * (x / x_ref) ** fit["expected"] for x in line_x], "--",
                    color=color, linewidth=1, label="theory ∝ %s^%g" % (var, fit["expected"]))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N" if over == "seq" else "SRAM size M (bytes)")
    ax.set_ylabel("bytes")
    ax.set_title("Global-memory traffic vs %s" % ("N" if over == "seq" else "M"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, args.out)


def sweep_series(path, column):
    rows = load_csv(path)
    for needed in ("seq", column):
        if needed not in rows[0]:
            fail("%s: no column %r" % (path, needed))
    workload = rows[0].get("workload", path)
    pairs = sorted((float(r["seq"]), float(r[column])) for r in rows)
    return workload, [p[0] for p in pairs], [p[1] for p in pairs]


def plot_time(args):
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for path in args.inputs:
        workload, xs, ys = sweep_series(path, "time_s")
        ax.plot(xs, [y * 1e3 for y in ys], "o-", label=workload)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("simulated time (ms)")
    ax.set_title("Simulated time vs N")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save(fig, args.out)


def plot_stalls(args):
    causes = [("stall.compute", "compute"), ("stall.memory_latency", "memory latency"),
              ("stall.memory_bandwidth", "memory bandwidth"), ("stall.idle", "idle")]
    labels, values = [], {c: [] for c, _ in causes}
    for path in args.inputs:
        rows = load_csv(path)
        for r in sorted(rows, key=lambda r: float(r["seq"])):
            labels.append("%s\nN=%s" % (r.get("workload", "?"), r["seq"]))
            for c, _ in causes:
                if c not in r:
                    fail("%s: no column %r" % (path, c))
                values[c].append(float(r[c]) * 100)
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(labels)), 4.5))
    bottom = [0.0] * len(labels)
    for c, name in causes:
        ax.bar(range(len(labels)), values[c], bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values[c])]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("share of SM time (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Where the SM time goes")
    ax.legend(fontsize=8, loc="lower right")
    save(fig, args.out)


def plot_roofline(args):
    if len(args.inputs) != 1:
        fail("roofline takes one roofline JSON (memwall roofline --from RUN.json --json FILE)")
    data = load_json(args.inputs[0])
    chip = data["chip"]
    kernels = data["kernels"]
    intens = [k["intensity"] for k in kernels if k["intensity"] > 0]
    lo = 10 ** math.floor(math.log10(min(intens + [0.1]) / 2))
    hi = 10 ** math.ceil(math.log10(max(intens + [chip["ridge_point_tensor"] * 10]) * 2))
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    bw = chip["hbm_bandwidth"]
    fig, ax = plt.subplots(figsize=(7, 4.8))
    ax.plot(xs, [min(chip["peak_tensor_flops"], x * bw) for x in xs], "-", color="black",
            label="tensor roof (peak %.3g FLOP/s)" % chip["peak_tensor_flops"])
    ax.plot(xs, [min(chip["peak_fp32_flops"], x * bw) for x in xs], ":", color="gray",
            label="fp32 roof (peak %.3g FLOP/s)" % chip["peak_fp32_flops"])
    for k in kernels:
        if k["intensity"] <= 0 or k["achieved_flops"] <= 0:
            continue
        ax.plot(k["intensity"], k["achieved_flops"], "o", markersize=7,
                label="%s: %.1f%% of roof" % (k["name"], 100 * k["fraction_of_roof"]))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per HBM byte)")
    ax.set_ylabel("FLOP/s")
    ax.set_title("Roofline of %s (HBM %.3g B/s)" % (chip["name"], bw))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, args.out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n", 2)[2])
    parser.add_argument("kind", choices=["io-seq", "io-sram", "time", "stalls", "roofline"],
                        help="which figure")
    parser.add_argument("out", help="output path without extension (.png and .svg are written)")
    parser.add_argument("inputs", nargs="+", help="memwall io JSON, sweep CSV or roofline JSON")
    args = parser.parse_args()
    {"io-seq": lambda: plot_io(args, "seq"), "io-sram": lambda: plot_io(args, "sram"),
     "time": lambda: plot_time(args), "stalls": lambda: plot_stalls(args),
     "roofline": lambda: plot_roofline(args)}[args.kind]()


if __name__ == "__main__":
    main()
