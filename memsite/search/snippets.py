"""Where a snippet may be cut in an entry's text (issue 25.8), and the snippet of a text
without query words.

A snippet is a window on one line of an entry's text, which holds its own markup: field
labels in bold (``**Tags:**``), code spans, flattened code blocks. A cut inside one left
``**Paths`` at a snippet's end, or ``** claude`` at its start, which every reader then
shows as stray asterisks or as bold running on.

Pure text, below both rooms that cut a snippet: the index's highlighter, which picks the
fragments around the query's words when it finds a hit, and the payloads that show one
(``payloads/listing.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..store.markup import code_spans, outside_spans

SNIPPET_CHARS = 160
SHORT_MARKUP = 40  # markup at most this long is kept whole or left out whole at a cut
NEAREST_SPACE = 30  # how far a cut moves to reach a space rather than split a word
_BOLD = re.compile(r"\*\*(?=\S)(?:(?!\*\*).)*?\S\*\*")
_BULLET = re.compile(r"^\s*[-*+]\s+", re.MULTILINE)
# where a sentence (or a field, ``**Why:** ...``) starts on a flattened line
_SENTENCE = re.compile(r"(?:(?<=[.!?:;])\s+|\s+(?=\*\*[^*\s][^*]*:\*\*)|(?<=\s)(?=Result:))")


def flat(text: str) -> str:
    """``text`` on one line, without list bullets."""
    return " ".join(_BULLET.sub("", text).split())


def plain(text: str) -> str:
    """``text`` on one line without bullets, cut at a word to :data:`SNIPPET_CHARS`."""
    one_line = flat(text)
    if len(one_line) <= SNIPPET_CHARS:
        return one_line
    return clip(one_line, 0, SNIPPET_CHARS) + " …"


def clip(text: str, start: int, end: int, marks: Sequence[tuple[int, int]] = ()) -> str:
    """``text[start:end]`` cut at spaces and outside the text's own markup, with the words
    at ``marks`` (offsets into ``text``) in ``**bold**``.

    A cut inside short markup takes it whole at the start (a label with its value) and leaves
    it out at the end (a label without one), unless a mark is inside; inside longer markup
    (a code block flattened to one line) the cut stays and the markup's delimiter that lost
    its partner is dropped, so what is shown is its text.
    """
    spans = markup_spans(text)
    start = _sentence_start(text, start, end, spans)
    dropped: set[tuple[int, int]] = set()
    start, end = _outside(text, start, end, spans, marks, dropped)
    start, end = _at_space(text, start, -1), _at_space(text, end, 1)
    start, end = _outside(text, start, end, spans, marks, dropped)
    for first, last, _, _ in spans:
        if start < first < end and not text[last:end].strip() and text[first:last].endswith(":**"):
            end = first  # a field label whose value was cut off
    bold = [(first, last) for first, last, opener, _ in spans if text[first] == "*"]
    shown, at = [], start
    for mark_start, mark_end in sorted(marks):
        if mark_start < at or mark_end > end:
            continue
        if any(first <= mark_start and mark_end <= last for first, last in bold):
            continue  # already bold: a label's own word
        shown += [_without(text, at, mark_start, dropped), "**"]
        shown += [_without(text, mark_start, mark_end, dropped), "**"]
        at = mark_end
    shown.append(_without(text, at, end, dropped))
    return " ".join("".join(shown).split())


def _sentence_start(
    text: str, start: int, end: int, spans: Sequence[tuple[int, int, int, int]]
) -> int:
    """``start`` moved back to where its sentence (or field) starts when the window up to
    ``end`` still holds :data:`SNIPPET_CHARS`: a snippet read "floats lose cents" without the
    "**Why:**" it stood under (issue 39.5)."""
    if start <= 0:
        return 0
    if any(m.end() == start for m in _SENTENCE.finditer(text, max(0, start - 2), start + 1)):
        return start  # it starts one already (a field's label): nothing to take back
    if any(first < start < last and last - first > SHORT_MARKUP for first, last, _, _ in spans):
        return start  # inside a long code span: its own text, not a sentence of the entry
    lowest = max(0, end - SNIPPET_CHARS)
    found = [m.end() for m in _SENTENCE.finditer(text, lowest, start + 1) if m.end() <= start]
    if lowest == 0:
        found.append(0)  # the text's own start is a sentence's
    return max(found) if found else start


def _outside(
    text: str,
    start: int,
    end: int,
    spans: list[tuple[int, int, int, int]],
    marks: Sequence[tuple[int, int]],
    dropped: set[tuple[int, int]],
) -> tuple[int, int]:
    """``start`` and ``end`` moved out of the short markup they fall in; the delimiters of
    the long markup they fall in added to ``dropped``."""
    for first, last, opener, closer in spans:
        if first < start < last:
            if last - first <= SHORT_MARKUP:
                start = first
            else:
                dropped.add((last - closer, last))
        if first < end < last:
            marked = any(first <= at < last for at, _ in marks)
            if last - first > SHORT_MARKUP:
                dropped.add((first, first + opener))
            elif marked or not text[start:first].strip():
                end = last
            else:
                end = first
    return start, end


def markup_spans(text: str) -> list[tuple[int, int, int, int]]:
    """The inline markup of one line: ``(start, end, opener length, closer length)`` of each
    code span (flattened code blocks too) and of each ``**bold**`` outside them."""
    spans = []
    for first, last in code_spans(text):
        ticks = len(text[first:last]) - len(text[first:last].lstrip("`"))
        spans.append((first, last, ticks, ticks))
    for gap_start, gap_end in outside_spans(text):
        for found in _BOLD.finditer(text, gap_start, gap_end):
            spans.append((found.start(), found.end(), 2, 2))
    return sorted(spans)


def _at_space(text: str, cut: int, way: int) -> int:
    """``cut`` moved to a space within :data:`NEAREST_SPACE`: back for a start (``way`` -1),
    on for an end (1), else the other way (a long id); a cut at a space or an end stays."""
    if cut <= 0 or cut >= len(text) or text[cut - 1].isspace() or text[cut].isspace():
        return cut
    before = text.rfind(" ", max(0, cut - NEAREST_SPACE), cut)
    after = text.find(" ", cut, cut + NEAREST_SPACE)
    for space in (before, after) if way < 0 else (after, before):
        if space >= 0:
            return space + 1 if space < cut else space
    return cut


def _without(text: str, start: int, end: int, dropped: set[tuple[int, int]]) -> str:
    kept = [
        char
        for at, char in enumerate(text[start:end], start)
        if not any(first <= at < last for first, last in dropped)
    ]
    return "".join(kept)
