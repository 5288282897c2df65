#!/usr/bin/env python3
"""Re-runs the memwall outputs pasted in the docs and compares them with the pages.

    python3 tests/e2e/doc_blocks.py --check  [--memwall build/memwall] [FILES...]
    python3 tests/e2e/doc_blocks.py --update [--memwall build/memwall] [FILES...]

FILES default to README.md and docs/*.md of the repository this script is in.

Which blocks. A fenced code block (``` or ~~~, indented or not, any info string) whose first line
starts with `$ memwall ` or `$ build/memwall ` is a doc block. Every line of it that starts with
`$ ` is a command (a command line ending in a backslash continues on the next line); the lines
after a command, up to the next `$ ` line or the end of the block, are its expected output. Blocks
that start with another command (bench/bench_sim.sh, /usr/bin/time, cut) are not doc blocks and
are ignored; the non-memwall commands inside a doc block (`$ cut -d, ... f2.csv`) run too.

How a command runs. Each block gets a fresh scratch directory, the working directory of all its
commands in order. It holds copies of the repository's configs/ and traces/ (the inputs the pages
name), and build/memwall, a link to the memwall under test; a directory whose only entry is
`memwall`, a link to the same binary, comes first on PATH. TMPDIR points into the scratch
directory too. A command runs as `bash -o pipefail -c COMMAND`, so pipes (`| tail -1`) work. A
command that writes a file therefore writes it into the scratch directory (`-o f2.csv`), or into
the copies (`-o configs/calibrated/h200.yaml`), never into the repository; the scratch directory
is removed afterwards. A page must not write anywhere else (an absolute path outside /tmp). The
pages are pasted from the repository root, where memwall names a file below its working directory
relative to it (a preset as configs/h200.yaml); so the repository's absolute path and the scratch
directory's, each followed by a slash, are removed from the output. Reports name the build they
come from, `memwall 0.1.0 (git DESCRIBE)` and `"git_describe": "DESCRIBE"`, which changes with
every commit: the describe text of the memwall under test (from its `--version`) is shown as `…`
there, so a page reads `memwall 0.1.0 (git …)`.

What is compared. The command's stdout and stderr together, as one stream in the order written
(`2>&1`, what a terminal shows; stdout is a pipe, so a program that does not flush may order it
differently from a terminal), line by line and byte for byte, trailing spaces included. Trailing
blank lines are not compared (a blank line between a command's output and the next `$ ` line is a
separator). The exit status is not compared. An expected line that is exactly `...` matches any
number of output lines, none included: a page may show an excerpt.

Skipping. A block that cannot be reproduced byte for byte (wall-clock timings, benchmark output,
an interrupted run, output from another machine, an input the page does not ship) is skipped only
when the line just before its opening fence is the marker

    <!-- doc-test: skip (REASON) -->

REASON is mandatory. --check lists every skipped block with its reason. A marker without a
reason, any other `<!-- doc-test: ... -->` comment, and a marker that is not on the line just
before a doc block's fence are errors.

--check exits 0 when every command's output matches; otherwise it prints, for each mismatching
command, FILE:LINE (the command's line), the command and a unified diff from the page to the fresh
output (`...` lines kept where they still fit; line numbers are the page's), and exits 1. Errors
(a malformed marker, an unclosed fence, a file that cannot be read, a command that runs past
--timeout) exit 2.

--update rewrites the mismatching commands' outputs in place with the fresh output, keeping the
`...` lines (each still stands for the output lines it best covers), each file written atomically
(a temporary file beside it, then a rename), and prints which commands changed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Repository folders copied into each block's scratch directory.
COPIED_DIRS = ("configs", "traces")

#: The first line of a doc block starts with one of these.
DOC_BLOCK_PREFIXES = ("$ memwall ", "$ build/memwall ")

ELLIPSIS = "..."
# The git describe text of each memwall under test, filled in by main (see build_describe).
DESCRIBE: dict[Path, str] = {}

FENCE_RE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER_RE = re.compile(r"^\s*<!--\s*doc-test:(?P<body>.*?)-->\s*$")
SKIP_RE = re.compile(r"^\s*skip\s*(?:\((?P<reason>.*)\))?\s*$")

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_ERROR = 2


class DocError(Exception):
    """A problem with a page or a run that is neither a match nor a mismatch (exit 2)."""


@dataclass
class Command:
    """One `$ ` command of a doc block and the output the page shows for it.

    Line indices are 0-based into the file's lines; `output_start`..`output_end` (exclusive) are
    the expected output lines, trailing blank lines included.
    """

    line: int
    text: str
    output_start: int
    output_end: int
    expected: list[str]
    actual: list[str] | None = None
    status: int | None = None

    def compared_expected(self) -> list[str]:
        return strip_trailing_blank(self.expected)


@dataclass
class Block:
    """A doc block: its fence line, indentation, commands, and skip reason if marked."""

    path: Path
    fence_line: int
    indent: str
    commands: list[Command] = field(default_factory=list)
    skip_reason: str | None = None
    seconds: float = 0.0


def strip_trailing_blank(lines: list[str]) -> list[str]:
    end = len(lines)
    while end > 0 and lines[end - 1].strip() == "":
        end -= 1
    return lines[:end]


def display(path: Path) -> str:
    """The path as the user should read it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def parse_marker(path: Path, index: int, line: str) -> str | None:
    """The skip reason of a `<!-- doc-test: skip (REASON) -->` line, None if the line is no
    doc-test comment; raises DocError for a malformed one."""
    m = MARKER_RE.match(line)
    if not m:
        if line.lstrip().startswith("<!--") and "doc-test:" in line:
            raise DocError(f"{display(path)}:{index + 1}: malformed doc-test comment:"
                           f" {line.strip()} (expected <!-- doc-test: skip (REASON) -->)")
        return None
    skip = SKIP_RE.match(m.group("body"))
    if not skip:
        raise DocError(f"{display(path)}:{index + 1}: unknown doc-test comment: {line.strip()}"
                       " (the only one is <!-- doc-test: skip (REASON) -->)")
    reason = (skip.group("reason") or "").strip()
    if not reason:
        raise DocError(f"{display(path)}:{index + 1}: doc-test skip marker without a reason:"
                       f" {line.strip()} (write <!-- doc-test: skip (why it cannot be"
                       " reproduced) -->)")
    return reason


def parse_commands(path: Path, lines: list[str], start: int, end: int,
                   indent: str) -> list[Command]:
    """The commands of the block whose content is lines[start:end] (fence indent removed)."""
    content = [dedent(line, indent) for line in lines[start:end]]
    commands: list[Command] = []
    i = 0
    while i < len(content):
        if not content[i].startswith("$ "):
            i += 1
            continue
        first = i
        text = content[i][2:]
        while text.endswith("\\") and i + 1 < len(content):
            i += 1
            text += "\n" + content[i]
        j = i + 1
        while j < len(content) and not content[j].startswith("$ "):
            j += 1
        commands.append(Command(line=start + first, text=text, output_start=start + i + 1,
                                output_end=start + j, expected=content[i + 1:j]))
        i = j
    return commands


def dedent(line: str, indent: str) -> str:
    return line[len(indent):] if line.startswith(indent) else line.lstrip(" ")


def parse_page(path: Path) -> tuple[list[str], list[Block]]:
    """The file's lines and its doc blocks, skip markers attached; raises DocError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise DocError(f"{display(path)}: cannot read: {e.strerror}") from e
    lines = text.split("\n")
    blocks: list[Block] = []
    markers: dict[int, str] = {}
    used_markers: set[int] = set()
    i = 0
    while i < len(lines):
        fence = FENCE_RE.match(lines[i])
        if not fence:
            reason = parse_marker(path, i, lines[i])
            if reason is not None:
                markers[i] = reason
            i += 1
            continue
        indent, mark = fence.group("indent"), fence.group("fence")
        j = i + 1
        close = re.compile(r"^ *" + re.escape(mark[0]) + "{" + str(len(mark)) + r",}\s*$")
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if j == len(lines):
            raise DocError(f"{display(path)}:{i + 1}: code block never closed")
        first = dedent(lines[i + 1], indent) if i + 1 < j else ""
        if first.startswith(DOC_BLOCK_PREFIXES):
            block = Block(path=path, fence_line=i, indent=indent,
                          commands=parse_commands(path, lines, i + 1, j, indent))
            if i - 1 in markers:
                block.skip_reason = markers[i - 1]
                used_markers.add(i - 1)
            blocks.append(block)
        i = j + 1
    for index in sorted(set(markers) - used_markers):
        raise DocError(f"{display(path)}:{index + 1}: doc-test skip marker is not on the line just"
                       " before a block that starts with `$ memwall`")
    return lines, blocks


def repo_prefixes() -> list[str]:
    """The repository's absolute path(s) with a trailing slash: memwall shows a path below its
    working directory relative to it, so a run from the repository root shows these as ''."""
    unresolved = Path(os.path.abspath(__file__)).parents[2]
    return sorted({str(REPO_ROOT) + "/", str(unresolved) + "/"}, key=len, reverse=True)


def make_scratch(memwall: Path) -> tuple[Path, Path, dict[str, str]]:
    """A fresh scratch tree: (root to remove, working directory, environment)."""
    root = Path(tempfile.mkdtemp(prefix="memwall-doc-"))
    work = root / "work"
    work.mkdir()
    for name in COPIED_DIRS:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, work / name, symlinks=True)
    (work / "build").mkdir()
    (work / "build" / "memwall").symlink_to(memwall)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "memwall").symlink_to(memwall)
    tmp = root / "tmp"
    tmp.mkdir()
    env = dict(os.environ)
    env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")
    env["TMPDIR"] = str(tmp)
    return root, work, env


def build_describe(memwall: Path) -> str:
    """The git describe text that `memwall --version` names ("memwall 0.1.0 (git TEXT)"), or ''
    when it names none (an older or a fake memwall)."""
    try:
        done = subprocess.run([str(memwall), "--version"], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    found = re.search(r"\(git ([^)\s]+)\)", done.stdout.decode("utf-8", errors="replace"))
    return found.group(1) if found else ""


def without_describe(out: str, describe: str) -> str:
    """`out` with the build's git describe shown as `…` where a report names it."""
    if not describe:
        return out
    return out.replace(f"(git {describe})", "(git \u2026)").replace(
        f'"git_describe": "{describe}"', '"git_describe": "\u2026"')


def run_block(block: Block, memwall: Path, timeout_s: float) -> None:
    """Runs the block's commands in order in one scratch directory, filling in their output."""
    started = time.monotonic()
    root, work, env = make_scratch(memwall)
    try:
        for command in block.commands:
            try:
                done = subprocess.run(["bash", "-o", "pipefail", "-c", command.text], cwd=work,
                                      env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, timeout=timeout_s, check=False)
            except subprocess.TimeoutExpired as e:
                raise DocError(f"{display(block.path)}:{command.line + 1}: `{command.text}` ran"
                               f" past {timeout_s:g} s") from e
            out = done.stdout.decode("utf-8", errors="replace")
            for prefix in (str(work.resolve()) + "/", str(work) + "/", *repo_prefixes()):
                out = out.replace(prefix, "")
            out = without_describe(out, DESCRIBE.get(memwall, ""))
            lines = out.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            command.actual = strip_trailing_blank(lines)
            command.status = done.returncode
    finally:
        shutil.rmtree(root, ignore_errors=True)
        block.seconds = time.monotonic() - started


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` equals `expected`, each `...` line of which stands for any lines."""
    if ELLIPSIS not in expected:
        return expected == actual
    # reach[j]: expected[:i] can match actual[:j].
    reach = [True] + [False] * len(actual)
    for e in expected:
        if e == ELLIPSIS:
            for j in range(1, len(actual) + 1):
                reach[j] = reach[j] or reach[j - 1]
        else:
            reach = [False] + [reach[j - 1] and actual[j - 1] == e
                               for j in range(1, len(actual) + 1)]
    return reach[-1]


ADD_COST = 1.0
DROP_COST = 2.0


def pair_cost(expected: str, actual: str) -> float:
    """The cost of showing `actual` where a page shows the different line `expected`."""
    return 0.5 + 2.0 * (1.0 - difflib.SequenceMatcher(None, expected, actual).ratio())


def refreshed(expected: list[str], actual: list[str]) -> list[str]:
    """The expected lines rewritten to match `actual`, `...` lines kept.

    An edit-distance alignment: a literal line pairs with an equal output line free and with
    another at 0.5 + 2 (1 - similarity), or is dropped (2); an output line is added (1); a `...`
    covers any run of output lines free. Dropping costs most so that the lines a page chose to show
    stay shown: a page that omits the first lines of an output without a `...` gets them added,
    rather than its shown lines traded for them. Each literal line becomes the output line it pairs
    with; each `...` stays, covering the lines the alignment gives it.
    """
    if ELLIPSIS not in expected:
        return list(actual)
    m, n = len(expected), len(actual)
    inf = float("inf")
    cost = [[inf] * (n + 1) for _ in range(m + 1)]
    move = [[""] * (n + 1) for _ in range(m + 1)]
    cost[0][0] = 0.0
    for j in range(1, n + 1):
        cost[0][j], move[0][j] = j * ADD_COST, "add"
    for i in range(1, m + 1):
        e = expected[i - 1]
        for j in range(n + 1):
            if e == ELLIPSIS:
                best, how = cost[i - 1][j], "end"
                if j > 0 and cost[i][j - 1] < best:
                    best, how = cost[i][j - 1], "cover"
            else:
                best, how = cost[i - 1][j] + DROP_COST, "drop"
                if j > 0:
                    a = actual[j - 1]
                    pair = 0.0 if a == e else pair_cost(e, a)
                    if cost[i - 1][j - 1] + pair <= best:
                        best, how = cost[i - 1][j - 1] + pair, "pair"
                    if cost[i][j - 1] + ADD_COST < best:
                        best, how = cost[i][j - 1] + ADD_COST, "add"
            cost[i][j], move[i][j] = best, how
    out: list[str] = []
    i, j = m, n
    while i > 0 or j > 0:
        how = move[i][j]
        if how == "end":
            out.append(ELLIPSIS)
            i -= 1
        elif how == "cover":
            j -= 1
        elif how == "drop":
            i -= 1
        elif how == "pair":
            out.append(actual[j - 1])
            i, j = i - 1, j - 1
        else:
            out.append(actual[j - 1])
            j -= 1
    out.reverse()
    return out


def unified_diff(path: Path, command: Command, new: list[str]) -> str:
    """A unified diff from the page's lines to `new`, hunk line numbers those of the page."""
    offset = command.output_start
    hunk = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")

    def shift(match: re.Match[str]) -> str:
        return (f"@@ -{int(match.group(1)) + offset}{match.group(2) or ''}"
                f" +{int(match.group(3)) + offset}{match.group(4) or ''} @@")

    out = []
    for line in difflib.unified_diff(command.compared_expected(), new,
                                     fromfile=f"{display(path)} (as pasted)",
                                     tofile="fresh output", lineterm=""):
        out.append(hunk.sub(shift, line) if line.startswith("@@") else line)
    return "\n".join(out)


def collect(files: list[Path]) -> list[tuple[Path, list[str], list[Block]]]:
    pages = []
    for path in files:
        lines, blocks = parse_page(path)
        pages.append((path, lines, blocks))
    return pages


def run_all(pages: list[tuple[Path, list[str], list[Block]]], memwall: Path, jobs: int,
            timeout_s: float) -> None:
    todo = [b for _, _, blocks in pages for b in blocks if b.skip_reason is None]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for future in [pool.submit(run_block, b, memwall, timeout_s) for b in todo]:
            future.result()


def write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check(pages: list[tuple[Path, list[str], list[Block]]]) -> int:
    blocks = commands = differ = 0
    for path, _, page_blocks in pages:
        for block in page_blocks:
            if block.skip_reason is not None:
                print(f"skipped {display(path)}:{block.fence_line + 1}: {block.skip_reason}")
                continue
            blocks += 1
            for command in block.commands:
                commands += 1
                assert command.actual is not None
                if matches(command.compared_expected(), command.actual):
                    continue
                differ += 1
                print(f"{display(path)}:{command.line + 1}: output differs (exit status"
                      f" {command.status}):\n$ {command.text}")
                print(unified_diff(path, command,
                                   refreshed(command.compared_expected(), command.actual)))
                print()
    skipped = sum(1 for _, _, bs in pages for b in bs if b.skip_reason is not None)
    print(f"doc blocks: {blocks} run ({commands} commands), {skipped} skipped,"
          f" {differ} commands differ")
    if differ:
        print("to refresh the pages after a deliberate change: make docs-refresh"
              " (python3 tests/e2e/doc_blocks.py --update --memwall build/memwall)")
    return EXIT_MISMATCH if differ else EXIT_OK


def update(pages: list[tuple[Path, list[str], list[Block]]]) -> int:
    changed_total = 0
    for path, lines, page_blocks in pages:
        replacements: list[tuple[int, int, list[str]]] = []
        for block in page_blocks:
            if block.skip_reason is not None:
                print(f"not refreshed (skipped) {display(path)}:{block.fence_line + 1}:"
                      f" {block.skip_reason}")
                continue
            for command in block.commands:
                assert command.actual is not None
                expected = command.compared_expected()
                if matches(expected, command.actual):
                    continue
                new = refreshed(expected, command.actual)
                separator = command.expected[len(expected):]
                body = [block.indent + line if line else line for line in new + separator]
                replacements.append((command.output_start, command.output_end, body))
                note = "" if command.status == 0 else f" (exit status {command.status})"
                print(f"updated {display(path)}:{command.line + 1}: $ {command.text}{note}")
        if not replacements:
            continue
        new_lines = list(lines)
        for start, end, body in sorted(replacements, reverse=True):
            new_lines[start:end] = body
        write_atomically(path, "\n".join(new_lines))
        changed_total += len(replacements)
    print(f"doc blocks: {changed_total} commands' outputs rewritten" if changed_total
          else "doc blocks: every output already matches; nothing rewritten")
    return EXIT_OK


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description="Re-run the `$ memwall ...` blocks pasted in the docs and compare or refresh"
                    " their outputs.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare; exit 1 on any difference")
    mode.add_argument("--update", action="store_true",
                      help="rewrite the differing outputs in place")
    parser.add_argument("--memwall", default=str(REPO_ROOT / "build" / "memwall"),
                        help="the memwall binary that `memwall` means (default: build/memwall)")
    parser.add_argument("-j", "--jobs", type=int, default=min(os.cpu_count() or 1, 4),
                        help="blocks run at once (default: the CPU count, at most 4); the report"
                             " is the same whatever it is")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds one command may run (300)")
    parser.add_argument("--timings", action="store_true",
                        help="also print each block's wall time, slowest first")
    parser.add_argument("files", nargs="*", type=Path,
                        help="Markdown files (default: README.md docs/*.md)")
    args = parser.parse_args(argv)

    memwall = Path(args.memwall).resolve()
    DESCRIBE[memwall] = build_describe(memwall)
    if not (memwall.is_file() and os.access(memwall, os.X_OK)):
        print(f"doc_blocks: error: {args.memwall}: no executable memwall there", file=sys.stderr)
        return EXIT_ERROR
    files = args.files or [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
    try:
        pages = collect(files)
        run_all(pages, memwall, args.jobs, args.timeout)
    except DocError as e:
        print(f"doc_blocks: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    if args.timings:
        ran = [b for _, _, blocks in pages for b in blocks if b.skip_reason is None]
        for block in sorted(ran, key=lambda b: -b.seconds):
            print(f"{block.seconds:7.2f} s  {display(block.path)}:{block.fence_line + 1}")
    sys.stdout.flush()
    return update(pages) if args.update else check(pages)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
