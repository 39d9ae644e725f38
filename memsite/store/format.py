"""The file format: pure ``parse_*`` / ``render_*`` functions over text.

``render_entry`` writes an entry exactly as ``docs/format.md`` describes; ``parse_entries``
reads a whole file back into entries and problems, tolerating hand edits (``-`` or ``—`` as
separator, extra blank lines, missing or extra fields, CRLF, a BOM, an entry heading right
after the previous entry's last line).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..errors import InvalidInput
from . import markup
from .dates import parse_date, parse_time
from .model import Entry
from .notes import front_matter, note_date, note_id, note_title  # noqa: F401 (chunks, pages)

DECISIONS = "cold/decisions.md"
LEARNINGS = "cold/learnings.md"
PERSONA = "persona.md"
_DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
_ENTRY_TITLE = re.compile(r"^(\S+?)(?:[ \t]*[—–][ \t]*|[ \t]+--?[ \t]+)(.+)$")
_FIELD = re.compile(r"^" + markup.FIELD_SHAPE + r"(?: (.*)|)$")
_DETAIL = re.compile(r"^([^:\n]+?):(?: (.*)|)$")
_RESULT = re.compile(r"^Result:(?: (.*)|)$")
ID_TRAILER = re.compile(r"^<!-- id: (\S+) -->[ \t]*$")


@dataclass(frozen=True)
class Problem:
    """Something wrong in a file, for ``memsite check``: ``path:line: message``."""

    path: str
    line: int
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message}"


@dataclass
class Parsed:
    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True)
class FileKind:
    """What a file of the tree holds, decided by its path."""

    kind: str  # decision, learning, activity, note or persona
    tier: str
    level: int = 0  # heading level of entries (2 for cold files, 3 for day logs)
    day: dt.date | None = None


def classify(path: str) -> FileKind:
    parts = PurePosixPath(path).parts
    tier = parts[0] if parts and parts[0] in ("hot", "warm", "cold") else "cold"
    if path == PERSONA:
        return FileKind("persona", "cold")
    if path == DECISIONS:
        return FileKind("decision", "cold", 2)
    if path == LEARNINGS:
        return FileKind("learning", "cold", 2)
    if tier == "warm" and _DAY_FILE.match(parts[-1]):
        try:
            day = parse_date(parts[-1][:-3])
        except InvalidInput:
            return FileKind("activity", "warm", 3, None)
        return FileKind("activity", "warm", 3, day)
    return FileKind("note", tier)


def file_title(kind: str) -> str:
    return {"decision": "# Decisions\n", "learning": "# Learnings\n"}.get(kind, "")


# -- rendering ---------------------------------------------------------------------------


def _render_value(value: str) -> list[str]:
    """First line as is, the rest indented two spaces and escaped (see ``markup``)."""
    lines = markup.split_lines(value)
    rest = ["  " + line for line in markup.escape_lines(lines[1:])]
    return [lines[0], *rest]


def _fence_for(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def render_entry(entry: Entry) -> str:
    """The markdown of one entry, ending in a newline; ``parse_entries`` reads it back."""
    if entry.kind == "activity":
        stamp = entry.time.strftime("%H:%M:%S") if entry.time else "00:00:00"
        heading = "### " + markup.escape_heading_text(f"{stamp} — {entry.title}")
    else:
        heading = "## " + markup.escape_heading_text(f"{entry.date.isoformat()} — {entry.title}")
    out = [heading]
    for key, value in entry.fields.items():
        first, *rest = _render_value(value)
        label = key[:1].upper() + key[1:]
        out.append(f"- **{label}:**" + (f" {first}" if first else ""))
        out.extend(rest)
    body_lines = markup.split_lines(entry.body) if entry.body else []
    starts_with_fence = bool(body_lines) and markup.fence_open(body_lines[0]) is not None
    starts_with_result = bool(body_lines) and bool(_RESULT.match(body_lines[0]))
    if entry.kind == "activity":
        if entry.details or (starts_with_fence and not entry.result):
            text = "\n".join(f"{key}: {value}" for key, value in entry.details.items())
            fence = _fence_for(text)
            out += ["", fence + "details", *([text] if text else []), fence]
        if entry.result or starts_with_result:
            first, *rest = _render_value(entry.result)
            out += ["", f"Result: {first}" if first else "Result:", *rest]
    if body_lines:
        out += ["", *markup.escape_lines(body_lines)]
    # The id closes the entry: a line unique to it, so that git's union merge, which keeps a
    # line that both sides added only once, can never take an entry's last line away.
    out += ["", f"<!-- id: {entry.id} -->"]
    return "\n".join(out) + "\n"


# -- parsing -----------------------------------------------------------------------------


def parse_entries(text: str, path: str, *, fallback_date: dt.date | None = None) -> Parsed:
    """Read every entry of one file of the tree (notes come back as one entry per file)."""
    kind = classify(path)
    text = markup.normalize_newlines(text.removeprefix("\ufeff"))
    lines = markup.split_lines(text)
    if kind.kind == "persona":
        return Parsed()
    if kind.kind == "note":
        return Parsed([_note(lines, path, kind, fallback_date)])
    parsed = Parsed()
    if kind.kind == "activity" and kind.day is None:
        parsed.problems.append(Problem(path, 1, "day log name is not a valid date YYYY-MM-DD.md"))
        return parsed
    starts = []
    for index, outside in markup.outside_fences(lines):
        level = markup.heading_level(lines[index]) if outside else 0
        if level and level <= kind.level:
            starts.append((index, level))
    unclosed_at = _last_unclosed_fence(lines)
    if unclosed_at is not None:
        parsed.problems.append(
            Problem(
                path, unclosed_at + 1, "code fence is never closed; it hides the rest of the file"
            )
        )
    seen = Seen()
    bounds = [index for index, _ in starts] + [len(lines)]
    for (start, level), end in zip(starts, bounds[1:], strict=True):
        if level < kind.level:
            continue  # a file title such as "# Decisions" or "# 2026-06-08"
        entry = _parse_section(lines, start, end, path, kind, parsed.problems, seen)
        if entry is not None:
            parsed.entries.append(entry)
    return parsed


def _last_unclosed_fence(lines: list[str]) -> int | None:
    fence = None
    opened_at = None
    for index, line in enumerate(lines):
        if fence is None:
            opened = markup.fence_open(line)
            if opened:
                fence, opened_at = opened, index
        elif markup.fence_closes(line, fence):
            fence = None
    return opened_at if fence is not None else None


def parse_heading(line: str, kind: FileKind) -> tuple[dt.date, dt.time | None, str]:
    """The date, time and title of an entry heading; ``InvalidInput`` says what is wrong."""
    title_text = markup.heading_text(line)
    match = _ENTRY_TITLE.match(title_text)
    if not match:
        expected = "HH:MM:SS — action" if kind.kind == "activity" else "YYYY-MM-DD — Title"
        raise InvalidInput(f"heading {title_text!r} is not an entry heading '{expected}'")
    stamp, title = match.group(1), match.group(2).strip()
    if kind.kind == "activity":
        assert kind.day is not None
        return kind.day, parse_time(stamp), title
    return parse_date(stamp), None, title


def _parse_section(
    lines: list[str],
    start: int,
    end: int,
    path: str,
    kind: FileKind,
    problems: list[Problem],
    seen: Seen,
) -> Entry | None:
    try:
        date, time, title = parse_heading(lines[start], kind)
    except InvalidInput as err:
        problems.append(Problem(path, start + 1, str(err)))
        return None

    index = start + 1
    stop = markup.without_trailing_blanks(lines, index, end)
    last_line = stop
    fields: dict[str, str] = {}
    entry_id = None
    trailer = ID_TRAILER.match(lines[stop - 1]) if stop > index else None
    if trailer:
        entry_id = trailer.group(1)
        stop = markup.without_trailing_blanks(lines, index, stop - 1)
    inner = [
        (index + i, found)
        for i, outside in markup.outside_fences(lines[index:stop])
        if outside and (found := ID_TRAILER.match(lines[index + i]))
    ]
    if entry_id is None and inner:
        # the entry's id line is not its last line: text was added after it (issue 13)
        at, closing = inner.pop()
        after = next(i for i in range(at + 1, last_line) if lines[i].strip()) + 1
        problems.append(
            Problem(
                path,
                after,
                f"text after the id line of entry {closing.group(1)!r} (line {at + 1}): an "
                "entry ends with its id line; move the text above that line, or give it an "
                "entry heading of its own",
            )
        )
        entry_id = closing.group(1)
    for _, other in inner:
        problems.append(
            Problem(
                path,
                start + 1,
                f"entry has two ids ({other.group(1)}, {entry_id}): "
                "a heading was deleted, or a merge mixed the lines of two entries",
            )
        )

    def skip_blank(i: int) -> int:
        while i < stop and not lines[i].strip():
            i += 1
        return i

    index = skip_blank(index)
    while index < stop:
        found = _FIELD.match(lines[index])
        if not found:
            break
        key = found.group(1).strip().lower()
        value, index = _read_value(lines, found.group(2) or "", index + 1, stop)
        if key == "id":
            if entry_id is not None:
                problems.append(
                    Problem(
                        path,
                        start + 1,
                        f"entry has two ids ({entry_id}, {value.strip()}): "
                        "a heading was probably deleted",
                    )
                )
            else:
                entry_id = value.strip()
        elif key in fields:
            problems.append(Problem(path, start + 1, f"field {key!r} appears twice", "warning"))
        else:
            fields[key] = value
        after_blank = skip_blank(index)
        if after_blank < stop and _FIELD.match(lines[after_blank]):
            index = after_blank

    details: dict[str, str] = {}
    result = ""
    if kind.kind == "activity":
        index = skip_blank(index)
        opened = markup.fence_open(lines[index]) if index < stop else None
        if opened:
            close = next(
                (i for i in range(index + 1, stop) if markup.fence_closes(lines[i], opened)), None
            )
            inner = lines[index + 1 : close] if close is not None else []
            pairs = [_DETAIL.match(line) for line in inner if line.strip()]
            if close is not None and all(pairs):
                details = {m.group(1).strip(): (m.group(2) or "") for m in pairs if m}
                index = close + 1
        index = skip_blank(index)
        found = _RESULT.match(lines[index]) if index < stop else None
        if found:
            result, index = _read_value(lines, found.group(1) or "", index + 1, stop)

    index = skip_blank(index)
    body = "\n".join(markup.unescape_lines(lines[index:stop]))
    if entry_id is None:
        entry_id = _derive_id(date, title, seen)
    seen[entry_id] = seen.get(entry_id, 0) + 1
    return Entry(
        id=entry_id,
        kind=kind.kind,
        tier=kind.tier,
        title=title,
        date=date,
        time=time,
        fields=fields,
        body=body,
        path=path,
        line=start + 1,
        end_line=max(last_line, start + 1),
        details=details,
        result=result,
    )


def _read_value(lines: list[str], first: str, index: int, stop: int) -> tuple[str, int]:
    rest = []
    while index < stop and lines[index].startswith(("  ", "\t")):
        line = lines[index]
        rest.append(line[1:] if line.startswith("\t") else line[2:])
        index += 1
    return "\n".join([first, *markup.unescape_lines(rest)]), index


class Seen(dict[str, int]):
    """The ids one parse has given (with how many times), and per base the number its last
    derived id took (``after``): ids only join during a parse, so the next free number is
    never below it, and N entries of one title without id lines take N steps, not N²/2 (a
    hand-written file of 10,000 parsed in 4.5 s on every read: the sweep after issue 36)."""

    def __init__(self) -> None:
        super().__init__()
        self.after: dict[str, int] = {}


def _derive_id(date: dt.date, title: str, seen: Seen) -> str:
    base = f"{date.isoformat()}-{markup.slugify(title)}"
    return next_free_id(base, seen, seen.after)


def next_free_id(
    base: str, taken: dict[str, int] | set[str], after: dict[str, int] | None = None
) -> str:
    """``base``, else the first ``base-N`` (N from 2) not in ``taken``; ``after`` (kept with
    a ``taken`` that only grows) remembers where each base's count stopped."""
    if base not in taken:
        return base
    number = 2 if after is None else after.get(base, 2)
    while f"{base}-{number}" in taken:
        number += 1
    if after is not None:
        after[base] = number
    return f"{base}-{number}"


# -- notes (read in .notes) -----------------------------------------------------------


def _note(lines: list[str], path: str, kind: FileKind, fallback: dt.date | None) -> Entry:
    date = note_date(lines, fallback) or dt.date(1970, 1, 1)
    stop = markup.without_trailing_blanks(lines, 0, len(lines))
    return Entry(
        id=note_id(path),
        kind="note",
        tier=kind.tier,
        title=note_title(lines, path),
        date=date,
        body="\n".join(lines[:stop]),
        path=path,
        line=1,
        end_line=max(stop, 1),
    )
