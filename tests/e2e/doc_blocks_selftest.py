#!/usr/bin/env python3
"""Self-test of tests/e2e/doc_blocks.py on the fixture pages in tests/data/doc_blocks/.

Runs the runner as a user does (a subprocess), with a fake `memwall` written to a temporary
directory, so the test needs no build and does not change when the simulator's output does. The
expected line numbers and rewritten pages are computed from the fixtures' text.

    python3 tests/e2e/doc_blocks_selftest.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNNER = REPO_ROOT / "tests" / "e2e" / "doc_blocks.py"
FIXTURES = REPO_ROOT / "tests" / "data" / "doc_blocks"

# The fake memwall: `echo WORDS`, `lines N`, `fail TEXT` (stdout line, TEXT on stderr, exit 3),
# `write FILE TEXT`, `where` (an absolute path below the repository and one below the working
# directory).
FAKE_MEMWALL = '''#!{python}
import os, sys
args = sys.argv[1:]
if args[0] == "echo":
    print(" ".join(args[1:]))
elif args[0] == "lines":
    for i in range(1, int(args[1]) + 1):
        print(f"line {{i}}")
elif args[0] == "fail":
    print("out: before", flush=True)
    print(f"memwall: error: {{args[1]}}", file=sys.stderr)
    sys.exit(3)
elif args[0] == "write":
    with open(args[1], "w") as f:
        f.write(args[2] + "\\n")
    print(f"wrote {{args[1]}}")
elif args[0] == "where":
    print({repo!r} + "/configs/h200.yaml")
    print(os.path.join(os.getcwd(), "out.txt"))
'''


def line_of(path: Path, text: str) -> int:
    """The 1-based number of the only line of `path` that is `text`."""
    numbers = [i + 1 for i, line in enumerate(path.read_text().split("\n")) if line == text]
    assert len(numbers) == 1, (path, text, numbers)
    return numbers[0]


class DocBlocksRunner(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="doc-blocks-selftest-"))
        self.fake = self.tmp / "memwall"
        self.fake.write_text(FAKE_MEMWALL.format(python=sys.executable, repo=str(REPO_ROOT)))
        self.fake.chmod(0o755)

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_runner(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(RUNNER), "--memwall", str(self.fake),
                               *map(str, args)], cwd=self.tmp, capture_output=True, text=True,
                              check=False)

    def copy(self, name: str) -> Path:
        target = self.tmp / name
        shutil.copyfile(FIXTURES / name, target)
        return target

    def test_a_page_whose_blocks_all_match_passes_and_lists_its_skipped_block(self) -> None:
        page = self.copy("pass.md")
        r = self.run_runner("--check", page)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        skip_line = line_of(page, "<!-- doc-test: skip (prints the time of day) -->") + 1
        self.assertIn(f"skipped pass.md:{skip_line}: prints the time of day", r.stdout)
        self.assertIn("doc blocks: 7 run (10 commands), 1 skipped, 0 commands differ", r.stdout)

    def test_files_written_by_commands_stay_out_of_the_repository(self) -> None:
        page = self.copy("pass.md")
        r = self.run_runner("--check", page)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse((REPO_ROOT / "configs" / "doc-blocks-selftest.txt").exists())
        self.assertFalse((REPO_ROOT / "out.txt").exists())
        self.assertFalse((self.tmp / "out.txt").exists())

    def test_a_mismatching_output_fails_naming_file_line_command_and_diff(self) -> None:
        page = self.copy("mismatch.md")
        r = self.run_runner("--check", page)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        for command, was, now in (("lines 3", "line two", "line 2"),
                                  ("lines 6", "line six", "line 6")):
            line = line_of(page, f"$ memwall {command}")
            self.assertIn(f"mismatch.md:{line}: output differs (exit status 0):\n"
                          f"$ memwall {command}\n", r.stdout)
            self.assertIn(f"\n-{was}\n+{now}\n", r.stdout)
        self.assertNotIn(f"mismatch.md:{line_of(page, '$ memwall echo same')}:", r.stdout)
        self.assertIn("2 commands differ", r.stdout)

    def test_the_diff_numbers_its_hunks_with_the_page_lines(self) -> None:
        page = self.copy("mismatch.md")
        r = self.run_runner("--check", page)
        first_output_line = line_of(page, "$ memwall lines 3") + 1
        self.assertIn(f"@@ -{first_output_line},3 +{first_output_line},3 @@", r.stdout)

    def test_a_skip_marker_without_a_reason_is_an_error(self) -> None:
        page = self.copy("bad_marker.md")
        r = self.run_runner("--check", page)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        line = line_of(page, "<!-- doc-test: skip -->")
        self.assertIn(f"bad_marker.md:{line}: doc-test skip marker without a reason", r.stderr)

    def test_an_empty_reason_a_misspelt_marker_and_a_stray_marker_are_errors(self) -> None:
        block = "```\n$ memwall echo x\nx\n```\n"
        cases = {
            "<!-- doc-test: skip () -->\n" + block: "without a reason",
            "<!-- doc-test: skipp (why) -->\n" + block: "unknown doc-test comment",
            "<!-- doc-test: skip (why) -->\n\n" + block: "is not on the line just before",
        }
        for text, message in cases.items():
            page = self.tmp / "inline.md"
            page.write_text("# inline\n\n" + text)
            r = self.run_runner("--check", page)
            self.assertEqual(r.returncode, 2, text + r.stdout + r.stderr)
            self.assertIn("inline.md:3: ", r.stderr)
            self.assertIn(message, r.stderr)

    def test_an_unclosed_fence_is_an_error(self) -> None:
        page = self.tmp / "unclosed.md"
        page.write_text("# unclosed\n\n```\n$ memwall echo x\nx\n")
        r = self.run_runner("--check", page)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("unclosed.md:3: code block never closed", r.stderr)

    def test_update_rewrites_the_differing_outputs_and_keeps_the_excerpt_marks(self) -> None:
        page = self.copy("mismatch.md")
        before = page.read_text()
        r = self.run_runner("--update", page)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for command in ("lines 3", "lines 6"):
            self.assertIn(f"updated mismatch.md:{line_of(page, f'$ memwall {command}')}:"
                          f" $ memwall {command}", r.stdout)
        expected = before.replace("line two\n", "line 2\n").replace("line six\n", "line 6\n")
        self.assertEqual(page.read_text(), expected)
        self.assertEqual(list(self.tmp.glob(".mismatch.md.*")), [], "temporary file left behind")
        again = self.run_runner("--check", page)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)

    def test_update_leaves_a_matching_page_byte_for_byte(self) -> None:
        page = self.copy("pass.md")
        before = page.read_bytes()
        r = self.run_runner("--update", page)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("nothing rewritten", r.stdout)
        self.assertEqual(page.read_bytes(), before)


if __name__ == "__main__":
    unittest.main(verbosity=2)
