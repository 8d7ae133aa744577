"""The documentation's Python code runs: every ```python block of docs/tutorial.md, docs/index.md (getting
started), docs/api.md and of the README's library section, each page in order in one namespace; a ```text
block right after a code block is its expected output."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from helpers import data_dir_with, no_data

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def code_blocks(markdown: str) -> list[tuple[str, str | None]]:
    """(code, expected output or None) of every python block; the output is a text block right after it."""
    matches = list(BLOCK.finditer(markdown))
    blocks = []
    for i, match in enumerate(matches):
        if match.group(1) != "python":
            continue
        following = matches[i + 1] if i + 1 < len(matches) else None
        expected = None
        if following is not None and following.group(1) == "text" and \
                not markdown[match.end():following.start()].strip():
            expected = following.group(2)
        blocks.append((match.group(2), expected))
    return blocks


def run_blocks(blocks: list[tuple[str, str | None]], where: str) -> None:
    namespace: dict = {"__name__": "__docs__"}
    for number, (code, expected) in enumerate(blocks, 1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{where}, python block {number}", "exec"), namespace)
        if expected is not None:
            assert out.getvalue().strip() == expected.strip(), f"{where}, python block {number}: output differs"


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    with threadpool_limits(1):  # lbfgs results do not depend on the BLAS thread count
        yield tmp_path


def test_code_block_parser_pairs_outputs():
    text = "```python\nprint(1)\n```\n\n```text\n1\n```\n```bash\nls\n```\n```python\nx = 2\n```\n"
    assert code_blocks(text) == [("print(1)\n", "1\n"), ("x = 2\n", None)]


def test_tutorial_runs_and_prints_what_it_says(in_tmp, monkeypatch):
    data = data_dir_with("yeast/yeast.xml")
    if data is None:
        pytest.skip(no_data("yeast/yeast.xml", "the Mulan data set yeast (read by the tutorial)"))
    monkeypatch.setenv("XMLTHRESH_DATA", str(data))
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    blocks = code_blocks((ROOT / "docs" / "tutorial.md").read_text())
    assert len(blocks) >= 6
    run_blocks(blocks, "docs/tutorial.md")
    assert (in_tmp / "yeast-thresholds.json").is_file() and (in_tmp / "my_scores.npz").is_file()


def test_readme_library_snippet_runs(in_tmp):
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## The library")
    section = readme[start:readme.index("\n## ", start + 1)]
    blocks = code_blocks(section)
    assert len(blocks) >= 1
    run_blocks(blocks, "README.md, The library")  # from an empty directory: nothing relative to the checkout
    assert (in_tmp / "thresholds.json").is_file()


def test_getting_started_runs_and_prints_what_it_says(in_tmp):
    blocks = code_blocks((ROOT / "docs" / "index.md").read_text())
    assert len(blocks) >= 1 and all(expected is not None for _, expected in blocks)
    run_blocks(blocks, "docs/index.md")


def test_api_page_snippets_run(in_tmp, monkeypatch):
    blocks = code_blocks((ROOT / "docs" / "api.md").read_text())
    assert len(blocks) >= 3
    data = data_dir_with("berger/ESPGameNN.txt")
    if data is None:
        pytest.skip(no_data("berger/ESPGameNN.txt", "espgame (loaded by the API page's ranked-list snippet)"))
    monkeypatch.setenv("XMLTHRESH_DATA", str(data))
    run_blocks(blocks, "docs/api.md")  # from an empty directory: nothing relative to the checkout
