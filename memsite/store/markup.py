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


# -- markdown structure as the renderer reads it (the site's escaping and check share it) ---
_CONTAINER = re.compile(r"(?:[ \t>]|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))*")
_ITEM = re.compile(r"[-*+]|\d{1,9}[.)]")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_BACKTICKS = re.compile(r"`+")


def closed_fences(lines: list[str]) -> list[tuple[int, int]]:
    """The code blocks a renderer shows, as (opening line, closing line): a fence that never
    closes is not one (a renderer shows its lines as prose, raw HTML included)."""
    blocks: list[tuple[int, int]] = []
    unclosable: dict[str, int] = {}  # fence char -> shortest fence found to never close
    index = 0
    while index < len(lines):
        opened = fence_open(lines[index])
        if opened and opened[1] < unclosable.get(opened[0], opened[1] + 1):
            closer = _closer_index(lines, index, opened)
            if closer is not None:
                blocks.append((index, closer))
                index = closer + 1
                continue
            unclosable[opened[0]] = opened[1]  # a longer one of the same char cannot close
        index += 1
    return blocks


def outside_closed_fences(lines: list[str], most: int | None = None) -> list[tuple[int, bool]]:
    """Like :func:`outside_fences`, but only :func:`closed_fences` are code (the first
    ``most`` of them, with ``most``)."""
    inside = [False] * len(lines)
    for start, end in closed_fences(lines)[:most]:
        inside[start : end + 1] = [True] * (end + 1 - start)
    return [(index, not code) for index, code in enumerate(inside)]


def container_prefix(line: str) -> str:
    """The indentation and list/quote markers that open a line: how deep it nests."""
    match = _CONTAINER.match(line)
    return match.group(0) if match else ""


def _block(line: str) -> str:
    """What kind of block a line opens that the renderer keeps apart: a list item, a table
    row, a heading; "" for a line that continues a paragraph."""
    prefix = container_prefix(line)
    rest = line[len(prefix) :]
    if heading_level(rest):
        return "heading"
    if _ITEM.search(prefix):
        return "item"
    return "row" if rest.startswith("|") else ""


def paragraphs(lines: list[str], prose: list[int]) -> list[list[int]]:
    """The non-blank prose lines (indexes) grouped as Python-Markdown joins them into one
    paragraph: a blank line or a heading ends one; a list item or table row starts a new one
    inside a list or table, but joins a paragraph it follows (no blank line between)."""
    groups: list[list[int]] = []
    kinds: list[str] = []
    previous = -2
    for index in prose:
        line = lines[index]
        if not line.strip():
            continue
        kind = _block(line)
        if (
            index != previous + 1
            or not groups
            or "heading" in (kind, kinds[-1])
            or (kind and kind == kinds[-1])
        ):
            groups.append([])
            kinds.append(kind)
        groups[-1].append(index)
        previous = index
    return groups


def is_heading(lines: list[str], index: int) -> bool:
    """An ATX heading, inside any container, or the underline of a setext heading."""
    line = lines[index]
    if heading_level(line[len(container_prefix(line)) :]):
        return True
    return bool(index and _SETEXT.match(line) and lines[index - 1].strip())


def code_spans(line: str) -> list[tuple[int, int]]:
    """The code spans of one line as Python-Markdown reads them: a run of backticks not
    preceded by a backslash opens one, the next run of the same length closes it (linear,
    where a regex doing the same is cubic in a run of backticks)."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    by_length: dict[int, list[int]] = {}
    for number, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(number)
    seen = dict.fromkeys(by_length, 0)
    spans = []
    number = 0
    while number < len(runs):
        start, end = runs[number]
        length = end - start
        if line[start - 1 : start] != "\\":
            same, at = by_length[length], seen[length]
            while at < len(same) and same[at] <= number:
                at += 1
            seen[length] = at
            if at < len(same):
                spans.append((start, runs[same[at]][1]))
                number = same[at] + 1
                continue
        number += 1
    return spans


def outside_spans(line: str) -> list[tuple[int, int]]:
    """The stretches of a line outside its code spans."""
    gaps, last = [], 0
    for start, end in code_spans(line):
        gaps.append((last, start))
        last = end
    gaps.append((last, len(line)))
    return gaps


# -- what the site's markdown renderer is given at most (issue 15.10) --------------------------
# Python-Markdown recurses once per level of nesting (a RecursionError near 250 list levels)
# and is quadratic in the size of one paragraph (50,000 "[" then 50,000 "]": minutes). Memory
# is never trusted, so the site bounds what reaches the renderer, and ``memsite check`` warns
# about the texts it had to bound, naming the entry: both read a text with the functions
# below, so they always agree.
MAX_NESTING = 48  # columns of indentation and list/quote markers before a line's text
MAX_PARAGRAPH = 8_192  # characters in one paragraph; a longer one is shown as plain text
MAX_EMPHASIS = 256  # "*" and "_" that can open or close emphasis, in one paragraph
MAX_HEADINGS = 200  # headings in one text; later ones are shown as text
MAX_FENCES = 200  # fenced code blocks in one text; later fences are shown as text
# An entry body longer than this is folded into a <details> block on day pages and trimmed to
# it in the site's search index (the markdown keeps it whole); issue 12, docs/site.md.
LONG_BODY_CHARS = 4_000

# "*" anywhere, "_" unless inside a word (Python-Markdown never reads that one as emphasis)
_EMPHASIS = re.compile(r"\*|(?<!\w)_|_(?!\w)")


def nesting(line: str) -> int:
    """How many columns of nesting a line opens with (tabs count four)."""
    return len(container_prefix(line).expandtabs(4))


def emphasis_marks(line: str) -> list[int]:
    """Offsets of the ``*`` and ``_`` after the container prefix and outside code that can
    open or close emphasis."""
    text = len(container_prefix(line))
    return [
        found.start()
        for start, end in outside_spans(line)
        for found in _EMPHASIS.finditer(line, max(start, text), max(end, text))
    ]


def prose(text: str) -> str:
    """Paragraph text of a section, on one line: no headings or code fences."""
    lines = split_lines(text)
    return " ".join(
        lines[i].strip()
        for i, outside in outside_fences(lines)
        if outside and lines[i].strip() and not heading_level(lines[i])
    )


def last_line(lines: list[str], start: int, stop: int) -> int:
    """1-based last non-blank line of ``lines[start:stop]`` (the start line at least)."""
    return without_trailing_blanks(lines, start + 1, stop)


def without_trailing_blanks(lines: list[str], start: int, stop: int) -> int:
    """``stop`` moved back over the blank lines that end ``lines[start:stop]`` (never below
    ``start``)."""
    while stop > start and not lines[stop - 1].strip():
        stop -= 1
    return stop


def span_text(lines: list[str], start: int, stop: int) -> str:
    """``lines[start:stop]`` joined, without the blank lines that end them."""
    return "\n".join(lines[start : last_line(lines, start, stop)])


def paragraph_size(lines: list[str], group: list[int]) -> int:
    return sum(len(lines[index]) + 1 for index in group) - 1


def limit_problems(text: str) -> list[str]:
    """What in ``text`` is beyond the site's bounds (one line each, the first of a kind)."""
    lines = split_lines(normalize_newlines(text))  # as the site reads it
    fences = len(closed_fences(lines))
    prose = [index for index, outside in outside_closed_fences(lines, MAX_FENCES) if outside]
    found: dict[str, str] = {}
    if fences > MAX_FENCES:
        found["fences"] = (
            f"{fences:,} code blocks (the site shows those beyond {MAX_FENCES} as text)"
        )
    headings = 0
    for group in paragraphs(lines, prose):
        size = paragraph_size(lines, group)
        if size > MAX_PARAGRAPH:
            found.setdefault(
                "paragraph",
                f"a paragraph of {size:,} characters at line {group[0] + 1} (the site shows "
                f"paragraphs over {MAX_PARAGRAPH:,} characters as plain text)",
            )
            continue
        deep = next((i for i in group if nesting(lines[i]) > MAX_NESTING), None)
        if deep is not None:
            found.setdefault(
                "nesting",
                f"line {deep + 1} nests {nesting(lines[deep]):,} columns deep (the site "
                f"flattens nesting beyond {MAX_NESTING})",
            )
        headings += sum(1 for index in group if is_heading(lines, index))
        marks = sum(len(emphasis_marks(lines[index])) for index in group)
        if marks > MAX_EMPHASIS:
            found.setdefault(
                "emphasis",
                f"{marks:,} emphasis marks in the paragraph at line {group[0] + 1} (the site "
                f"shows those beyond {MAX_EMPHASIS} as plain * and _)",
            )
    if headings > MAX_HEADINGS:
        found["headings"] = (
            f"{headings:,} headings (the site shows those beyond {MAX_HEADINGS} as text)"
        )
    return list(found.values())
