#!/usr/bin/python3
"""Executes the notebooks of docs/notebooks/ and checks them against their committed outputs.

  tests/e2e/notebooks.py --check  [NOTEBOOK ...]   execute each in a temporary folder; fail on
                                                  any cell's error, or when its outputs differ
                                                  from the committed ones
  tests/e2e/notebooks.py --update [NOTEBOOK ...]   execute each and commit its outputs in place

Default: every docs/notebooks/*.ipynb. Run with the Python the memwall module was built for
(/usr/bin/python3) and the module on the path (PYTHONPATH=build/python); each notebook runs with
`python3 -m nbconvert --execute` in its own folder.

The comparison, cell by cell: the sources; the text of every output (streams, text/plain,
text/html) exactly; and for images their presence and type, not their bytes (a PNG's bytes
change with the fonts and libraries installed, a figure's numbers are in the text around it).
Execution counts and cell metadata are not compared. Exits 77 (CTest: skipped), saying what is
missing, when nbconvert, ipykernel or matplotlib cannot be imported.
"""

from __future__ import annotations

import argparse
import difflib
import glob
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE_TYPES = ("image/png", "image/svg+xml", "image/jpeg")


def missing_tools() -> list[str]:
    missing = []
    for module, package in (("nbconvert", "python3-nbconvert"), ("ipykernel", "python3-ipykernel"),
                            ("matplotlib", "python3-matplotlib")):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"{module} ({package})")
    return missing


def pythonpath() -> str:
    """PYTHONPATH with each folder made absolute: the kernel runs in the notebook's folder."""
    parts = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return os.pathsep.join(os.path.abspath(p) for p in parts if p)


def execute(source: str, target: str) -> tuple[bool, str]:
    """Runs `source` with nbconvert, writing the executed notebook to `target`."""
    proc = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=300", "--ExecutePreprocessor.record_timing=False",
         "--output-dir", os.path.dirname(target), "--output", os.path.basename(target), source],
        capture_output=True, text=True, cwd=os.path.dirname(source),
        env={**os.environ, "PYTHONPATH": pythonpath(), "PYDEVD_DISABLE_FILE_VALIDATION": "1"})
    return proc.returncode == 0, proc.stdout + proc.stderr


def text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def machine_free(value: str) -> str:
    """`value` without what differs between checkouts and builds: the repository's absolute path
    (a preset's config file is named by it) and the build's git describe ("(git …)")."""
    value = value.replace(ROOT + os.sep, "")
    return re.sub(r"\(git [^)\s]+\)", "(git \u2026)", value)


def normalised(path: str) -> list[dict[str, Any]]:
    """The cells of a notebook as compared: type, source, and outputs (images by type only)."""
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    cells = []
    for cell in notebook["cells"]:
        entry: dict[str, Any] = {"type": cell["cell_type"], "source": text(cell["source"])}
        if cell["cell_type"] == "code":
            outputs = []
            for out in cell.get("outputs", []):
                kind = out["output_type"]
                if kind == "stream":
                    outputs.append({"stream": out["name"], "text": machine_free(text(out["text"]))})
                elif kind == "error":
                    outputs.append({"error": out["ename"], "value": out["evalue"]})
                else:
                    data = {}
                    for mime, value in sorted(out.get("data", {}).items()):
                        data[mime] = "<image>" if mime in IMAGE_TYPES else machine_free(text(value))
                    outputs.append({kind: data})
            entry["outputs"] = outputs
        cells.append(entry)
    return cells


def errors_in(path: str) -> list[str]:
    return [f"cell {i}: {o['error']}: {o['value']}" for i, cell in enumerate(normalised(path))
            for o in cell.get("outputs", []) if "error" in o]


def strip_metadata(path: str) -> None:
    """Leaves no per-run metadata in a committed notebook (execution timings, widget state)."""
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    for cell in notebook["cells"]:
        cell.get("metadata", {}).pop("execution", None)
        for out in cell.get("outputs", []):
            if "text" in out:
                out["text"] = machine_free(text(out["text"]))
            for mime, value in out.get("data", {}).items():
                if mime not in IMAGE_TYPES:
                    out["data"][mime] = machine_free(text(value))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(notebook, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    parser.add_argument("notebooks", nargs="*")
    args = parser.parse_args()
    missing = missing_tools()
    if missing:
        print("notebooks.py: skipped: this Python cannot import " + ", ".join(missing))
        return 77
    paths = [os.path.abspath(p) for p in args.notebooks] or sorted(
        glob.glob(os.path.join(ROOT, "docs", "notebooks", "*.ipynb")))
    failed = False
    for path in paths:
        name = os.path.relpath(path, ROOT)
        with tempfile.TemporaryDirectory() as tmp:
            # The notebook runs in its own folder (as nbconvert does); the result goes to tmp.
            executed = os.path.join(tmp, os.path.basename(path))
            start = time.monotonic()
            ok, log = execute(path, executed)
            seconds = time.monotonic() - start
            if not ok or not os.path.exists(executed):
                print(f"notebooks.py: {name}: execution failed:\n{log[-3000:]}")
                failed = True
                continue
            errors = errors_in(executed)
            if errors:
                print(f"notebooks.py: {name}: cells raised: " + "; ".join(errors))
                failed = True
                continue
            if args.update:
                shutil.copyfile(executed, path)
                strip_metadata(path)
                print(f"notebooks.py: {name}: executed in {seconds:.1f} s, outputs written")
                continue
            committed, fresh = normalised(path), normalised(executed)
            if committed != fresh:
                a = json.dumps(committed, indent=1, ensure_ascii=False).splitlines()
                b = json.dumps(fresh, indent=1, ensure_ascii=False).splitlines()
                diff = "\n".join(difflib.unified_diff(a, b, "committed", "fresh run", lineterm="", n=2))
                print(f"notebooks.py: {name}: the committed outputs differ from a fresh run "
                      f"(tests/e2e/notebooks.py --update {name} after a deliberate change):\n"
                      + diff[:8000])
                failed = True
                continue
            print(f"notebooks.py: {name}: executed in {seconds:.1f} s, outputs match the committed ones")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
