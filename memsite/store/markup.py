"""Markdown line structure: fences, headings, and the reversible escaping of entry text.

The reader finds entry boundaries line by line, the way a CommonMark renderer would see them
(a ``#`` line inside a code fence is not a heading). Text written into an entry is escaped so
that it can never open, close or swallow an entry: heading-like, setext-underline-like and
field-like lines get a leading backslash (which markdown renders as nothing), and a code
fence that is never closed has its opener escaped too. The reader removes exactly one
backslash again, so ``unescape(escape(text)) == text`` for every text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+|$)")
# A field line, every shape the reader accepts: any list marker (``-``, ``*``, ``+``) and the
# colon inside or after the bold (``**Why:**``, ``**Why**:``). The reader (``format``) and the
# escaping below share this one definition, so that no text written into an entry can ever be
# read back as a field (issue 15.2).
FIELD_SHAPE = r"[-*+] \*\*([^*\n]+?)(?::\*\*|\*\*:)"
# Line shapes that markdown (or our own reader) would treat as structure.
_STRUCTURE = (
    r"#{1,6}(?:[ \t]|$)"  # an ATX heading
    r"|(?:=+|-+)[ \t]*$"  # a setext underline, which turns the line above into a heading
    r"|" + FIELD_SHAPE + r"|`{3,}|~{3,}"  # a field line in every accepted shape; a code fence
    r"|<!-- id: "  # an entry's id trailer
)
_ESCAPED = re.compile(r"^( {0,3})(\\*)(?=" + _STRUCTURE + ")")
_TO_UNESCAPE = re.compile(r"^( {0,3})\\(\\*)(?=" + _STRUCTURE + ")")


def split_lines(text: str) -> list[str]:
    """Split on newlines only (``str.splitlines`` would also split on U+2028, \\x0c, ...)."""
    return text.split("\n")


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def fence_open(line: str) -> tuple[str, int] | None:
    """The fence character and length if ``line`` opens a code fence."""
    match = _FENCE.match(line)
    if not match:
        return None
    marker, info = match.group(2), match.group(3)
    if marker[0] == "`" and "`" in info:
        return None
    return marker[0], len(marker)


def fence_closes(line: str, fence: tuple[str, int]) -> bool:
    match = _FENCE.match(line)
    if not match:
        return False
    marker, rest = match.group(2), match.group(3)
    return marker[0] == fence[0] and len(marker) >= fence[1] and not rest.strip(" \t")


def heading_level(line: str) -> int:
    """The ATX heading level of ``line`` (0 when it is not a heading)."""
    match = _HEADING.match(line)
    return len(match.group(1)) if match else 0


def outside_fences(lines: list[str]) -> Iterator[tuple[int, bool]]:
    """Yield ``(index, is_outside_any_fence)`` for every line; unclosed fences run to the end."""
    fence: tuple[str, int] | None = None
    for index, line in enumerate(lines):
        if fence is not None:
            if fence_closes(line, fence):
                fence = None
            yield index, False
            continue
        opened = fence_open(line)
        if opened:
            fence = opened
            yield index, False
            continue
        yield index, True


def _closer_index(lines: list[str], start: int, fence: tuple[str, int]) -> int | None:
    for index in range(start + 1, len(lines)):
        if fence_closes(lines[index], fence):
            return index
    return None


def escape_lines(lines: list[str]) -> list[str]:
    """Escape structure-like lines outside closed code fences (see module docstring)."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        opened = fence_open(line)
        if opened:
            closer = _closer_index(lines, index, opened)
            if closer is not None:
                out.extend(lines[index : closer + 1])
                index = closer + 1
                continue
        out.append(_ESCAPED.sub(r"\1\\\2", line, count=1))
        index += 1
    return out


def unescape_lines(lines: list[str]) -> list[str]:
    """Undo :func:`escape_lines`: drop one backslash from escaped lines outside fences."""
    out = list(lines)
    for index, outside in outside_fences(lines):
        if outside:
            out[index] = _TO_UNESCAPE.sub(r"\1\2", lines[index], count=1)
    return out


_CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*$")
_ESCAPED_TAIL = re.compile(r"([ \t]\\*)(#+)$")


def escape_heading_text(text: str) -> str:
    """Keep a trailing ``#`` run from being read as an ATX closing sequence."""
    return _ESCAPED_TAIL.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


def heading_text(line: str) -> str:
    """The text of an ATX heading line, without markers or closing sequence."""
    text = _HEADING.sub("", line, count=1)
    text = _CLOSING_HASHES.sub("", text) if not re.fullmatch(r"[ \t]*#+[ \t]*", text) else ""
    text = text.strip(" \t")
    return re.sub(r"([ \t])\\(\\*#+)$", r"\1\2", text)


def slugify(text: str, limit: int = 60) -> str:
    """A lower-case, dash-separated slug that keeps letters of every script."""
    text = unicodedata.normalize("NFKC", text).lower()
    slug = re.sub(r"[^\w]+|_+", "-", text).strip("-")
    if len(slug) > limit:
        slug = slug[:limit].rsplit("-", 1)[0] if "-" in slug[:limit] else slug[:limit]
    return slug or "entry"
