"""Heading chunks: the unit that search ranks and recall returns.

A memsite entry (a decision, learning or day-log activity) is one chunk whose anchor is the
entry id. Any other markdown file (a note) is split at its headings of level 1-3, found by
:mod:`.headings` with markdown-it-py, so a ``#`` line inside a code fence is never a heading.
Every chunk belongs to a *record* (the entry, or the note file; a note whose ``##`` headings
start with a date is a hand-written log and each of those subtrees is a record) so that a
section under a generic heading such as "Consequences" can be ranked by what its record is
about. An entry longer than :data:`SPLIT_OVER` characters that has its own sub-headings is
split the same way.

Everything here is pure: text in, frozen values out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..store import markup
from ..store.format import classify, front_matter, note_date, note_id, note_title, parse_entries
from ..store.model import Entry, comma_list
from ..store.records import is_record_path, parse_record
from ..store.session.checkpoints import is_checkpoint
from .headings import Heading, headings

CHUNK_VERSION = 3  # bump when chunking changes: indexes built before are rebuilt
SPLIT_LEVEL = 3  # notes split at headings h1-h3; deeper headings stay inside their section
SPLIT_OVER = 2_000  # an entry longer than this (in characters) splits at its own sub-headings
LEAD_CHARS = 300  # how much of a record's opening prose is copied into its later sections
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
# an entry's id, as a field line or as the closing comment: not words to search
ID_LINE = re.compile(r"^(?:[-*+] \*\*Id:\*\*.*|<!-- id: \S+ -->[ \t]*)$", re.MULTILINE)


@dataclass(frozen=True)
class Chunk:
    """One heading section of a file.

    ``body`` is what is searched besides the heading (the text without its heading and id
    lines), derived from ``text`` unless given.

    ``id`` is the entry id for an entry (or a note's first chunk), else ``record#anchor``.
    ``record`` groups the sections of one entry or note; ``position`` orders them. ``lead`` is
    the record's opening prose, kept only on sections after the first (searched at half
    weight). ``line``/``end_line`` are 1-based and inclusive; ``text`` is the chunk's markdown.
    """

    id: str
    record: str
    position: int
    path: str
    anchor: str
    heading: str
    breadcrumb: tuple[str, ...]
    kind: str
    tier: str
    date: dt.date
    line: int
    end_line: int
    text: str
    time: dt.time | None = None
    category: str = ""
    tags: tuple[str, ...] = ()
    lead: str = ""
    heading_lines: int = 1  # how many leading lines of ``text`` are the heading (0, 1 or 2)
    body: str = None  # type: ignore[assignment]  # derived from text unless given

    def __post_init__(self) -> None:
        if self.body is None:
            # what is searched besides the heading: no heading line, no id line
            lines = markup.split_lines(self.text)[self.heading_lines :]
            object.__setattr__(self, "body", ID_LINE.sub("", "\n".join(lines)).strip())


def chunk_file(
    path: str,
    text: str,
    *,
    fallback_date: dt.date | None = None,
    entries: Sequence[Entry] | None = None,
) -> list[Chunk]:
    """Split one file of the tree into chunks (``persona.md`` gives none). ``entries``, when
    given, are ``parse_entries`` of this very text, already read (the site's build has)."""
    text = markup.normalize_newlines(text.removeprefix("\ufeff"))
    if is_record_path(path):
        return _record_chunks(path, text, entries[0] if entries else None, fallback_date)
    kind = classify(path)
    if kind.kind == "persona" or not text.strip():
        return []
    lines = markup.split_lines(text)
    file_date = kind.day or note_date(lines, fallback_date) or fallback_date or dt.date(1970, 1, 1)
    if kind.kind == "note":
        found = [h for h in headings(text) if h.level <= SPLIT_LEVEL]
        return _note_chunks(path, lines, found, kind.tier, file_date)
    if entries is None:
        entries = parse_entries(text, path, fallback_date=fallback_date).entries
    long_ones = any(_size(lines, e.line - 1, e.end_line) > SPLIT_OVER for e in entries)
    found = [h for h in headings(text) if h.level <= SPLIT_LEVEL] if long_ones else []
    title = _file_title(lines, path, kind.kind, kind.day)
    chunks: list[Chunk] = []
    covered = 0
    for entry in entries:
        gap = _gap_chunk(path, lines, covered, entry.line - 1, kind.tier, file_date)
        chunks.extend(gap)
        chunks.extend(_entry_chunks(entry, lines, found, title))
        covered = entry.end_line
    chunks.extend(_gap_chunk(path, lines, covered, len(lines), kind.tier, file_date))
    return chunks


def chunk_files(files: Iterable[tuple[str, str, dt.date | None]]) -> list[Chunk]:
    """Chunks of several ``(path, text, fallback_date)`` files, in order."""
    return [c for path, text, day in files for c in chunk_file(path, text, fallback_date=day)]


def _file_title(lines: list[str], path: str, kind: str, day: dt.date | None) -> str:
    for index, outside in markup.outside_fences(lines):
        if outside and markup.heading_level(lines[index]) == 1:
            return markup.heading_text(lines[index])
        if outside and markup.heading_level(lines[index]):
            break
    if kind == "activity" and day is not None:
        return day.isoformat()
    return {"decision": "Decisions", "learning": "Learnings"}.get(kind, note_title(lines, path))


def _entry_chunks(entry: Entry, lines: list[str], found: list[Heading], title: str) -> list[Chunk]:
    start, stop = entry.line - 1, entry.end_line
    level = 3 if entry.kind == "activity" else 2
    heading = markup.heading_text(lines[start])
    # an activity is named by its time and action; a decision or learning by its title
    name = heading if entry.kind == "activity" else entry.title
    base = dict(
        record=entry.id,
        path=entry.path,
        kind=entry.kind,
        tier=entry.tier,
        date=entry.date,
        time=entry.time,
        category=entry.category or "",
        tags=tuple(entry.tags),
    )
    if _is_pointer(entry):
        base["body"] = ""
    if is_checkpoint(entry):
        return [_checkpoint_chunk(entry, lines, title, heading, base)]
    subs = [h for h in found if start < h.start < stop and h.level > level]
    if _size(lines, start, stop) <= SPLIT_OVER or not subs:
        return [
            Chunk(
                id=entry.id,
                position=0,
                anchor=entry.id,
                heading=heading,
                breadcrumb=(title, name),
                line=entry.line,
                end_line=entry.end_line,
                text=markup.span_text(lines, start, stop),
                **base,  # type: ignore[arg-type]
            )
        ]
    lead = _clip(f"{entry.title}. {entry.why or entry.body}")
    bounds = [start, *(h.start for h in subs), stop]
    chunks = []
    stack: dict[int, str] = {}
    for position, (first, end) in enumerate(zip(bounds, bounds[1:], strict=False)):
        sub = subs[position - 1] if position else None
        if sub is not None:
            stack = {k: v for k, v in stack.items() if k < sub.level}
            stack[sub.level] = sub.text
        chunks.append(
            Chunk(
                id=f"{entry.id}#{sub.anchor}" if sub else entry.id,
                position=position,
                anchor=sub.anchor if sub else entry.id,
                heading=sub.text if sub else heading,
                breadcrumb=(title, name, *stack.values()),
                line=first + 1,
                end_line=markup.last_line(lines, first, end),
                text=markup.span_text(lines, first, end),
                lead=lead if sub else "",
                heading_lines=(sub.end - sub.start) if sub else 1,
                **base,  # type: ignore[arg-type]
            )
        )
    return chunks


def _record_chunks(path: str, text: str, entry: Entry | None, day: dt.date | None) -> list[Chunk]:
    """A decision record read in place (issue 26): split at its headings as a note is, each
    chunk a ``decision`` of the record's id and date (``entry``: the record as the tree read
    it, when known)."""
    if not text.strip():
        return []
    if entry is None:
        record = parse_record(path, text)
        record_id, title, tags, day = record.id, record.title, record.tags, record.date or day
    else:
        record_id, title, tags, day = entry.id, entry.title, tuple(entry.tags), entry.date
    day = day or dt.date(1970, 1, 1)
    found = [h for h in headings(text) if h.level <= SPLIT_LEVEL]
    notes = _note_chunks(path, markup.split_lines(text), found, "cold", day)
    return [
        dataclasses.replace(
            chunk,
            id=record_id if position == 0 else f"{record_id}#{chunk.anchor or chunk.line}",
            record=record_id,
            position=position,
            kind="decision",
            date=day,
            breadcrumb=(title, *chunk.breadcrumb[1:]),
            tags=tags or chunk.tags,
            lead=chunk.lead if position else "",
        )
        for position, chunk in enumerate(notes)
    ]


def _checkpoint_chunk(
    entry: Entry, lines: list[str], title: str, heading: str, base: dict[str, object]
) -> Chunk:
    """A checkpoint is its summary (issue 24): the task, decisions and pending actions it
    copied from the hot context are the session's history, and searched they made five
    checkpoints outrank the decision they named. The chunk still spans the whole entry."""
    summary = entry.result.strip() or entry.details.get("task", "")
    return Chunk(
        id=entry.id,
        position=0,
        anchor=entry.id,
        heading=heading,
        breadcrumb=(title, heading),
        line=entry.line,
        end_line=entry.end_line,
        text=f"{lines[entry.line - 1]}\n\n{summary}",
        **{**base, "body": summary},  # type: ignore[arg-type]
    )


def _is_pointer(entry: Entry) -> bool:
    """The warm-log line ``decide``/``learn`` write beside a new entry: it only repeats the
    entry's id and title, so its words are not searched (the entry itself is)."""
    return (
        entry.kind == "activity"
        and entry.title in ("decision", "learning")
        and set(entry.details) <= {entry.title, "title"}
        and not entry.body
        and not entry.result
    )


def _gap_chunk(
    path: str, lines: list[str], start: int, stop: int, tier: str, day: dt.date
) -> list[Chunk]:
    """Text of an entry file that belongs to no entry (a preamble, a malformed heading)."""
    body = [
        line
        for line in lines[start:stop]
        if line.strip() and not (markup.heading_level(line) == 1 and start == 0)
    ]
    if not body:
        return []
    record = f"{note_id(path)}-l{start + 1}"
    return [
        Chunk(
            id=record,
            record=record,
            position=0,
            path=path,
            anchor="",
            heading=note_title(lines, path),
            breadcrumb=(note_title(lines, path),),
            kind="note",
            tier=tier,
            date=day,
            line=start + 1,
            end_line=markup.last_line(lines, start, stop),
            text=markup.span_text(lines, start, stop),
            heading_lines=0,
        )
    ]


def _note_chunks(
    path: str, lines: list[str], found: list[Heading], tier: str, file_date: dt.date
) -> list[Chunk]:
    meta, after = front_matter(lines)
    title = note_title(lines, path)
    file_record = note_id(path)
    category = meta.get("category", "")
    tags = tuple(comma_list(meta.get("tags", "").strip("[]")))
    dated_log = sum(1 for h in found if h.level == 2 and _DATE.match(h.text)) >= 2
    starts = {h.start: h for h in _keep_bodies(lines, [h for h in found if h.start >= after])}
    bounds = sorted({after, *starts, len(lines)})
    sections = []
    stack: dict[int, str] = {}
    record, record_date = file_record, file_date
    for first, end in zip(bounds, bounds[1:], strict=False):
        heading = starts.get(first)
        if heading is None and not any(line.strip() for line in lines[first:end]):
            continue
        if heading is not None and heading.level == 1 and not _has_body(lines, heading, end):
            continue  # a bare file title: it lives on in every breadcrumb and lead
        if heading is not None:
            stack = {k: v for k, v in stack.items() if k < heading.level}
            stack[heading.level] = heading.text
            if dated_log and heading.level <= 2:
                match = _DATE.match(heading.text)
                record = f"{file_record}#{heading.anchor}" if match else file_record
                record_date = _date(match.group(1)) if match else file_date
                record_date = record_date or file_date
        section_text = markup.span_text(lines, first, end)
        date = _heading_or_line_date(heading, lines[first:end]) or record_date
        crumbs = (title, *(v for v in stack.values() if v != title))
        sections.append((record, heading, first, end, section_text, date, crumbs))
    chunks: list[Chunk] = []
    positions: dict[str, int] = {}
    leads: dict[str, str] = {}
    for record, heading, first, end, section_text, date, crumbs in sections:
        position = positions.get(record, 0)
        positions[record] = position + 1
        if position == 0:
            opening = crumbs[1] if record != file_record and len(crumbs) > 1 else title
            leads[record] = _clip(f"{opening}. {markup.prose(section_text)}")
        anchor = heading.anchor if heading else ""
        chunk_id = record if position == 0 else f"{record}#{anchor or first + 1}"
        chunks.append(
            Chunk(
                id=chunk_id,
                record=record,
                position=position,
                path=path,
                anchor=anchor,
                heading=heading.text if heading else title,
                breadcrumb=crumbs,
                kind="note",
                tier=tier,
                date=date,
                line=first + 1,
                end_line=markup.last_line(lines, first, end),
                text=section_text,
                category=category,
                tags=tags,
                lead=leads[record] if position else "",
                heading_lines=(heading.end - heading.start) if heading else 0,
            )
        )
    return chunks


def _keep_bodies(lines: list[str], found: list[Heading]) -> list[Heading]:
    """Drop a split point whose section would be its parent's bare heading.

    ``## Consequences`` followed at once by ``### Good`` becomes one chunk, not an empty one.
    """
    kept: list[Heading] = []
    for heading in found:
        previous = kept[-1] if kept else None
        if (
            previous is not None
            and 1 < previous.level < heading.level
            and not _has_body(lines, previous, heading.start)
        ):
            continue
        kept.append(heading)
    return kept


def _has_body(lines: list[str], heading: Heading, end: int) -> bool:
    return any(line.strip() for line in lines[heading.end : end])


def _heading_or_line_date(heading: Heading | None, lines: list[str]) -> dt.date | None:
    if heading is not None and (match := _DATE.search(heading.text)):
        return _date(match.group(1))
    return note_date(lines[1:], None) if heading is not None else None


def _date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def _size(lines: list[str], start: int, stop: int) -> int:
    return sum(len(line) + 1 for line in lines[start:stop])


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LEAD_CHARS else text[:LEAD_CHARS].rsplit(" ", 1)[0]
