"""Neighbours: a day-log hit with the entries next to it in the same session (issue 36.7).

A hit in a day log is one entry, often one line ("ran tests"); what a question about "what
happened when we ..." needs is the run around it: what was done before, what came of it. An
activity hit carries its session's entries before and after it, nearest first, within its
share of the top hits' characters, in the order they happened.

A **session** is read from the day log itself: the entries of one author (``- **Author:**``)
that follow one another with no more than :data:`SESSION_GAP` between them, ending at a
``session end`` or ``session archived`` entry (the record memsite writes when a session
ends). Another author's entries in between (a second agent, a person) are not the session's.

Every activity hit is shown compactly (issue 39.5): its ``### HH:MM:SS — action`` heading
and ``<!-- id: … -->`` line are left out (the breadcrumb and the citation say them), and a
neighbour is its time and action on one bold line, its details on one line, its result.
Pure but for reading the day log (through :mod:`memsite.store.storage`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from ...errors import UnsafePath
from ...store import markup, reading
from ...store.format import parse_entries
from ...store.model import Entry
from ..chunks import ID_LINE
from ..ranking import Hit
from ..snippets import NEAREST_SPACE
from .passages import MARK

SESSION_GAP = dt.timedelta(minutes=45)  # the middle of the best gaps on the tune split
ENDS = ("session end", "session archived")  # the entries that close a session
MIN_ROOM = 80  # characters below which a neighbour is not started
MAX_LOG = 8 * 1024 * 1024  # a day log larger than this is not read for neighbours
_HEADING = ("### ", "#### ")

Reader = Callable[[str], Sequence[Entry]]


def compact(hit: Hit) -> Hit:
    """An activity hit without its time heading and id line (issue 39.5); others unchanged."""
    if hit.kind != "activity":
        return hit
    return replace(hit, text=_without_heading(hit.text))


def _without_heading(text: str) -> str:
    lines = [line for line in markup.split_lines(text) if not ID_LINE.fullmatch(line)]
    if lines and lines[0].startswith(_HEADING):  # a trimmed passage keeps its "[…]"
        lines = lines[1:]
    return "\n".join(lines).strip()


# the day logs parsed lately, by file and by what their stat says (size, mtime): a warm
# process or an MCP server answering many questions parses a day log once while it holds
_PARSED: dict[tuple[str, str], tuple[tuple[int, int], Sequence[Entry]]] = {}
KEPT = 64  # day logs kept parsed


def reader(root: Path) -> Reader:
    """The entries of a day log by its path, each file read once (none when unreadable)."""
    read: dict[str, Sequence[Entry]] = {}

    def entries(path: str) -> Sequence[Entry]:
        if path not in read:
            read[path] = _parsed(root, path)
        return read[path]

    return entries


def _parsed(root: Path, path: str) -> Sequence[Entry]:
    key = (str(root), path)
    try:
        stat = (root / path).stat()
        seen = (stat.st_size, stat.st_mtime_ns)
        kept = _PARSED.get(key)
        if kept is not None and kept[0] == seen:
            return kept[1]
        raw = reading.read_inside(root, root / path, limit=MAX_LOG)
        entries = parse_entries(raw.decode("utf-8"), path).entries
    # a day log grown past MAX_LOG, or made a link out, lends its hits no neighbours: the
    # hits themselves still come (issue 36.7)
    except (
        OSError,
        UnicodeDecodeError,
        ValueError,
        reading.NotAFile,
        reading.TooLarge,
        UnsafePath,
    ):
        return ()
    if len(_PARSED) >= KEPT:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = (seen, entries)
    return entries


def session(entries: Sequence[Entry], at: int) -> list[int]:
    """The indexes of the entries of ``entries[at]``'s session, in file order."""

    def author(entry: Entry) -> str:
        return entry.fields.get("author", "").strip().casefold()

    def moment(entry: Entry) -> dt.datetime | None:
        return None if entry.time is None else dt.datetime.combine(entry.date, entry.time)

    def joined(earlier: Entry, later: Entry) -> bool:
        if earlier.title.strip().casefold() in ENDS:
            return False
        first, then = moment(earlier), moment(later)
        return (
            first is not None
            and then is not None
            and dt.timedelta(0) <= then - first <= SESSION_GAP
        )

    own = author(entries[at])
    members = [at]
    for way in (-1, 1):
        last = at
        index = at + way
        while 0 <= index < len(entries):
            entry = entries[index]
            if author(entry) == own:
                earlier, later = (entry, entries[last]) if way < 0 else (entries[last], entry)
                if not joined(earlier, later):
                    break
                members.append(index)
                last = index
            index += way
    return sorted(members)


def neighbour_text(entry: Entry) -> str:
    """A neighbour, compactly: its time and action in bold, its details on one line, its
    result and body."""
    parts = [f"**{_stamp(entry)}{entry.title}**"]
    if entry.details:
        parts.append(" · ".join(f"{key}: {value}" for key, value in entry.details.items()))
    if entry.result:
        parts.append(f"Result: {entry.result}")
    body = entry.body.strip()
    if body:
        parts.append(body)
    return "\n".join(parts)


def with_neighbours(
    hit: Hit, entries: Sequence[Entry], room: int, shown: frozenset[str] = frozenset()
) -> tuple[Hit, frozenset[str]]:
    """``hit`` (compact; an entry of ``entries``, its record the entry's id) with its
    session's entries before and after it, nearest first,
    taking at most ``room`` more characters; its line range grows over the neighbours that
    join it without a gap. Returns it with the ids of the neighbours it took; those in
    ``shown`` (entries shown elsewhere) are never taken."""
    at = next((i for i, e in enumerate(entries) if e.id == hit.record), None)
    if at is None or room < MIN_ROOM:
        return hit, frozenset()
    members = session(entries, at)
    where = members.index(at)
    order = sorted(
        (i for i in members if i != at and entries[i].id not in shown),
        key=lambda i: (abs(members.index(i) - where), i > at),
    )
    taken: dict[int, str] = {}
    for index in order:
        text = neighbour_text(entries[index])
        if len(text) + 2 > room:
            if room < MIN_ROOM:
                break
            text = _cut(text, room - 2)
        taken[index] = text
        room -= len(text) + 2
        if room < MIN_ROOM:
            break
    if not taken:
        return hit, frozenset()
    texts = [taken[i] for i in sorted(taken) if i < at]
    texts += [f"{_own(entries[at])}\n{hit.text}"]
    texts += [taken[i] for i in sorted(taken) if i > at]
    line, end_line = hit.line, hit.end_line
    for index in range(at - 1, -1, -1):  # grow over neighbours next to it in the file
        if index not in taken:
            break
        line = entries[index].line
    for index in range(at + 1, len(entries)):
        if index not in taken:
            break
        end_line = entries[index].end_line
    ids = frozenset(entries[i].id for i in taken)
    return replace(hit, text="\n\n".join(texts), line=line, end_line=end_line), ids


def alone(hit: Hit, entries: Sequence[Entry]) -> Hit:
    """``hit`` without the neighbours :func:`with_neighbours` gave it: what a recall keeps
    when the hit with them does not fit its budget."""
    at = next((i for i, e in enumerate(entries) if e.id == hit.record), None)
    if at is None or not hit.text.count(_own(entries[at]) + "\n"):
        return hit
    text = hit.text.split(_own(entries[at]) + "\n", 1)[1]
    for later in entries[at + 1 :]:
        text = text.split(f"\n\n**{_stamp(later)}{later.title}**\n", 1)[0]
    entry = entries[at]
    return replace(
        hit,
        text=text,
        line=max(hit.line, entry.line),
        end_line=min(hit.end_line, entry.end_line),
    )


def _own(entry: Entry) -> str:
    return f"**{_stamp(entry)}(this entry)**"


def _stamp(entry: Entry) -> str:
    return f"{entry.time.isoformat()} " if entry.time else ""


def _cut(text: str, size: int) -> str:
    """``text`` cut at a word to ``size`` characters with ``[…]``."""
    room = max(size - len(MARK) - 1, 0)
    cut = text[:room]
    space = cut.rfind(" ", max(0, room - NEAREST_SPACE))
    return (cut[:space] if space > 0 else cut).rstrip() + " " + MARK
