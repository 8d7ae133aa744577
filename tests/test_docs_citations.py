"""Citations of docs/theory.md resolve: every ``docs/theory.md#<anchor>`` written in the package, the plugins,
the tests, the README or the docs names a heading of docs/theory.md (GitHub's anchor of it), code cites the
page only by section, and nothing cites the copy outside the project (``../shared/docs``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THEORY = ROOT / "docs" / "theory.md"
#: where citations are looked for, and the text files read there
SCANNED = ("xmlthresh", "plugins", "tests", "docs", "README.md")
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".ini"}
#: files whose citations must name a section (not just the page)
CODE_SUFFIXES = {".py", ".yaml", ".yml"}
#: this file names the page and the shared copy in order to check them
SELF = Path(__file__).resolve()

PAGE = "theory" + ".md"  # spelled in two parts so that this file's own patterns are not citations
CITATION = re.compile(r"(?:docs/)?" + re.escape(PAGE) + r"#([\w-]+)")
ANY_MENTION = re.compile(r"(\S*)" + re.escape(PAGE) + r"(#[\w-]+)?")
SHARED = re.compile(r"shared/docs\b")
#: a section number of some copy of the theory ("theory section 2", "theory sec. 2"), not a section of the page
NUMBERED = re.compile(r"\btheory\s+(?:section|sec\.?)\s*\d", re.IGNORECASE)
LOCAL_LINK = re.compile(r"\]\(#([\w-]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped (letters, digits, ``_``, ``-`` and
    spaces stay), spaces turned into hyphens; inline code and emphasis markers count as punctuation."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())  # a link keeps its text
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Anchors of every heading outside fenced code; a repeated heading gets ``-1``, ``-2``, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    in_fence = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else HEADING.match(line)
        if match is None:
            continue
        anchor = github_anchor(match.group(2))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def scanned_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        files += [f for f in candidates if f.is_file() and f.suffix in TEXT_SUFFIXES
                  and not any(part in {"__pycache__", "build", "dist"} or part.endswith(".egg-info")
                              for part in f.relative_to(ROOT).parts)]
    return files


def citations() -> list[tuple[str, int, str]]:
    """(file, line, anchor) of every section citation of docs/theory.md."""
    found = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            found += [(str(path.relative_to(ROOT)), number, m.group(1)) for m in CITATION.finditer(line)]
    return found


# ---------------------------------------------------------------------- the helpers themselves
@pytest.mark.parametrize("heading, anchor", [
    ("Fixed points of the map V", "fixed-points-of-the-map-v"),
    ("F-macro and macro-F", "f-macro-and-macro-f"),
    ("Theory of xmlthresh: choosing thresholds for F-macro", "theory-of-xmlthresh-choosing-thresholds-for-f-macro"),
    ("The `domain` strategy, (exact)", "the-domain-strategy-exact"),
    ("Shape of F_beta", "shape-of-f_beta"),
    ("See [the tests](tests/x.py)", "see-the-tests"),
])
def test_github_anchor(heading, anchor):
    assert github_anchor(heading) == anchor


def test_anchors_skip_code_and_number_repeats():
    markdown = "# Top\n\n## Notes\n\n```bash\n# not a heading\n```\n\n### Notes\n\n    # indented code is no heading\n"
    assert anchors(markdown) == {"top", "notes", "notes-1"}


def test_citation_pattern():
    cited = "see docs/" + PAGE + "#error-region and " + PAGE + "#ties; not " + PAGE + " alone"
    assert [m.group(1) for m in CITATION.finditer(cited)] == ["error-region", "ties"]
    assert NUMBERED.search("its linearisation (theory section 2)") and NUMBERED.search("Theory sec. 6")
    assert not NUMBERED.search("the theory of section 2") and not NUMBERED.search("reference work, section 1.3")


# ---------------------------------------------------------------------- the citations
def test_theory_page_exists_with_sections():
    assert THEORY.is_file()
    assert len(anchors(THEORY.read_text(encoding="utf-8"))) >= 20


def test_every_cited_section_exists():
    known = anchors(THEORY.read_text(encoding="utf-8"))
    cited = citations()
    assert len(cited) >= 16, "the code cites the theory page by section; the scan found too few citations"
    missing = [f"{file}:{line}: #{anchor}" for file, line, anchor in cited if anchor not in known]
    assert not missing, "citations of docs/theory.md without a matching heading:\n" + "\n".join(missing)


def test_theory_page_links_to_its_own_headings():
    text = THEORY.read_text(encoding="utf-8")
    known = anchors(text)
    missing = sorted(set(LOCAL_LINK.findall(text)) - known)
    assert not missing, f"links inside docs/theory.md to missing headings: {missing}"


def test_code_cites_the_page_by_path_and_section():
    """A citation in code says where the page is and which section it means: ``docs/theory.md#<anchor>``, not
    a bare page name or a section number of some other copy."""
    loose = []
    for path in scanned_files():
        if path.suffix not in CODE_SUFFIXES or path == SELF:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            loose += [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for match in ANY_MENTION.finditer(line)
                      if not match.group(1).endswith("docs/") or match.group(2) is None]
            if NUMBERED.search(line):
                loose.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not loose, "cite docs/theory.md#<section>:\n" + "\n".join(loose)


def test_nothing_cites_the_shared_copy():
    """The theory page outside the checkout (``../shared/docs``) is not part of the project: no file points at it."""
    hits = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if SHARED.search(line) and path != SELF:
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not hits, "cite docs/theory.md instead:\n" + "\n".join(hits)
