"""Type stub of memwall._core, the C++ binding the memwall package wraps.

Every function takes and returns plain values; memwall/__init__.py turns them into Config,
Report and Record objects. Errors are raised as memwall.Error and its subclasses with the CLI's
message text; Interrupted work raises KeyboardInterrupt.
"""

from typing import Optional

version: str

class Config:
    """A loaded, validated HardwareConfig and how it was asked for."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def source_file(self) -> str: ...
    @property
    def path_or_preset(self) -> str: ...
    @property
    def overrides(self) -> list[str]: ...
    def values(self) -> list[tuple[str, str, int | float | str, str, str]]:
        """Every key in table order: (path, type, value in base units, unit, text as shown)."""
    def derived(self) -> list[tuple[str, float, str]]:
        """The derived values in `config show` order: (name, value, unit)."""
    def show(self) -> str:
        """What `memwall config show` prints."""
    def to_yaml(self) -> str:
        """YAML that load_config reads back to the same config."""

def config_reference() -> str:
    """`memwall config reference`: the Markdown of every config key."""

def presets() -> list[tuple[str, str]]:
    """(preset name, YAML path) of every config shipped under configs/."""

def load_config(path_or_preset: str, overrides: list[str]) -> Config:
    """Loads a config; overrides are "key=value" strings, applied in order."""

def workloads() -> list[dict[str, object]]:
    """Every workload: {name, summary, params: [{name, flag, type, unit, default, values, help}]}."""

def parameters() -> list[tuple[str, str]]:
    """Every parameter a keyword argument may name (those with a CLI flag): (name, type)."""

def run(config: Config, workloads: list[str], named: list[tuple[str, str]], flush_l2: bool,
        what_if: str, jobs: int, timeline: str, timeline_budget: int, html: str, max_memory: str
        ) -> tuple[list[tuple[str, str]], str, str, str, str]:
    """Simulates each workload: ([(JSON report, text summary)], text of all, JSON of all,
    what-if text, what-if JSON (both "" without what_if))."""

def sweep_axes() -> list[str]:
    """The sweep's workload axes in their fixed order ("workload" first)."""

def sweep(config: Config, axis_values: list[str], sets: list[str], jobs: int,
          flush_l2: bool) -> tuple[list[str], list[list[str]]]:
    """Runs a sweep: (CSV header, CSV rows as text cells)."""

def closed_form(workload: str, named: list[tuple[str, str]], config: Optional[Config]
                ) -> tuple[list[tuple[str, str]], int, int, list[tuple[str, int, int]]]:
    """(resolved parameters, read bytes, write bytes, [(tensor, read, write)])."""

def write_trace(workload: str, named: list[tuple[str, str]], config: Optional[Config],
                path: str) -> tuple[list[tuple[str, str]], int, int, int, int]:
    """`memwall trace -o PATH`: (resolved parameters, bytes, kernels, CTAs, ops)."""

def replay(config: Config, path: str, flush_l2: bool, max_memory: str) -> tuple[str, str]:
    """`memwall replay PATH`: (JSON report, text summary)."""

def verify(workload: str, named: list[tuple[str, str]], config: Optional[Config], seed: int,
           online_rescale: bool) -> tuple[list[tuple[str, str]], str, int, float]:
    """`memwall verify`: (resolved parameters, tensors compared, elements, max abs error)."""

def io(config: Config, axis_values: list[str], ideal: bool, flush_l2: bool, jobs: int,
       measured: str) -> tuple[str, str]:
    """`memwall io`: (JSON, text); axis_values as sweep's, measured a CSV path or ""."""

def calibrate(config: str, measured: str, mode: str, params: str, fit_budget: str,
              eval_budget: str, hold_out: str, max_iterations: int, jobs: int, output: str
              ) -> tuple[str, int, str, str, str]:
    """`memwall calibrate`: (load-check text, failures, result text, result JSON, calibrated YAML)."""

def validate(sm_count: str, l2_size: str, table: str, config: str, only: str, cases: int,
             jobs: int, summary: bool) -> tuple[str, str, str]:
    """`memwall validate`: (JSON, text, CSV)."""

def ledger(row_len: int, tile: int, seed: int, late_max: bool
           ) -> tuple[dict[str, object], list[dict[str, object]], str]:
    """`memwall ledger`: (results, one dict per tile, the text)."""

def race(seqs: list[int], head_dim: int, tile: int, repeat: int, seed: int
         ) -> tuple[list[dict[str, object]], str]:
    """`memwall race`: (one dict per N, the text)."""

def traffic(named: list[tuple[str, str]], config: Optional[Config]) -> tuple[str, str]:
    """`memwall traffic`: (JSON, text)."""

def roofline(config: Config, intensities: list[float], reports: list[str]) -> tuple[str, str]:
    """`memwall roofline`: (JSON, text); reports are JSON report texts."""
