"""The examples of docs/python.md run and print what the page shows; the README's example runs.

The ```pycon blocks are one doctest: they run in order, in one namespace, from the repository
root, with ELLIPSIS (``...`` in an expected line matches anything, e.g. an absolute path).
"""

from __future__ import annotations

import doctest
import re

from conftest import ROOT

PAGE = ROOT / "docs" / "python.md"


def test_the_examples_of_docs_python_md_print_what_the_page_shows():
    blocks = re.findall(r"^```pycon\n(.*?)^```$", PAGE.read_text(), re.S | re.M)
    assert len(blocks) >= 7
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    failures: list[str] = []
    test = parser.get_doctest("\n".join(blocks), {}, "docs/python.md", str(PAGE), 0)
    runner.run(test, out=failures.append)
    assert not failures, "".join(failures)


def test_the_python_example_of_the_readme_runs(capsys):
    blocks = re.findall(r"^```python\n(.*?)^```$", (ROOT / "README.md").read_text(), re.S | re.M)
    assert len(blocks) == 1
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert namespace["report"].workload.name == "flash2"
    assert len(namespace["frame"]) == 3
    assert "tensor" in capsys.readouterr().out
