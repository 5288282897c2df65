#!/usr/bin/env python3
"""`memwall run --html FILE` in a real headless browser (Debian's chromium).

For one run and for two runs side by side (with an override), the page must:
- be self-contained: no address it would fetch (no http:, https:, //, src= or url() but data:);
- load in chromium with no console message at all (the page has no script: any message is an
  error or a warning), checked by a page with a console.error first, so a harness that cannot
  see console messages fails instead of passing;
- after the browser has parsed it (its DOM), show every number with the JSON report's key and
  exact value (data-key, data-value equal to the value at that key of `--json`), its text
  agreeing with that value at the shown precision, and show every figure the JSON has;
- name the config file, every --set override and memwall's version;
- be byte-identical for the same inputs, and refused before simulating when the path is bad.

Exits 77 (CTest: skipped), saying so, when no chromium is installed.

  tests/e2e/html_report.py --memwall build/memwall
"""

from __future__ import annotations

import argparse
import html.parser
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

SHAPE = ["--seq", "1024", "--head-dim", "64", "--heads", "4"]

#: JSON keys (last part) the page does not show: engine counters with no reading of their own.
NOT_SHOWN = {"l2_hit_sectors", "l2_miss_sectors", "l2_line_accesses", "start_s",
             "threads_per_cta", "smem_bytes_per_cta"}


def fail(message: str) -> None:
    print("html_report: FAIL: " + message)
    sys.exit(1)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browse(chromium: str, path: str) -> tuple[str, list[str]]:
    """The DOM chromium builds from the file at `path`, and the console messages it logged."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
             "--dump-dom", "file://" + os.path.abspath(path)],
            capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        fail(f"chromium exited {proc.returncode} on {path}:\n{proc.stderr[-2000:]}")
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console


class Cells(html.parser.HTMLParser):
    """Every element with data-key: (key, data-value, its text)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[list[str]] = []
        self._open: list[str] | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if "data-key" in a:
            self._open = [a["data-key"] or "", a.get("data-value") or "", ""]

    def handle_endtag(self, tag: str) -> None:
        if self._open is not None and tag == "td":
            self.cells.append(self._open)
            self._open = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._open is not None:
            self._open[2] += data


def lookup(report: Any, key: str) -> Any:
    """The value at `key`; a JSON key may itself hold dots (config.values' "sm.count"), so at each
    level the longest key that matches is taken."""
    value, parts = report, key.split(".")
    while parts:
        if isinstance(value, list):
            value, parts = value[int(parts[0])], parts[1:]
            continue
        for n in range(len(parts), 0, -1):
            name = ".".join(parts[:n])
            if name in value:
                value, parts = value[name], parts[n:]
                break
        else:
            raise KeyError(key)
    return value


def leaves(value: Any, prefix: str = "") -> list[str]:
    """The keys of every number in a JSON report."""
    if isinstance(value, dict):
        return [k for name, item in value.items() for k in leaves(item, prefix + name + ".")]
    if isinstance(value, list):
        return [k for i, item in enumerate(value) for k in leaves(item, f"{prefix}{i}.")]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [prefix[:-1]]
    return []


PREFIX = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
TIME = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def shown_value(text: str, value: float) -> bool:
    """Whether `text` (as the page shows a number) agrees with `value`."""
    text = text.strip()
    exact = re.search(r"\((\d+) B\)$", text)
    if exact:  # bytes: "1.5 MiB (1572864 B)"
        return int(exact.group(1)) == value
    if re.fullmatch(r"\d+", text):
        return int(text) == value
    m = re.fullmatch(r"(\d+) \((.+)\)", text)  # "2 (registers)"
    if m:
        return int(m.group(1)) == value
    m = re.fullmatch(r"(-?[\d.]+)%", text)
    if m:
        return abs(float(m.group(1)) - 100 * value) <= 0.05 + 1e-9
    m = re.fullmatch(r"(-?[\d.]+(?:e[-+]?\d+)?) (ps|ns|us|ms|s)", text)
    if m:
        return math.isclose(float(m.group(1)) * TIME[m.group(2)], value, rel_tol=5e-3, abs_tol=1e-12)
    m = re.fullmatch(r"(-?[\d.]+(?:e[-+]?\d+)?) ([kKMGTP]?)(FLOP|op|B/s|W|Hz)", text)
    if m:
        return math.isclose(float(m.group(1)) * PREFIX[m.group(2)], value, rel_tol=5e-3)
    # The resolved config, in base units as the JSON has it: "1.98e+09 Hz", "1.42e-07 s", "0.46".
    m = re.fullmatch(r"(-?[\d.]+(?:e[-+]?\d+)?)(?: (Hz|s))?", text)
    if m:
        return math.isclose(float(m.group(1)), value, rel_tol=1e-8, abs_tol=1e-300)
    return False


def check_roofline(memwall: str, tmp: str, name: str, dom: str, report: Any, report_path: str,
                   compare_with_command: bool) -> None:
    """The roofline table: each kernel's intensity is its FLOPs over its DRAM bytes in the JSON;
    without overrides, its intensity and share of the roof are `memwall roofline`'s."""
    rows = re.findall(r"<tr><th>([A-Z])</th><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td>"
                      r"<td>([^<]+)%</td></tr>", dom)
    runs = report if isinstance(report, list) else [report]
    expected = {}
    for run in runs:
        for k in run["kernels"]:
            dram = k["dram_read_bytes"] + k["dram_write_bytes"]
            if k["flops"] and dram and k["time_s"] > 0:
                expected[f"{run['workload']['name']}/{k['name']}"] = k["flops"] / dram
    if sorted(r[1] for r in rows) != sorted(expected):
        fail(f"{name}: the roofline places {[r[1] for r in rows]}, the JSON's kernels with FLOPs, "
             f"DRAM bytes and time are {sorted(expected)}")
    for _, kernel, intensity, _, _ in rows:
        if intensity != f"{expected[kernel]:.4g}":
            fail(f"{name}: roofline: {kernel} at intensity {intensity}, the JSON gives "
                 f"{expected[kernel]:.4g}")
    if compare_with_command:
        roof_path = os.path.join(tmp, name + "-roof.json")
        subprocess.run([memwall, "roofline", "--config", "h200", "--from", report_path,
                        "--json", roof_path], capture_output=True, check=True)
        with open(roof_path, encoding="utf-8") as f:
            roof = {k["name"]: k for k in json.load(f)["kernels"]}
        for _, kernel, intensity, _, share in rows:
            if not math.isclose(float(share), 100 * roof[kernel]["fraction_of_roof"], abs_tol=0.05):
                fail(f"{name}: roofline: {kernel} at {share}% of the roof, `memwall roofline` "
                     f"says {100 * roof[kernel]['fraction_of_roof']:.2f}%")


def check_page(chromium: str, memwall: str, tmp: str, name: str, args: list[str]) -> None:
    page, report_path = os.path.join(tmp, name + ".html"), os.path.join(tmp, name + ".json")
    run = [memwall, "run", "--config", "h200", *args, *SHAPE, "--html", page, "--json", report_path]
    proc = subprocess.run(run, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"{' '.join(run)} exited {proc.returncode}: {proc.stderr}")
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    with open(page, encoding="utf-8") as f:
        source = f.read()

    fetched = re.findall(r"""(?:src|href)\s*=\s*["']?(?!data:)[^"'\s>]+|url\(|https?:|//[a-z]""",
                         source, re.I)
    if fetched:
        fail(f"{name}: the page would fetch something: {fetched[:5]}")

    dom, console = browse(chromium, page)
    if console:
        fail(f"{name}: console messages while loading the page:\n" + "\n".join(console))
    parser = Cells()
    parser.feed(dom)
    if not parser.cells:
        fail(f"{name}: the browser's DOM has no number with data-key (page not parsed?)")
    shown = set()
    for key, value_text, text in parser.cells:
        try:
            value = lookup(report, key)
        except (KeyError, IndexError, ValueError):
            fail(f"{name}: data-key {key!r} is not a key of the JSON report")
        if float(value_text) != value:
            fail(f"{name}: {key}: the page's data-value {value_text} != the JSON's {value}")
        if not shown_value(text, value):
            fail(f"{name}: {key}: the page shows {text!r}, the JSON has {value}")
        shown.add(key)
    text = " ".join(parser.text)
    missing = [k for k in leaves(report) if k.split(".")[-1] not in NOT_SHOWN and k not in shown
               and "workload.params." not in k]
    if missing:
        fail(f"{name}: figures of the JSON the page does not show: {missing[:10]}")
    for run_report in report if isinstance(report, list) else [report]:
        for key, value in run_report["workload"]["params"].items():
            if f"{key}={value}" not in text:
                fail(f"{name}: the page does not name the parameter {key}={value}")
    version = subprocess.run([memwall, "--version"], capture_output=True, text=True).stdout.split()[-1]
    sets = [args[i + 1] for i, a in enumerate(args) if a == "--set"]
    wanted = ["configs/h200.yaml", version] + (["--set " + s for s in sets] or ["none"])
    for needle in wanted:
        if needle not in text:
            fail(f"{name}: the page does not say {needle!r}")

    check_roofline(memwall, tmp, name, dom, report, report_path, "--set" not in args)

    again = os.path.join(tmp, name + "-again.html")
    subprocess.run(run[:-4] + ["--html", again], capture_output=True, check=True)
    with open(again, encoding="utf-8") as f:
        if f.read() != source:
            fail(f"{name}: the same run gave a different page")
    print(f"html_report: {name}: {len(parser.cells)} numbers equal the JSON's, the roofline "
          "agrees, no console message, nothing fetched")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--memwall", default="build/memwall")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("html_report: skipped: no chromium on PATH (Debian: apt-get install chromium)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        # The harness must see console errors, or a clean page proves nothing.
        probe = os.path.join(tmp, "probe.html")
        with open(probe, "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html><body><script>console.error('probe')</script></body></html>")
        if not any("probe" in line for line in browse(chromium, probe)[1]):
            fail("chromium's console messages are not visible to this test (probe not seen)")

        check_page(chromium, args.memwall, tmp, "one", ["--workload", "flash2"])
        check_page(chromium, args.memwall, tmp, "two",
                   ["--workload", "naive,flash2", "--set", "l2.size=30 MiB",
                    "--set", "hbm.bandwidth=3 TB/s"])

        # The path is checked before simulating, as every output's.
        bad = os.path.join(tmp, "no-such-folder", "page.html")
        proc = subprocess.run([args.memwall, "run", "--config", "h200", *SHAPE, "--html", bad],
                              capture_output=True, text=True)
        if proc.returncode == 0 or "--html" not in proc.stderr or proc.stdout:
            fail(f"--html into a missing folder: exit {proc.returncode}, stdout {proc.stdout!r}, "
                 f"stderr {proc.stderr!r}")
        clash = os.path.join(tmp, "same.json")
        proc = subprocess.run([args.memwall, "run", "--config", "h200", *SHAPE, "--html", clash,
                               "--json", clash], capture_output=True, text=True)
        if proc.returncode == 0 or "--html" not in proc.stderr or "--json" not in proc.stderr:
            fail(f"--html and --json the same file: exit {proc.returncode}: {proc.stderr!r}")
    print("html_report: ok")


if __name__ == "__main__":
    main()
