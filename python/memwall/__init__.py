"""memwall from Python: the simulator's library, not its command line.

Load a hardware config, simulate a workload on it, sweep shapes and config keys, and read the
closed forms, the traffic calculator and the roofline — each the same computation as the
``memwall`` command of the same name, with the same numbers (a report's ``json`` is the text
``memwall run --json`` writes, byte for byte) and the same error messages.

    >>> import memwall
    >>> h200 = memwall.load_config("h200", set={"l2.size": "100 MiB"})
    >>> report = memwall.run(h200, workload="flash2", seq=1024, head_dim=64, heads=4)
    >>> report.dram_read_bytes, report.time_s

Simulations run without the GIL; Ctrl-C raises KeyboardInterrupt within a fraction of a second.
Workload keyword arguments are the workloads' parameters (``memwall.workloads()``), so a
parameter a workload plugin declares is a keyword argument here without any change.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Iterable, Mapping, NamedTuple, Sequence, Union

from . import _core
from ._errors import ConfigError, Error, TraceError, UsageError

__all__ = [
    "Config", "ConfigError", "config_reference", "Error", "Parameter", "Quantity", "Record", "Report", "Reports", "Result",
    "TraceError", "UsageError", "Workload", "closed_form", "load_config", "presets", "roofline",
    "calibrate", "io", "ledger", "race", "replay", "validate", "run", "sweep", "trace", "traffic", "verify", "workloads",
]

__version__: str = _core.version

#: A workload parameter's value: a whole number, a name or a size with a unit ("fp16",
#: "96 KiB"), or a switch.
ParamValue = Union[int, str, bool]
#: A config override's value: "50 MiB", "6 TB/s", 132, 0.85.
SetValue = Union[str, int, float]


class Quantity(NamedTuple):
    """A config value: in base units (``unit``: B, B/s, Hz, ps, FLOP/s, ...), and as shown."""

    value: Union[int, float, str]
    unit: str
    text: str


class Parameter(NamedTuple):
    """A workload parameter as its plugin declares it (``memwall workloads`` shows the same)."""

    name: str
    flag: str
    type: str
    unit: str
    default: str
    values: str
    help: str


class Workload(NamedTuple):
    """A workload: its name, one-line summary and parameters."""

    name: str
    summary: str
    params: list[Parameter]


class Record(dict):
    """A JSON object whose keys also read as attributes (``r.time_s`` is ``r["time_s"]``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {k for k in self if k.isidentifier()})


def _load_json(text: str) -> Any:
    return json.loads(text, object_hook=Record)


def _table(rows: list[dict[str, Any]], columns: Sequence[str] | None = None) -> Any:
    """A pandas DataFrame of ``rows`` when pandas is importable, else the rows themselves."""
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows, columns=list(columns) if columns is not None else None)


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else key, out)
    else:
        out[prefix] = value


class Result(Record):
    """A command's JSON answer as a Record, with ``json`` (its exact text) and ``text`` (what the
    command prints)."""

    json: str
    text: str

    @classmethod
    def _from(cls, json_text: str, text: str) -> Any:
        result = cls(_load_json(json_text))
        result.json = json_text
        result.text = text
        return result


class Report(Result):
    """One simulated run: the keys of ``memwall run --json`` (base units: bytes, seconds, B/s).

    ``json`` is that report's exact text, ``text`` the summary ``memwall run`` prints. The
    per-kernel figures are ``report.kernels`` (a list) or ``kernel_table()``; the DRAM bytes per
    tensor ``report.dram_bytes_by_tensor`` or ``tensor_table()``.
    """

    def kernel_table(self) -> Any:
        """One row per kernel, nested figures flattened ("stall.compute", "resources.hbm.queue_s").

        A pandas DataFrame when pandas is importable, else a list of dicts.
        """
        rows = []
        for kernel in self["kernels"]:
            row: dict[str, Any] = {}
            _flatten(kernel, "", row)
            rows.append(row)
        return _table(rows)

    def tensor_table(self) -> Any:
        """One row per tensor: its DRAM bytes read and written, and its reads by reason.

        Columns "tensor", "read", "write", "compulsory" (first fetches of a sector) and "reread"
        (fetched again after an eviction or a flush); compulsory + reread = read.
        """
        columns = ["read", "write", "compulsory", "reread"]
        rows = [{"tensor": name, **{c: t[c] for c in columns}}
                for name, t in self["dram_bytes_by_tensor"].items()]
        return _table(rows, ["tensor", *columns])

    def __repr__(self) -> str:
        return (f"<memwall.Report {self['workload']['name']} on {self['config']['name']!r}: "
                f"{self['time_s']:.6g} s, {self['dram_read_bytes'] + self['dram_write_bytes']} "
                "DRAM bytes>")


class Reports(list):
    """Several runs side by side (``run(config, workload=["naive", "flash2"])``).

    ``text`` is the comparison ``memwall run --workload naive,flash2`` prints, ``json`` the array
    its ``--json`` writes.
    """

    json: str
    text: str


class Config:
    """A hardware config, loaded and validated (``load_config``).

    ``values`` maps every key ("l2.size") to its resolved Quantity, ``derived`` every derived
    value ("peak_tensor", "ridge_point_tensor"); ``config["l2.size"]`` is ``config.values[...]``.
    ``str(config)`` is what ``memwall config show`` prints; ``to_yaml()`` a file that loads back to
    the same config.
    """

    def __init__(self, core: Any) -> None:
        self._core = core
        self.values: dict[str, Quantity] = {
            path: Quantity(value, unit, text) for path, _type, value, unit, text in core.values()}
        self.derived: dict[str, Quantity] = {
            name: Quantity(value, unit, f"{value:.6g} {unit}".strip())
            for name, value, unit in core.derived()}

    @property
    def name(self) -> str:
        """The config's display name ("NVIDIA H200")."""
        return self._core.name

    @property
    def description(self) -> str:
        return self._core.description

    @property
    def source_file(self) -> str:
        """The YAML file it was loaded from."""
        return self._core.source_file

    @property
    def overrides(self) -> list[str]:
        """The ``set=`` overrides applied, as "key=value" in order."""
        return list(self._core.overrides)

    def __getitem__(self, key: str) -> Quantity:
        return self.values[key]

    def section(self, name: str) -> dict[str, Quantity]:
        """The keys of one section ("l2") without the section's prefix."""
        prefix = name + "."
        return {k[len(prefix):]: v for k, v in self.values.items() if k.startswith(prefix)}

    def to_yaml(self) -> str:
        """Every key in base units (exact), readable values in comments; no ``extends``."""
        return self._core.to_yaml()

    def dot(self, collapse: str = "auto") -> str:
        """The topology as Graphviz text (``memwall config dot``): ``collapse`` "auto" (one node
        per group of SMs, slices and channels above 16 SMs), "yes" or "no"."""
        return self._core.dot(collapse)

    def __str__(self) -> str:
        return self._core.show()

    def __repr__(self) -> str:
        sets = f" with {', '.join(self.overrides)}" if self.overrides else ""
        return f"<memwall.Config {self.name!r} from {self.source_file}{sets}>"


def config_reference() -> str:
    """The Markdown of every config key, as ``memwall config reference`` prints it."""
    return _core.config_reference()


def presets() -> dict[str, str]:
    """The configs shipped with memwall: preset name → YAML path (``memwall config list``)."""
    return dict(_core.presets())


def _set_text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UsageError(f"set: expected a str, int or float value, got {value!r}")
    return str(value)


def load_config(path_or_preset: Union[str, os.PathLike[str]],
                set: Mapping[str, SetValue] | None = None) -> Config:
    """Loads a config file or preset ("h200"), applying ``set`` overrides in order.

    ``set={"hbm.bandwidth": "6 TB/s", "sm.count": 66}`` is ``--set hbm.bandwidth="6 TB/s" --set
    sm.count=66``. Raises ConfigError naming the file, line, column and key.
    """
    overrides = [f"{key}={_set_text(value)}" for key, value in (set or {}).items()]
    return Config(_core.load_config(os.fspath(path_or_preset), overrides))


def workloads() -> list[Workload]:
    """Every workload with its parameters, in registration order (``memwall workloads``)."""
    return [Workload(w["name"], w["summary"], [Parameter(**p) for p in w["params"]])
            for w in _core.workloads()]


def _param_text(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, str)):
        return str(value)
    raise UsageError(f"{name}: expected an int, a str or a bool, got {value!r}")


def _named(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Keyword arguments as (parameter, text) pairs, as the CLI's flags give them."""
    return [(name, _param_text(name, value)) for name, value in params.items()
            if value is not None]


def _as_config(config: Union[Config, str, os.PathLike[str]]) -> Config:
    return config if isinstance(config, Config) else load_config(config)


def _core_of(config: Union[Config, str, os.PathLike[str], None]) -> Any:
    """The C++ config of an optional config argument (None stays None)."""
    return _as_config(config)._core if config is not None else None


def _memory_text(max_memory: Union[str, int, None]) -> str:
    """``max_memory`` as --max-memory's text ("" for the default; a bare int is bytes)."""
    if max_memory is None:
        return ""
    if isinstance(max_memory, bool) or not isinstance(max_memory, (str, int)):
        raise UsageError(f"max_memory: expected a size such as \"8 GiB\" or a number of bytes, "
                         f"got {max_memory!r}")
    return f"{max_memory} B" if isinstance(max_memory, int) else max_memory


def run(config: Union[Config, str], workload: Union[str, Sequence[str]] = "flash2", *,
        flush_l2_between_kernels: bool = False, what_if: Union[str, Sequence[str], None] = None,
        jobs: int = 2, timeline: Union[str, os.PathLike[str], None] = None,
        timeline_budget: int = 200_000, html: Union[str, os.PathLike[str], None] = None,
        max_memory: Union[str, int, None] = None, **params: ParamValue) -> Union[Report, Reports]:
    """Simulates a workload generated on the fly (``memwall run``).

    ``config`` is a Config or a file/preset name; ``params`` are the workload's parameters
    (listed below). A list of workloads (or "naive,flash2") gives Reports, side by side.
    ``what_if`` (names of ``memwall run --what-if``: perfect-l2, infinite-sram, hbm-x2, l2-x2,
    smem-direct, issue-overlap) also simulates those variants of the machine, ``jobs`` at a
    time: the result's ``what_if`` is the ``--what-if-json`` object and ``what_if_text`` its
    table. ``timeline`` writes the Perfetto/Chrome trace-event timeline of ``--timeline`` (one
    workload; at most ``timeline_budget`` op-level events and CTA slices, as
    ``--timeline-budget``). ``html`` writes the self-contained page of ``--html``.
    ``max_memory`` ("8 GiB", or a number of bytes) is ``--max-memory``: the most a simulation
    may hold (default half the machine's memory); past it the run raises UsageError with the
    figure, as the CLI exits 2.
    """
    names = workload.split(",") if isinstance(workload, str) else list(workload)
    what_if_list = "" if what_if is None else (what_if if isinstance(what_if, str) else ",".join(what_if))
    runs, text, json_text, wi_text, wi_json = _core.run(
        _as_config(config)._core, names, _named(params), flush_l2_between_kernels, what_if_list, jobs,
        os.fspath(timeline) if timeline is not None else "", timeline_budget,
        os.fspath(html) if html is not None else "", _memory_text(max_memory))
    reports = [Report._from(j, t) for j, t in runs]
    if isinstance(workload, str) and len(names) == 1:
        result: Union[Report, Reports] = reports[0]
    else:
        result = Reports(reports)
        result.json = json_text
        result.text = text
    if what_if_list:
        result.what_if = _load_json(wi_json)
        result.what_if_text = wi_text
    return result


_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?")
_INTEGER = re.compile(r"-?\d+")


def _cell(text: str) -> Any:
    """A sweep CSV cell as a value: JSON numbers as int or float, true/false as bool."""
    if _INTEGER.fullmatch(text):
        return int(text)
    if _NUMBER.fullmatch(text):
        return float(text)
    if text in ("true", "false"):
        return text == "true"
    return text


def _list_text(name: str, values: Any) -> str:
    if isinstance(values, (list, tuple, range)):
        return ",".join(_param_text(name, v) for v in values)
    return _param_text(name, values)


def _axis_values(command: str, workload: str, axes: Mapping[str, Any]) -> list[str]:
    """The value lists of the sweep's workload axes, in their fixed order ("" where not given)."""
    names = _core.sweep_axes()
    values = [""] * len(names)
    values[0] = _list_text("workload", workload)
    for name, given in axes.items():
        if name not in names[1:]:
            raise UsageError(f"unknown {command} axis \"{name}\" (known: {', '.join(names[1:])})")
        values[names.index(name)] = _list_text(name, given)
    return values


def sweep(config: Union[Config, str], workload: str, *,
          set: Mapping[str, Union[SetValue, Iterable[SetValue]]] | None = None, jobs: int = 1,
          flush_l2: bool = False, **axes: Any) -> Any:
    """Simulates every combination of parameter lists and config overrides (``memwall sweep``).

    Each axis is a list (``seq=[1024, 2048]``), one value, or the CLI's list text
    (``seq="512..8192x2"``); ``set={"l2.size": ["25 MiB", "50 MiB"]}`` sweeps config keys.
    ``jobs`` points run in parallel. One row per point, in the CSV's order and columns (the axes,
    then every figure of the point's JSON report, flattened): a pandas DataFrame when pandas is
    importable, else a list of dicts.
    """
    values = _axis_values("sweep", workload, axes)
    sets = []
    for key, given in (set or {}).items():
        items = given if isinstance(given, (list, tuple, range)) else [given]
        sets.append(f"{key}=" + ",".join(_set_text(v) for v in items))
    header, rows = _core.sweep(_as_config(config)._core, values, sets, jobs, flush_l2)
    return _table([dict(zip(header, map(_cell, row))) for row in rows], header)


def io(config: Union[Config, str], workload: str, *, ideal: bool = False,
       flush_l2_between_kernels: bool = False, measured: Union[str, os.PathLike[str], None] = None,
       jobs: int = 1, **axes: Any) -> Record:
    """Closed-form vs simulated (vs measured) traffic with the Theorem-2 fits (``memwall io``).

    Axes as ``sweep``'s (``seq=[1024, 2048]``, ``sram_bytes=["16 KiB", "32 KiB"]`` or the CLI's
    list text); one workload. ``ideal`` is the two-level model (one SM, an L2 of one line);
    ``measured`` a CSV joined as the CLI joins it. Keys as ``memwall io --json``: workload, config,
    ideal, ideal_overrides, points, fits; ``.text`` is the CLI's tables.
    """
    values = _axis_values("io", workload, axes)
    json_text, text = _core.io(_as_config(config)._core, values, ideal, flush_l2_between_kernels,
                               jobs, os.fspath(measured) if measured is not None else "")
    result = _load_json(json_text)
    result.json = json_text
    result.text = text
    return result


def closed_form(workload: str = "flash2", config: Union[Config, str, None] = None,
                **params: ParamValue) -> Record:
    """The workload's global traffic in closed form (no simulation).

    Keys as the ``closed_form`` object of ``memwall trace --counts --json``: global_read_bytes,
    global_write_bytes, by_tensor (tensor → read_bytes, write_bytes); plus workload and params
    (resolved). With a config its per-block shared memory is the limit (and flash1's M).
    """
    core = _core_of(config)
    named, read, write, tensors = _core.closed_form(workload, _named(params), core)
    return Record(
        workload=workload, params=Record(named),
        global_read_bytes=read, global_write_bytes=write,
        by_tensor=Record((t, Record(read_bytes=r, write_bytes=w)) for t, r, w in tensors))


def trace(path: Union[str, os.PathLike[str]], workload: str = "flash2", *,
          config: Union[Config, str, None] = None, **params: ParamValue) -> Record:
    """Writes the workload's trace file (``memwall trace -o PATH``), atomically.

    Keys: path, workload, params (resolved), bytes, kernels, ctas, ops. With a config its per-block
    shared memory is the limit (and flash1's M). ``memwall.replay`` simulates the file.
    """
    core = _core_of(config)
    named, size, kernels, ctas, ops = _core.write_trace(workload, _named(params), core,
                                                        os.fspath(path))
    return Record(path=os.fspath(path), workload=workload, params=Record(named), bytes=size,
                  kernels=kernels, ctas=ctas, ops=ops)


def replay(config: Union[Config, str], path: Union[str, os.PathLike[str]], *,
           flush_l2_between_kernels: bool = False,
           max_memory: Union[str, int, None] = None) -> Report:
    """Simulates a trace file (``memwall replay``): the same Report as ``memwall.run``;
    ``max_memory`` as there."""
    json_text, text = _core.replay(_as_config(config)._core, os.fspath(path),
                                   flush_l2_between_kernels, _memory_text(max_memory))
    return Report._from(json_text, text)


def verify(workload: str = "flash2", *, config: Union[Config, str, None] = None, seed: int = 1,
           tolerance: float = 1e-10, online_rescale: bool = True, **params: ParamValue) -> Record:
    """Runs the workload's kernels on random inputs in double and compares (``memwall verify``).

    The inputs are uniform in [-1, 1] from ``seed``; the output (O, C, or dQ, dK, dV) is compared
    with the plain reference. Keys: workload, params (resolved), output (the tensors compared),
    elements, max_abs_error, tolerance and passed (max_abs_error <= tolerance, the CLI's PASS).
    ``online_rescale=False`` is the CLI's ``--no-rescale``. With a config its per-block shared
    memory is the limit (and flash1's M).
    """
    core = _core_of(config)
    named, output, elements, error = _core.verify(workload, _named(params), core, seed,
                                                  online_rescale)
    return Record(workload=workload, params=Record(named), output=output, elements=elements,
                  max_abs_error=error, tolerance=tolerance, passed=error <= tolerance)


def calibrate(config: str, measured: Union[str, os.PathLike[str]], *, evaluate: bool = False,
              load_check: bool = False, output: Union[str, os.PathLike[str], None] = None,
              params: Union[str, Sequence[str]] = "l2_capacity,mma_sync,fp32,sfu,hbm,launch_overhead,pipe_serial",
              fit_budget: str = "1 GiB", eval_budget: str | None = None,
              hold_out: str = "seq=1024,8192", max_iterations: int = 8, jobs: int = 1) -> Record:
    """Fits the config's efficiencies to measured kernels (``memwall calibrate``).

    ``load_check=True``: only the load-for-load check (model vs ncu SM->L2 bytes; ``failures``);
    ``evaluate=True``: the error table of ``config`` as it is, nothing fitted; otherwise the fit,
    whose calibrated YAML is ``.yaml`` (and written to ``output`` when given; the file's
    ``command:`` comment is the CLI command that reproduces it). Keys as ``--json`` (params,
    fit/held-out metrics, rows) where a table was made; ``.text`` the table, ``.load_check`` the
    load check's text. A full fit of the H200 sweep takes minutes: ``jobs`` cases in parallel.
    """
    if evaluate and load_check:
        raise UsageError("calibrate: evaluate and load_check exclude each other")
    if evaluate and output is not None:
        raise UsageError("calibrate: evaluate fits nothing and writes no config: leave out output")
    mode = "load_check" if load_check else "evaluate" if evaluate else "fit"
    params_text = params if isinstance(params, str) else ",".join(params)
    load_text, failures, text, json_text, yaml = _core.calibrate(
        os.fspath(config), os.fspath(measured), mode, params_text, fit_budget, eval_budget or "",
        hold_out, max_iterations, jobs, os.fspath(output) if output is not None else "")
    result = _load_json(json_text) if json_text else Record()
    result.load_check = load_text
    result.failures = failures
    result.text = text
    result.json = json_text
    result.yaml = yaml
    return result


def validate(*, sm_count: Union[str, os.PathLike[str], None] = None,
             l2_size: Union[str, os.PathLike[str], None] = None,
             table: Union[str, os.PathLike[str], None] = None,
             config: str = "configs/calibrated/h200.yaml", only: str | None = None, cases: int = 0,
             jobs: int = 1, summary: bool = False) -> Record:
    """Kernels measured on a changed chip against the simulator (``memwall validate``).

    ``sm_count`` / ``l2_size``: measurement files (fewer SMs in green contexts; a persisting-L2
    carve-out) simulated with the matching config change of ``config``; or ``table``: a table
    written by ``--csv``, summarized again without simulating. ``only`` (a regex on the case
    label) and ``cases`` (the first N) narrow the cases. Keys as ``--json`` (experiments: one per
    change, with its settings, rows and per-family summary); ``.text`` is what the
    CLI prints (``summary`` its ``--summary``), ``.csv`` what ``--csv`` writes.
    """
    def path(p: Any) -> str:
        return os.fspath(p) if p is not None else ""
    json_text, text, csv_text = _core.validate(path(sm_count), path(l2_size), path(table),
                                               os.fspath(config), only or "", cases, jobs, summary)
    result = _load_json(json_text)
    result.json = json_text
    result.text = text
    result.csv = csv_text
    return result


def ledger(row_len: int, tile: int, *, seed: int = 1, late_max: bool = False) -> Record:
    """One row of scores streamed tile by tile through the online softmax (``memwall ledger``).

    Keys: steps (one per tile: tile_index, begin, end, tile_max, m_old, m_new, rescale, l,
    l_no_rescale; a DataFrame with pandas), argmax, reference_max, reference_sum,
    reference_output, online_output, no_rescale_output, online_error, no_rescale_error; ``.text``
    is the CLI's table. ``late_max`` plants the row's maximum in the last tile.
    """
    out, steps, text = _core.ledger(row_len, tile, seed, late_max)
    result = Record(out, steps=_table(steps))
    result.text = text
    return result


def race(seq: Union[int, Sequence[int]], *, head_dim: int = 64, tile: int = 64, repeat: int = 5,
         seed: int = 1) -> Record:
    """Naive against tiled (online-softmax) attention run on the CPU (``memwall race``).

    Keys: rows (one per N: seq, naive_seconds, tiled_seconds (medians of ``repeat`` runs),
    naive_/tiled_peak_bytes, naive_/tiled_allocated_bytes, max_abs_diff, agree; a DataFrame with
    pandas); ``.text`` is the CLI's table. Times are this machine's wall clock.
    """
    seqs = [seq] if isinstance(seq, int) else list(seq)
    rows, text = _core.race(seqs, head_dim, tile, repeat, seed)
    result = Record(rows=_table(rows))
    result.text = text
    return result


def traffic(seq: int, head_dim: int, *, config: Union[Config, str, None] = None,
            **params: ParamValue) -> Result:
    """HBM bytes of naive, flash1, flash2, flash3 at one shape, from closed forms (``memwall traffic``).

    The keys of its ``--json``; ``.text`` is the table it prints. ``config`` gives M and the
    per-CTA limit (its smem_per_block) instead of ``sram_bytes``.
    """
    if config is not None and params.get("sram_bytes") is not None:
        raise UsageError("traffic: give config or sram_bytes, not both (the config's "
                         "smem_per_block is M)")
    core = _core_of(config)
    named = _named({"seq": seq, "head_dim": head_dim, **params})
    return Result._from(*_core.traffic(named, core))


def roofline(config: Union[Config, str], reports: Iterable[Union[Report, Reports, str]] = (),
             intensities: Iterable[float] = ()) -> Result:
    """The chip's roofline, with the kernels of ``reports`` placed on it (``memwall roofline``).

    ``reports`` are Reports from run() or JSON report texts; the keys are those of its ``--json``
    and ``.text`` is what it prints.
    """
    texts = [r if isinstance(r, str) else r.json for r in reports]
    return Result._from(*_core.roofline(_as_config(config)._core,
                                        [float(x) for x in intensities], texts))


def _parameters_doc() -> str:
    """The keyword arguments every workload function takes, from the workloads' declarations."""
    lines = ["", "Workload parameters (keyword arguments; a workload ignores those it does not",
             "declare; see memwall.workloads()):"]
    for name, kind in _core.parameters():
        users = [w.name for w in workloads() if any(p.name == name for p in w.params)]
        lines.append(f"    {name} ({kind}): {', '.join(users)}")
    return "\n".join(lines)


run.__doc__ = (run.__doc__ or "") + _parameters_doc()
closed_form.__doc__ = (closed_form.__doc__ or "") + _parameters_doc()
