"""The documentation site's sources: every page is in the navigation, and the README sections the pages include
(docs/hooks/readme_sections.py) exist, with links that resolve on the site. `make docs` builds the site
itself (mkdocs build --strict); these checks run without mkdocs."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def load_hook():
    spec = importlib.util.spec_from_file_location("readme_sections", DOCS / "hooks" / "readme_sections.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hook = load_hook()
README = """# Title

## Quick start

Text with [a page](docs/tutorial.md#ties) and ![a figure](docs/argv.png).

```bash
# not a heading
```

### Details

See [the rule](#the-rule-strategypooled).

## The rule: `strategy=pooled`

Rule text.
"""


def nav_pages() -> set[str]:
    """The pages mkdocs.yml's nav names (read as text: the file holds a Python tag for the slug function)."""
    return set(re.findall(r":\s*([\w./-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE))


def test_every_page_is_in_the_navigation():
    pages = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")}
    assert pages == nav_pages()


def test_section_runs_to_the_next_heading_of_its_level():
    text = hook.section(README, 2, "Quick start")
    assert text.startswith("## Quick start\n") and "### Details" in text and "# not a heading" in text
    assert "Rule text" not in text
    assert hook.section(README, 3, "Details").strip().endswith("(#the-rule-strategypooled).")


def test_a_missing_section_stops_the_build():
    with pytest.raises(hook.ReadmeSectionError, match="no ### heading starting with 'Nothing'"):
        hook.section(README, 3, "Nothing")


def test_links_are_rewritten_for_the_site(monkeypatch):
    monkeypatch.setattr(hook, "_anchor_pages", {"the-rule-strategypooled": "studies.md", "ties": "tutorial.md"})
    text = hook.section(README, 2, "Quick start")
    rewritten = hook.rewrite_links(text, "README.md", "cli.md")
    assert "](tutorial.md#ties)" in rewritten and "](argv.png)" in rewritten
    assert "](studies.md#the-rule-strategypooled)" in rewritten
    on_its_page = hook.rewrite_links("[x](#the-rule-strategypooled)", "README.md", "studies.md")
    assert on_its_page == "[x](#the-rule-strategypooled)"
    # a page's link to a README section goes to the page that includes it; its own anchors stay
    page_text = "[rule](../README.md#the-rule-strategypooled), [here](#top), [api](api.md)"
    assert hook.rewrite_links(page_text, "docs/cli.md", "cli.md") == \
        "[rule](studies.md#the-rule-strategypooled), [here](#top), [api](api.md)"


def test_unresolvable_links_stop_the_build(monkeypatch):
    monkeypatch.setattr(hook, "_anchor_pages", {})
    with pytest.raises(hook.ReadmeSectionError, match="no page of the site"):
        hook.rewrite_links("[x](#nowhere)", "README.md", "cli.md")
    with pytest.raises(hook.ReadmeSectionError, match="not under docs/"):
        hook.rewrite_links("[x](plugins/README.md)", "README.md", "cli.md")


def test_the_pages_readme_blocks_resolve_against_the_readme():
    """Every block a page includes names a section the README has (what `make docs` needs), and every README
    section a page links to is on some page."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = []
    anchors = set()
    for path in sorted(DOCS.rglob("*.md")):
        page = path.read_text(encoding="utf-8")
        for match in hook.MARKER.finditer(page):
            blocks.append(path.name)
            hook.section(readme, len(match.group(1)), match.group(2))  # raises when it is gone
        anchors |= {hook.anchor(text) for _, _, text in hook.headings(hook.expand(page, readme))}
    assert len(blocks) >= 4
    linked = set()
    for path in sorted(DOCS.rglob("*.md")):
        linked |= set(re.findall(r"\(\.\./README\.md#([\w-]+)\)", path.read_text(encoding="utf-8")))
    assert linked and linked <= anchors, sorted(linked - anchors)
