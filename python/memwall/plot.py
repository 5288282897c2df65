"""Figures of memwall's results with matplotlib (each on its own Agg canvas): the ones
docs/figures and the notebooks show.

Every function returns a matplotlib Figure whose title names the config and the shape, whose
axes name their units and whose legend sits outside the data; ``save(fig, stem)`` writes
``stem.png`` and ``stem.svg``, byte-identical for the same inputs.

- ``roofline(roof, title=...)``: the chip's roofs with the kernels of ``memwall.roofline()``.
- ``bytes_vs_n(series, title=...)``: bytes against N (log-log), each series with a line fitted
  to it alone and labelled with its own fitted exponent.
- ``stall_breakdown(rows, title=...)``: where the SM time goes, one stacked bar per run.
- ``sim_vs_measured(series, title=...)``: simulated against measured values, with y = x.
- ``time_vs_n(series, title=...)``: simulated time against N.
- ``spill_curve(rows, limit_block_kv=..., title=...)``: global-memory bytes against block_kv
  when the tiles outgrow shared memory (``allow_spill``).
- ``memory_bound_sweep(sweeps, title=...)``: per swept config key, the shares of SM time waiting
  on memory and computing, per workload.

``io_series(io)`` turns the JSON of ``memwall io`` into Series named after the counters they
plot; ``describe(...)`` builds a title from a config and a workload's parameters.

Needs matplotlib (Debian: python3-matplotlib, for /usr/bin/python3); without it importing this
module raises ``MissingDependency`` (an ImportError) saying so.
"""

from __future__ import annotations

import functools
import io
import math
from typing import Any, Iterable, Mapping, NamedTuple, Sequence


class MissingDependency(ImportError):
    """A package memwall.plot needs is not importable; the message says which and how to get it."""


try:
    import matplotlib
except ImportError as _error:  # ModuleNotFoundError included
    raise MissingDependency(
        "memwall.plot needs matplotlib, which this Python cannot import "
        f"({_error}); on Debian: apt-get install python3-matplotlib (for /usr/bin/python3)"
    ) from None

# Figures are drawn on their own Agg canvas, never through pyplot: the process's backend (a
# notebook's inline one, a desktop's) is left alone, and nothing is shown or kept behind the
# caller's back.
import numpy  # noqa: E402  (a dependency of matplotlib)
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = [
    "MemwallFigure", "MissingDependency", "Series", "bytes_vs_n", "describe", "fit_exponent",
    "io_series", "memory_bound_sweep", "roofline", "save", "sim_vs_measured", "spill_curve",
    "stall_breakdown", "time_vs_n",
]

#: The short names of workload parameters used in titles.
_SHAPE_NAMES = [("batch", "B"), ("heads", "H"), ("kv_heads", "H_kv"), ("seq", "N"),
                ("seq_kv", "N_kv"), ("head_dim", "d"), ("block_q", "Br"), ("block_kv", "Bc"),
                ("sram_bytes", "M"), ("causal", "causal")]

#: The SM-time causes of the stall breakdown: (report key, legend text).
STALL_CAUSES = [("compute", "compute"), ("memory_latency", "memory latency"),
                ("memory_bandwidth", "memory bandwidth (queueing)"), ("idle", "idle (no CTA)")]

_STYLE = {"font.size": 9, "svg.hashsalt": "memwall", "svg.fonttype": "path",
          "axes.grid": True, "grid.alpha": 0.3}


class Series(NamedTuple):
    """One named line of points: ``x`` and ``y`` of equal length; ``expected`` an optional
    exponent a closed form predicts (shown beside the fitted one, never instead of it)."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    expected: float | None = None


def describe(config: Any = None, workload: str | None = None,
             params: Mapping[str, Any] | None = None, *, omit: Iterable[str] = ()) -> str:
    """A title part naming the config and the shape: "NVIDIA H200 · flash2 B=1 H=16 N=4096 d=64".

    ``config`` is a Config, a name or None; ``params`` a workload's parameters (a report's
    ``workload.params``); ``omit`` the parameters the figure varies (``omit=["seq"]``).
    """
    parts = []
    if config is not None:
        parts.append(getattr(config, "name", None) or str(config))
    shape = []
    skipped = set(omit)
    # Grouped-query and cross-attention shapes only: kv_heads = heads and seq_kv = seq say nothing.
    if params and str(params.get("kv_heads")) == str(params.get("heads")):
        skipped.add("kv_heads")
    if params and ("seq" in skipped or str(params.get("seq_kv")) == str(params.get("seq"))):
        skipped.add("seq_kv")
    for key, short in _SHAPE_NAMES:
        if params and key in params and key not in skipped:
            value = params[key]
            if key == "causal":
                if value in (1, True, "1", "true"):
                    shape.append("causal")
                continue
            shape.append(f"{short}={value} B" if key == "sram_bytes" and str(value).isdigit()
                         else f"{short}={value}")
    text = " ".join(([workload] if workload else []) + shape)
    if text:
        parts.append(text)
    return " · ".join(parts)


def fit_exponent(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares fit of y = c · x^k in log-log: returns (k, c). Needs two distinct x > 0."""
    xs = numpy.log(numpy.asarray(x, dtype=float))
    ys = numpy.log(numpy.asarray(y, dtype=float))
    if len(xs) < 2 or numpy.ptp(xs) == 0:
        raise ValueError("fit_exponent: need at least two distinct x values")
    k, log_c = numpy.polyfit(xs, ys, 1)
    return float(k), float(math.exp(log_c))


def _styled(function: Any) -> Any:
    """Runs a figure function under memwall's style, leaving the caller's rcParams alone."""
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with matplotlib.rc_context(_STYLE):
            return function(*args, **kwargs)
    return wrapper


class MemwallFigure(Figure):
    """A matplotlib Figure outside pyplot's registry (nothing is shown or kept behind the
    caller's back) that a notebook shows when a cell returns it, whatever the backend."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        with matplotlib.rc_context(_STYLE):
            self.savefig(buffer, format="png", dpi=100, bbox_inches="tight",
                         metadata={"Software": None})
        return buffer.getvalue()


def _figure(width: float, height: float) -> MemwallFigure:
    fig = MemwallFigure(figsize=(width, height))
    FigureCanvasAgg(fig)  # drawable and savable without pyplot
    return fig


def _new(width: float = 7.0, height: float = 4.2) -> tuple[Figure, Any]:
    fig = _figure(width, height)
    return fig, fig.subplots()


def _legend_outside(ax: Any, title: str | None = None, below: bool = True) -> None:
    """The legend below the axes (or to their right), never over the data."""
    if below:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), borderaxespad=0.0,
                  fontsize=8, title=title, title_fontsize=8, frameon=False)
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8,
                  title=title, title_fontsize=8, frameon=False)


def _value(row: Any, key: str) -> Any:
    """row["a.b"] for a flattened row (a sweep's), else row["a"]["b"] (a report's)."""
    if key in row:
        return row[key]
    value = row
    for part in key.split("."):
        value = value[part]
    return value


def _rows(rows: Any) -> list[Any]:
    """A DataFrame's rows as dicts, anything else as a list."""
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
        return rows.to_dict("records")
    return list(rows)


@_styled
def bytes_vs_n(series: Sequence[Series], *, title: str, xlabel: str = "sequence length N",
               var: str = "N", ylabel: str = "bytes moved") -> Figure:
    """Bytes against N on log-log axes: each series' points, and a dashed line fitted to that
    series alone, labelled with its own fitted exponent (and the expected one, if given)."""
    fig, ax = _new()
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    markers = "os^Dvx<>"
    for i, s in enumerate(series):
        color, marker = colors[i % len(colors)], markers[i % len(markers)]
        k, c = fit_exponent(s.x, s.y)
        expected = "" if s.expected is None else f" (leading term ∝ {var}^{s.expected:g})"
        ax.plot(s.x, s.y, marker, color=color, fillstyle="none" if marker != "x" else "full",
                label=f"{s.label}: fit ∝ {var}^{k:.2f}{expected}")
        line_x = numpy.geomspace(min(s.x), max(s.x), 20)
        ax.plot(line_x, c * line_x ** k, "--", color=color, linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{ylabel} (B)")
    ax.set_title(title, fontsize=9)
    _legend_outside(ax, "points, and a dashed line fitted to each")
    return fig


#: How io JSON metrics are named in a figure: the counter each one is.
IO_LABELS = {
    "closed_form_bytes": "closed form (global reads + writes)",
    "sim_l2_bytes": "simulated SM→L2 (sectors requested)",
    "sim_dram_bytes": "simulated HBM reads + write-backs",
    "measured_xbar_bytes": "measured SM-side xbar reads + writes",
    "measured_l2_bytes": "measured L2-side lts reads + writes (after the request coalescer)",
    "measured_dram_bytes": "measured HBM dram reads + writes",
}


def io_series(io: Mapping[str, Any], metrics: Sequence[str] | None = None,
              over: str = "seq") -> list[Series]:
    """The points of a ``memwall io --json`` report as one Series per metric, named after the
    counter it plots (``IO_LABELS``). ``metrics`` picks and orders them (default: every metric
    the report has; in ideal mode the SM→L2 bytes are the HBM bytes and are left out).

    A measured point's SM-side crossbar bytes are ``measured.xbar_read_bytes + xbar_write_bytes``;
    ``measured_l2_bytes`` is the L2-side (post-coalescer) lts count.
    """
    points = sorted(io["points"], key=lambda p: p["params"][over])
    if metrics is None:
        metrics = ["closed_form_bytes", "sim_l2_bytes", "sim_dram_bytes", "measured_xbar_bytes",
                   "measured_l2_bytes", "measured_dram_bytes"]
        if io.get("ideal"):
            metrics = [m for m in metrics if m != "sim_l2_bytes"]
    # The closed form's leading exponent labels the closed form only: on a chip with an L2 the
    # HBM bytes follow another law, and a measured counter has none of its own.
    expected = {f["metric"]: f["expected"] for f in io.get("fits", [])
                if f["over"] == over and f["metric"] == "closed_form_bytes"}
    out = []
    for metric in metrics:
        xs, ys = [], []
        for p in points:
            if metric == "measured_xbar_bytes":
                m = p.get("measured")
                y = None if not m else m["xbar_read_bytes"] + m["xbar_write_bytes"]
            else:
                y = p.get(metric)
            if y:
                xs.append(p["params"][over])
                ys.append(y)
        if len(set(xs)) >= 2:
            out.append(Series(IO_LABELS.get(metric, metric), xs, ys, expected.get(metric)))
    return out


@_styled
def roofline(roof: Mapping[str, Any], *, title: str) -> Figure:
    """The chip's tensor and fp32 roofs (FLOP/s against FLOP per HBM byte) with each kernel of
    ``roof`` (``memwall.roofline(config, reports=...)`` or its ``--json``) at its intensity and
    achieved throughput, labelled with its share of the roof."""
    chip, kernels = roof["chip"], [k for k in roof["kernels"] if k["plotted"]]
    intensities = [k["intensity"] for k in kernels]
    ridge = chip["ridge_point_tensor"]
    lo = 10 ** math.floor(math.log10(min(intensities + [ridge]) / 10))
    hi = 10 ** math.ceil(math.log10(max(intensities + [ridge]) * 10))
    xs = numpy.geomspace(lo, hi, 200)
    bw = chip["hbm_bandwidth"]
    fig, ax = _new()
    ax.plot(xs, numpy.minimum(chip["peak_tensor_flops"], xs * bw), "-", color="black",
            label=f"tensor roof: {chip['peak_tensor_flops'] / 1e12:.4g} TFLOP/s, "
                  f"ridge {ridge:.4g} FLOP/B")
    ax.plot(xs, numpy.minimum(chip["peak_fp32_flops"], xs * bw), ":", color="gray",
            label=f"fp32 roof: {chip['peak_fp32_flops'] / 1e12:.4g} TFLOP/s, "
                  f"ridge {chip['ridge_point_fp32']:.4g} FLOP/B")
    markers = "os^Dv<>p"
    for i, k in enumerate(kernels):
        ax.plot(k["intensity"], k["achieved_flops"], markers[i % len(markers)], markersize=7,
                label=f"{k['name']}: {k['intensity']:.3g} FLOP/B, "
                      f"{100 * k['fraction_of_roof']:.1f}% of roof")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per HBM byte)")
    ax.set_ylabel("throughput (FLOP/s)")
    ax.set_title(f"{title}\nHBM {bw / 1e12:.4g} TB/s", fontsize=9)
    _legend_outside(ax, below=False)
    return fig


@_styled
def stall_breakdown(rows: Any, *, title: str, label: Any = None) -> Figure:
    """Where the SM time goes: one stacked bar per run (share of SM·time, %).

    ``rows`` are sweep rows (a DataFrame or dicts with "stall.compute", ...) or Reports (with
    ``stall``); ``label(row)`` names a bar (default: the workload and N).
    """
    items = _rows(rows)
    if label is None:
        def label(row: Any) -> str:
            name = row["workload"] if "workload" in row and isinstance(row["workload"], str) \
                else _value(row, "workload.name")
            seq = row["seq"] if "seq" in row else _value(row, "workload.params.seq")
            return f"{name}\nN={seq}"
    names = [label(r) for r in items]
    fig, ax = _new(max(5.0, 0.6 * len(items) + 3.0), 4.2)
    bottom = numpy.zeros(len(items))
    for key, text in STALL_CAUSES:
        values = numpy.array([100.0 * _value(r, f"stall.{key}") for r in items])
        ax.bar(range(len(items)), values, bottom=bottom, label=text)
        bottom += values
    ax.set_xticks(range(len(items)))
    ax.set_xticklabels(names, fontsize=7)
    ax.set_ylabel("share of SM time (%)")
    ax.set_ylim(0, 100)
    ax.grid(False, axis="x")
    ax.set_title(title, fontsize=9)
    _legend_outside(ax, "SM time spent on", below=False)
    return fig


@_styled
def sim_vs_measured(series: Sequence[Series], *, title: str, unit: str = "B",
                    quantity: str = "bytes") -> Figure:
    """Simulated (``y``) against measured (``x``) values, log-log, with the line y = x: a point
    above it is over-predicted. Each series' label should name both counters."""
    fig, ax = _new(6.5, 4.6)
    values = [v for s in series for v in list(s.x) + list(s.y) if v > 0]
    lo, hi = min(values) / 1.5, max(values) * 1.5
    ax.plot([lo, hi], [lo, hi], "-", color="black", linewidth=1,
            label="y = x (simulated = measured)")
    markers = "os^Dv"
    for i, s in enumerate(series):
        ratios = numpy.asarray(s.y, dtype=float) / numpy.asarray(s.x, dtype=float)
        ax.plot(s.x, s.y, markers[i % len(markers)], fillstyle="none",
                label=f"{s.label}\n(simulated/measured {ratios.min():.2f}–{ratios.max():.2f})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel(f"measured {quantity} ({unit})")
    ax.set_ylabel(f"simulated {quantity} ({unit})")
    ax.set_title(title, fontsize=9)
    _legend_outside(ax)
    return fig


@_styled
def time_vs_n(series: Sequence[Series], *, title: str) -> Figure:
    """Simulated time (``y``, seconds; shown in µs) against N, one line per series, log-log."""
    fig, ax = _new()
    for s in series:
        ax.plot(s.x, [y * 1e6 for y in s.y], "o-", label=s.label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("simulated time (µs)")
    ax.set_title(title, fontsize=9)
    _legend_outside(ax)
    return fig


@_styled
def spill_curve(rows: Any, *, limit_block_kv: float, title: str,
                columns: Sequence[tuple[str, str]] = (
                    ("closed form", "closed form (global reads + writes)"),
                    ("SM→L2", "simulated SM→L2 (sectors requested)"),
                    ("HBM", "simulated HBM reads + write-backs"))) -> Figure:
    """Bytes against block_kv (``rows``: "block_kv" and each of ``columns``' keys, bytes), with
    the largest block_kv whose tiles fit in shared memory marked: right of it, what does not
    fit goes through global memory."""
    items = _rows(rows)
    fig, ax = _new()
    xs = [r["block_kv"] for r in items]
    markers = "os^Dv"
    for i, (key, label) in enumerate(columns):
        ax.plot(xs, [r[key] for r in items], markers[i % len(markers)] + "-",
                fillstyle="none", label=label)
    ax.axvline(limit_block_kv, color="gray", linestyle=":",
               label=f"largest block_kv that fits: {limit_block_kv:g}")
    ax.set_yscale("log")
    ax.set_xlabel("block_kv (K/V rows per tile)")
    ax.set_ylabel("bytes moved (B)")
    ax.set_title(title, fontsize=9)
    _legend_outside(ax)
    return fig


@_styled
def memory_bound_sweep(sweeps: Mapping[str, Any], *, title: str) -> Figure:
    """One panel per swept config key (``sweeps``: key → sweep rows with a column of that key,
    "workload", "stall.compute", "stall.memory_latency" and "stall.memory_bandwidth"): the share
    of SM time waiting on memory (solid) and computing (dashed) per workload, at each value in
    the rows' order. A workload is memory-bound where its solid line is above its dashed one."""
    keys = list(sweeps)
    columns = 2 if len(keys) > 1 else 1
    panel_rows = math.ceil(len(keys) / columns)
    fig = _figure(4.2 * columns, 3.0 * panel_rows + 0.8)
    axes = fig.subplots(panel_rows, columns, squeeze=False)
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, key in zip(axes.flat, keys):
        rows = _rows(sweeps[key])
        workloads = list(dict.fromkeys(r["workload"] for r in rows))
        for i, workload in enumerate(workloads):
            mine = [r for r in rows if r["workload"] == workload]
            values = [str(r[key]) for r in mine]
            memory = [100 * (_value(r, "stall.memory_latency")
                             + _value(r, "stall.memory_bandwidth")) for r in mine]
            compute = [100 * _value(r, "stall.compute") for r in mine]
            ax.plot(values, memory, "o-", color=colors[i % len(colors)],
                    label=f"{workload}: waiting on memory")
            ax.plot(values, compute, "s--", color=colors[i % len(colors)], fillstyle="none",
                    label=f"{workload}: computing")
        ax.set_xlabel(key)
        ax.set_ylabel("share of SM time (%)")
        ax.set_ylim(0, 100)
        ax.tick_params(axis="x", labelsize=7)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    return fig


def save(fig: Figure, stem: str) -> list[str]:
    """Writes ``stem.png`` (120 dpi) and ``stem.svg``, with no date or version in them (the same
    figure gives the same bytes), and returns the two paths."""
    paths = [stem + ".png", stem + ".svg"]
    with matplotlib.rc_context(_STYLE):
        fig.savefig(paths[0], dpi=120, bbox_inches="tight", metadata={"Software": None})
        fig.savefig(paths[1], bbox_inches="tight",
                    metadata={"Date": None, "Creator": None})
    return paths
