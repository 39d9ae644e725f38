"""The links of the site Zensical built, checked as Zensical checks them (issue 38), in a
fraction of its time.

Zensical validates links with a pure-Python scanner that reads every byte of every page one
at a time: at a generated year (455 pages, 6.3 MB of markdown) that is about 5 of a cold
build's 17 CPU seconds. ``build --engine zensical`` turns it off (``validation: false``, which
leaves the site it writes the same to the byte) and checks the same links here, so that a
broken one still warns, and fails ``--strict``: each relative link to a markdown page
(``[text](page.md)``, ``[id]: page.md``) and each fragment of one (``page.md#id``, ``#id``),
outside code, against the pages of the export and the ids of the built page it lands on.
A link is named only when the built page really holds it (``href="page.html#id"``), so text
that merely looks like a link never fails a build. The warnings read as Zensical's own
(``notes/a.md:3:10: page does not exist``, ``... anchor does not exist``): line and column of
the target, or of its fragment.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from ...store.markup import outside_fences, outside_spans, split_lines

MISSING_PAGE = "page does not exist"
MISSING_ANCHOR = "anchor does not exist"


@dataclass(frozen=True)
class Link:
    """A link of a markdown page to a page of the site: where its target starts (line and
    column from 1) and the target as written."""

    page: str
    line: int
    column: int
    target: str


def page_links(page: str, markdown: str) -> Iterator[Link]:
    """The links of ``page`` (its path in the docs folder) that Zensical validates: relative
    targets naming a markdown page, a fragment, or both, outside fences and code spans."""
    lines = split_lines(markdown)
    for index, outside in outside_fences(lines):
        line = lines[index]
        if not outside or ("](" not in line and "]:" not in line):
            continue
        gaps = outside_spans(line)
        found = [*_INLINE.finditer(line), *_DEFINITION.finditer(line)]
        for match in sorted(found, key=lambda m: m.start(1)):
            start, target = match.start(1), match.group(1)
            path = target.partition("#")[0]
            if _SCHEME.match(target) or target.startswith("/"):
                continue
            if (path and not path.endswith(".md")) or not any(a <= start < b for a, b in gaps):
                continue
            yield Link(page, index + 1, start + 1, target)


# the target of an inline link or image, and of a reference definition (``[id]: target``)
_INLINE = re.compile(r"\]\([ \t]*<?([^)\s>]+)")
_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def check(docs: Path, site: Path) -> list[str]:
    """The broken links of the site built in ``site`` from the markdown pages in ``docs``,
    one warning each, page by page."""
    pages = {path.relative_to(docs).as_posix(): path for path in docs.rglob("*.md")}
    built = _Built(site)
    warnings: list[str] = []
    for page in sorted(pages):
        markdown = pages[page].read_text("utf-8")
        if "](" not in markdown and "]:" not in markdown:
            continue
        for link in page_links(page, markdown):
            problem = _problem(link, pages, built)
            if problem is not None:
                warnings.append(problem)
    return warnings


def _problem(link: Link, pages: dict[str, Path], built: _Built) -> str | None:
    path, _, fragment = link.target.partition("#")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(link.page), unquote(path)))
    target = target if path else link.page
    if target not in pages:
        what, column = MISSING_PAGE, link.column
    elif fragment and unquote(fragment) not in built.ids(target):
        what, column = MISSING_ANCHOR, link.column + len(path) + 1
    else:
        return None
    href = f"{path[:-3]}.html" if path else ""
    href = f"{href}#{fragment}" if fragment else href
    if html.escape(href, quote=False) not in built.hrefs(link.page):
        return None  # not a link once rendered (text that only looks like one)
    return f"{link.page}:{link.line}:{column}: {what}"


class _Built:
    """The built pages, each read when asked: the ids of its content and its ``href`` values
    (as written), kept rather than its text."""

    ID = re.compile(r'\bid="([^"]*)"')
    HREF = re.compile(r'\bhref="([^"]*)"')

    def __init__(self, site: Path) -> None:
        self.site = site
        self.anchors: dict[str, set[str]] = {}
        self.links: dict[str, set[str]] = {}

    def ids(self, page: str) -> set[str]:
        if page not in self.anchors:
            text = self._text(page)
            start = text.find("<article")
            content = text[start : text.find("</article>", start)] if start >= 0 else text
            self.anchors[page] = {html.unescape(found) for found in self.ID.findall(content)}
        return self.anchors[page]

    def hrefs(self, page: str) -> set[str]:
        if page not in self.links:
            self.links[page] = set(self.HREF.findall(self._text(page)))
        return self.links[page]

    def _text(self, page: str) -> str:
        path = self.site / f"{page[:-3]}.html"
        path = path if path.is_file() else self.site / page[:-3] / "index.html"
        return path.read_text("utf-8") if path.is_file() else ""
