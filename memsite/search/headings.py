"""Headings of a markdown text as the site renders them: where each one is, found with
markdown-it-py so that a ``#`` line inside a code fence is never a heading, and the anchor
MkDocs' ``toc`` extension gives it. Chunks start at these headings and link to these anchors.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache


def toc_slug(text: str) -> str:
    """The anchor MkDocs' ``toc`` extension gives a heading (``markdown.extensions.toc.slugify``).

    Accents are folded to ASCII, anything but word characters, spaces and ``-`` is dropped,
    and runs of spaces or dashes become one ``-``. ``unique_anchor`` adds ``_1``, ``_2``.
    """
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


_COUNTED = re.compile(r"^(.*)_([0-9]+)$")


def unique_anchor(anchor: str, taken: set[str], skips: dict[str, int] | None = None) -> str:
    """Make ``anchor`` unique within a page the way MkDocs does (``x``, ``x_1``, ``x_2``):
    the first ``base_n`` not taken, ``n`` counted on from the anchor's own ``_n`` or from 1.

    ``skips``, kept with ``taken`` for one page, makes a run of duplicates linear: counting
    from 1 for each, 40,000 ``## h`` headings in a note tried 800 million anchors and every
    reader of the tree stalled for a minute. It maps a taken ``base_n`` to a count ``m`` with
    ``base_n`` .. ``base_(m-1)`` all taken, so each search jumps past runs found before (with
    path compression, as in union-find). The anchors are the same as counting one by one:
    ``path#anchor`` citations people stored keep their meaning.
    """
    if anchor in taken or not anchor:
        match = _COUNTED.match(anchor)
        base, count = (match.group(1), int(match.group(2))) if match else (anchor, 0)
        count += 1
        passed = []
        while (candidate := f"{base}_{count}") in taken:
            passed.append(candidate)
            count = skips.get(candidate, count + 1) if skips is not None else count + 1
        anchor = candidate
        if skips is not None:
            skips.update(dict.fromkeys(passed, count))
    taken.add(anchor)
    return anchor


@dataclass(frozen=True)
class Heading:
    """A top-level heading: its line span, level, plain text and MkDocs anchor."""

    start: int  # 0-based first line
    end: int  # 0-based line after the heading (2 lines for a setext heading)
    level: int
    text: str
    anchor: str


@cache
def _parser():  # type: ignore[no-untyped-def]
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    # Block structure only: inline parsing of every paragraph is most of markdown-it's time,
    # and only heading text is needed (parsed on its own below).
    return MarkdownIt("commonmark").use(front_matter_plugin).disable("inline")


@cache
def _inline_parser():  # type: ignore[no-untyped-def]
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


# markdown-it reads a line of ``[`` at about 14 µs a character: a 900 KB heading took 13 s
# to chunk, on every index build of every teammate. Past this, only the heading's start is
# parsed (its anchor then differs from the site's, for a heading no one can link to anyway).
HEADING_PARSED = 4_000


def inline_text(content: str) -> str:
    """The plain text of a heading's inline markdown (``**b** `c``` gives ``b c``, a link its
    text, raw HTML nothing), of its first HEADING_PARSED characters."""
    parts = []
    for token in _inline_parser().parseInline(content[:HEADING_PARSED]):
        parts += _plain_parts(token)
    return "".join(parts).strip()


def _plain_parts(token) -> list[str]:  # type: ignore[no-untyped-def]
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return parts


def headings(text: str) -> list[Heading]:
    """Every heading of a markdown text in order, with its line span and MkDocs anchor.

    Only top-level headings (not inside a blockquote or list) can start a chunk, but every
    heading takes an anchor, as on the rendered page.
    """
    tokens = _parser().parse(text)
    found = []
    taken: set[str] = set()
    skips: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        words = inline_text(tokens[index + 1].content)
        anchor = unique_anchor(toc_slug(words), taken, skips)
        if token.level == 0:
            found.append(Heading(token.map[0], token.map[1], int(token.tag[1]), words, anchor))
    return found
