"""mkdocs hook: sections that stay in the README are included into site pages, so each text has one source.

A block of a page::

    <!-- readme: ### The reference work's figures and tables -->
    On GitHub: [the section in the README](../README.md#...).
    <!-- /readme -->

is replaced, on the site, by the README's section whose heading has that level (``###``) and starts with that
text, down to the next heading of the same or a higher level (headings inside fenced code do not count); on
GitHub the block shows its link. Links are rewritten for the site: in included text ``docs/<file>`` becomes
the file beside the page and ``#<anchor>`` the page that has that heading; in any page, a link to
``../README.md#<anchor>`` becomes the site page that holds that README section. Any other relative link of
included text, an anchor no page has, or a marker whose section the README lacks stops the build with a
message naming it: a README edit that renames or moves a section shows up in ``make docs``, not as a page that
silently lost its text.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

MARKER = re.compile(r"^<!--\s*readme:\s*(#{1,6})\s+(.+?)\s*-->[ \t]*\n.*?^<!--\s*/readme\s*-->[ \t]*$",
                    re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"(\]\()([^)\s]+)(\))")

#: the page (docs-relative path) of every heading anchor of the site, filled once per build
_anchor_pages: dict[str, str] = {}


class ReadmeSectionError(Exception):
    """A marker or a link of an included README section that cannot be resolved."""


def anchor(heading: str) -> str:
    """The anchor GitHub (and the site, whose ``toc`` uses ``pymdownx.slugs.slugify(case="lower")``) gives a
    heading: lower case, links reduced to their text, punctuation dropped, spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(markdown: str) -> list[tuple[int, int, str]]:
    """(line index, level, text) of every heading outside fenced code."""
    found, in_fence = [], False
    for index, line in enumerate(markdown.splitlines()):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else HEADING.match(line)
        if match:
            found.append((index, len(match.group(1)), match.group(2)))
    return found


def section(readme: str, level: int, prefix: str) -> str:
    """The README's section under the heading of ``level`` that starts with ``prefix``, heading included."""
    lines = readme.splitlines()
    found = headings(readme)
    for position, (index, heading_level, text) in enumerate(found):
        if heading_level == level and text.startswith(prefix):
            end = next((i for i, lvl, _ in found[position + 1:] if lvl <= level), len(lines))
            return "\n".join(lines[index:end]).rstrip() + "\n"
    raise ReadmeSectionError(f"README.md has no {'#' * level} heading starting with {prefix!r} (included by a "
                             "docs page); update the page's <!-- readme: ... --> marker")


def expand(markdown: str, readme: str) -> str:
    """``markdown`` with every marker replaced by its README section (links not yet rewritten)."""
    return MARKER.sub(lambda m: section(readme, len(m.group(1)), m.group(2)), markdown)


def resolve(link: str, origin: str, page: str) -> str:
    """``link`` of text written in ``origin`` (a path in the repository: ``README.md``, ``docs/cli.md``) as
    ``page`` (a docs-relative path) must write it on the site."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", link):  # http:, https:, mailto:
        return link
    path, _, fragment = link.partition("#")
    if not path and origin != "README.md":
        return link  # an anchor of the page itself
    target = posixpath.normpath(posixpath.join(posixpath.dirname(origin), path)) if path else origin
    here = posixpath.dirname(page) or "."
    if target == "README.md":
        if not fragment:
            return posixpath.relpath("index.md", here)
        owner = _anchor_pages.get(fragment)
        if owner is None:
            raise ReadmeSectionError(f"{origin} links README.md#{fragment}, a heading that no page of the site has "
                                     "(include its README section in a page, or link the page that took it over)")
        return (f"#{fragment}" if owner == page else posixpath.relpath(owner, here) + f"#{fragment}")
    if target.startswith("docs/"):
        return posixpath.relpath(target[len("docs/"):], here) + (f"#{fragment}" if fragment else "")
    if origin == "README.md":
        raise ReadmeSectionError(f"an included README section links {link!r}, which is not under docs/: link "
                                 "files of the site only (name other files in `code`)")
    return link  # a page's own link: mkdocs checks it


def rewrite_links(text: str, origin: str, page: str) -> str:
    """Every link of ``text`` (written in ``origin``) made valid on ``page``."""
    return LINK.sub(lambda m: m.group(1) + resolve(m.group(2), origin, page) + m.group(3), text)


def _readme(config: Any) -> str:
    return (Path(config["config_file_path"]).parent / "README.md").read_text(encoding="utf-8")


def on_files(files: Any, config: Any) -> Any:
    """Record which page holds each heading anchor (the README's included sections counted on their page)."""
    readme = _readme(config)
    _anchor_pages.clear()
    for file in files.documentation_pages():
        text = expand(Path(file.abs_src_path).read_text(encoding="utf-8"), readme)
        for _, _, heading in headings(text):
            _anchor_pages.setdefault(anchor(heading), file.src_uri)
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The page's README blocks replaced by their sections, and every link made valid on the site."""
    readme, page_path = _readme(config), page.file.src_uri
    parts, last = [], 0
    for match in MARKER.finditer(markdown):
        parts.append(rewrite_links(markdown[last:match.start()], f"docs/{page_path}", page_path))
        text = section(readme, len(match.group(1)), match.group(2))
        parts.append(rewrite_links(text, "README.md", page_path))
        last = match.end()
    parts.append(rewrite_links(markdown[last:], f"docs/{page_path}", page_path))
    return "".join(parts)
