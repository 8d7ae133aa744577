"""Comments and docstrings say what and why, not where the work was tracked nor how fast it ran on one
machine: no issue numbers ("issue 12", "#12", "wave 3") and no measured timings ("0.3 s", "1.2 s of CPU",
"9.5 -> 8.2 s") in the package and its plugins. Timings belong in ``benchmarks/`` or the README; a docstring
may point there ("see benchmarks/cli.py").

Scanned: every comment (``tokenize``) and every docstring or bare string statement (``ast``) of the Python
files under ``xmlthresh/`` and ``plugins/``, and the comments of their YAML files. String values the code uses
(log messages, errors) are not scanned.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("xmlthresh", "plugins")

#: files whose comments may name issues or timings (none: timings live in benchmarks/, issues in git)
ALLOWED: tuple[str, ...] = ()

ISSUE = re.compile(
    r"\bissues?\s*#?\d+"           # "issue" or "issues", then a number, with or without "#"
    r"|(?<![\w&#])#\d+\b(?![\w-])"  # "#" and a number (not a colour like #636efa, not an HTML entity)
    r"|\bwave\s*#?\d+"             # "wave" and a number
    r"|\b(?:PR|GH)[\s-]*#?\d+\b",  # "PR" or "GH" and a number
    re.IGNORECASE)
_NUMBER = r"\d+(?:[.,]\d+)?"
TIMING = re.compile(
    rf"\b{_NUMBER}\s?(?:ms|µs|us|ns|secs?|seconds?|mins?|minutes?|hours?)\b(?![\w(^])"  # 30 ms, 5 min, 2 seconds
    r"|\b\d+\.\d+\s?s\b(?![\w(^])"  # 0.3 s, 0.4s
    r"|\b\d+\ss\b(?![\w(^])(?=\s*(?:(?:of|CPU|wall|to|per|each|for|here|instead|on|at|in|with|saved|the|and|or"
    r"|idle|timeout|total|faster|slower|longer|later|before|after)\b|[,;:.)\]]|->|$))"  # 8 s of CPU, but not
    # a bare "1s" (a plural of 1), nor the formulas "2 s (1 - ...)", "3 s(x)", "b^2 s^2"
    rf"|\b{_NUMBER}\s*->\s*{_NUMBER}\s?(?:s|ms)\b")  # measured: 9.5 -> 8.2 s


def findings(text: str) -> list[str]:
    """Every issue reference and timing in ``text``."""
    return [m.group(0) for m in ISSUE.finditer(text)] + [m.group(0) for m in TIMING.finditer(text)]


def python_comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and every docstring or bare string statement of a Python source."""
    texts = [(token.start[0], token.string) for token in tokenize.generate_tokens(io.StringIO(source).readline)
             if token.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            texts += [(node.lineno + offset, line) for offset, line in enumerate(node.value.value.splitlines())]
    return texts


def yaml_comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of every YAML comment: a ``#`` at the start of a line or after a blank."""
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        match = re.search(r"(?:^|\s)(#.*)$", line)
        if match:
            found.append((number, match.group(1)))
    return found


def package_files() -> list[Path]:
    files = []
    for name in SCANNED:
        files += [path for path in sorted((ROOT / name).rglob("*")) if path.suffix in {".py", ".yaml", ".yml"}
                  and not any(part in {"__pycache__", "build", "dist"} or part.endswith(".egg-info")
                              for part in path.relative_to(ROOT).parts)]
    return files


def allowed(relative: str) -> bool:
    return any(relative == entry or (entry.endswith("/") and relative.startswith(entry)) for entry in ALLOWED)


# ---------------------------------------------------------------------- the patterns themselves
@pytest.mark.parametrize("text", [
    "see issue 12", "(issue 14)", "issue #12", "Issues 3 and 4", "fixed in #12", "(#7)", "wave 3", "Wave #2",
    "PR 31", "GH-5",
])
def test_issue_references_are_found(text):
    assert ISSUE.search(text), text


@pytest.mark.parametrize("text", [
    "colour #636efa and #1f77b4", "&#39;", "c1 = 1,0,0,1", "the issue of ties", "an issue: labels without positives",
    "section 1.3", "Fig. 4.5", "Table 8", "top-5 scores", "# noqa: B018", "#: the registry",
])
def test_no_issue_reference_in(text):
    assert not ISSUE.search(text), text


@pytest.mark.parametrize("text", [
    "costs about 0.3 s", "1.2 s of CPU", "measured: 9.5 -> 8.2 s", "30 ms to import", "5 min 33 s of wall",
    "about 15-20 s here", "import takes 0.4s", "took 8 s of the first run", "~4 ms per label", "(~0.25 s)",
    "2 seconds", "fit 5.4 s, evaluate 0.5 s", "3 minutes", "of the 0.6 s the import costs", "0.2 of the 0.25 s saved",
    "took 8 s", "idle out after 300 s",
])
def test_timings_are_found(text):
    assert TIMING.search(text), text


@pytest.mark.parametrize("text", [
    "the positions of the 1s, the list length", "c_j(x) = 3 s(x)", "N(u; mu, b^2 s^2)", "2 s (1 - exp(-w^2))",
    "N(.; 0, 2 S)", "fit_seconds and predict_seconds", "O(1/n^2)", "10^6 labels", "83 bytes per point",
    "s_k relevant documents", "at most 2 labels", "see benchmarks/cli.py",
])
def test_no_timing_in(text):
    assert not TIMING.search(text), text


def test_comments_and_docstrings_are_scanned_not_code_strings():
    source = ('"""Module: issue 3."""\n'
              'import logging\n'
              'x = 1  # 0.3 s of CPU\n'
              'def f():\n'
              '    """took 2 s."""\n'
              '    logging.info("about 15-20 s here")  # the message a user reads is not a comment\n'
              '    #: 5 ms\n')
    texts = [text for _, text in python_comments(source)]
    assert sum(map(len, (findings(text) for text in texts))) == 4
    assert not any("15-20" in text for text in texts if not text.startswith("#"))
    assert yaml_comments("a: 1  # (issue 16)\n# 2 s of CPU\nurl: http://x/#frag\n") == \
        [(1, "# (issue 16)"), (2, "# 2 s of CPU")]


# ---------------------------------------------------------------------- the package
def test_no_issue_numbers_or_timings_in_comments_and_docstrings():
    hits = []
    for path in package_files():
        relative = path.relative_to(ROOT).as_posix()
        if allowed(relative):
            continue
        source = path.read_text(encoding="utf-8")
        texts = python_comments(source) if path.suffix == ".py" else yaml_comments(source)
        hits += [f"{relative}:{line}: {', '.join(found)}: {text.strip()}"
                 for line, text in texts if (found := findings(text))]
    assert not hits, ("say what and why; timings go to benchmarks/ or the README:\n" + "\n".join(hits))


def test_the_scan_sees_the_package():
    files = package_files()
    assert len(files) > 100 and any(path.name == "calibration.py" for path in files)
