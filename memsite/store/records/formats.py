"""One decision record parsed (issue 26): adr-tools/Nygard, MADR 2-4 and log4brains.

A record is read, never written. ``parse_record`` takes its text and returns a frozen
``Record``: the id (from the file name), number, title, the record's own date, its state
(``accepted``, ``proposed``, ``rejected``, ``deprecated`` or ``superseded``) and the records
it names as superseding it or superseded by it, as written (``folders`` resolves them). It
never raises: what cannot be read becomes a ``(line, message)`` problem and the record is
read as far as it goes.

Where each thing is found, first hit wins:

- state: front matter ``status:``; a ``[Superseded by …]`` prefix of the title; a
  ``Status:`` line (or list item) under the title; the first paragraph of a ``## Status``
  section. The earliest state word in that text decides (``Accepted``, ``Approved`` and
  ``Agreed`` are accepted; ``Proposed``, ``Draft`` and ``Ongoing`` proposed; ``Rejected``
  rejected; ``Deprecated`` deprecated; ``Superseded`` superseded); none at all is accepted.
- links: a link or ``ADR-NN`` after "superseded" names the successor, after "supersedes"
  (also "partially supersedes", "replaces") the record replaced; the same words opening a
  line of the record, and front matter ``supersedes:``/``superseded-by:``, count too.
- date: front matter ``date:``; a ``Date:`` (or ``Created:``) line under the title; a date
  alone on a line under the title. ISO, ``DD/MM/YYYY``, ``June 19, 2018``, ``7 April 2020``,
  ``8th June 2023`` and ``May 2023`` (its first day) are read.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .. import markup
from ..notes import front_matter

STATES = ("accepted", "proposed", "rejected", "deprecated", "superseded")
_WORDS = {
    "superseded": r"superseded|replaced\s+by",
    "deprecated": r"deprecated|obsolete|retired",
    "rejected": r"rejected|declined|withdrawn|abandoned",
    "proposed": r"proposed|proposal|draft|ongoing|in\s+progress|pending|under\s+review"
    r"|discussed|tbd|wip",
    "accepted": r"accepted|approved|agreed|adopted|decided|implemented|done|completed?"
    r"|active|current",
}
_STATE = re.compile(
    "|".join(rf"(?P<{state}>\b(?:{words})\b)" for state, words in _WORDS.items()), re.IGNORECASE
)
# "superseded by X" / "supersedes X": the words, then the references up to the next of them
_LINKING = re.compile(
    r"\b(?P<old>superseded(?:\s+by)?|replaced\s+by)\b|\b(?P<new>(?:partially\s+)?supersedes"
    r"|supersede|replaces)\b",
    re.IGNORECASE,
)
# a link's text holds no "[": each "[" then fails at the next one, in linear time
_LINK = re.compile(r"\[(?P<text>[^\[\]]*)\]\((?P<target>[^()\s]+)(?:\s+\"[^\"]*\")?\)")
_NUMBERED = re.compile(r"\b(?:ADR|RFC)[\s\-_#]*0*(?P<n>\d{1,6})\b", re.IGNORECASE)
_PREFIX = re.compile(
    r"^\[(?P<word>superseded|deprecated|rejected)\b(?P<rest>(?:[^\[\]]|\[[^\[\]]*\](?:\([^()]*\))?)*)"
    r"\]\s*",
    re.IGNORECASE,
)
_TITLE_ADR = re.compile(r"^(?:ADR|RFC)[\s\-_#]*0*(?P<n>\d{1,6})\b\s*[.:\-–—]?\s*(?P<t>.*)$", re.I)
_TITLE_DOT = re.compile(r"^0*(?P<n>\d{1,6})\s*[.:)]\s*(?P<t>.*)$")
_TITLE_BARE = re.compile(r"^0*(?P<n>\d{1,6})\s+(?P<t>.*)$")
_FILE_NUMBER = re.compile(r"(\d{1,8})")
_KEY_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?P<key>status|date|created|decided)"
    r"(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(?P<value>.*?)\s*$",
    re.IGNORECASE,
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        1,
    )
    for name in names
}
_MONTH = "(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATE_FORMS = [
    re.compile(r"(?P<year>\d{4})-(?P<mon>\d{1,2})-(?P<day>\d{1,2})\b"),
    re.compile(r"\b(?P<day>\d{1,2})/(?P<mon>\d{1,2})/(?P<year>\d{4})\b"),
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}})\b", re.I),
    re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\s+(?P<year>\d{{4}})\b", re.I),
    re.compile(rf"\b{_MONTH}\s+(?P<year>\d{{4}})\b", re.I),
]
_HEAD_LINES = 40  # how far under the title a Status or Date line is looked for
# how much of a line the patterns see: a status or title is a line or two, and a line of a
# megabyte of "[" must not cost a pattern time in its square
_LONGEST = 2_000


@dataclass(frozen=True)
class Record:
    """One decision record as written. ``supersedes``/``superseded_by`` are references as
    found: a file name's stem (``0019-use-go``) or ``#19`` for a bare number. ``date`` is
    None when the record has none, or one that names no real day (``written_date`` says)."""

    id: str
    path: str
    title: str
    number: int | None
    date: dt.date | None
    state: str
    status: str
    written_date: str = ""  # the date as written, when one was found (read or not)
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    body: str = ""
    end_line: int = 1
    problems: tuple[tuple[int, str, str], ...] = field(default=())  # (line, message, severity)


def is_record_path(rel: str) -> bool:
    """Whether a path of the tree's entries is a decision record's: records are read in
    place from folders outside the tree, so their paths start with ``../``."""
    return rel.startswith("../")


def record_id(path: str) -> str:
    """The id of the record at ``path``: its file name's stem, as a slug."""
    return markup.slugify(PurePosixPath(path).stem, limit=120) or "record"


def parse_record(path: str, text: str) -> Record:
    """The record ``text`` of the file ``path`` holds, read as far as it goes."""
    text = markup.normalize_newlines(text.removeprefix("\ufeff"))
    lines = markup.split_lines(text)
    problems: list[tuple[int, str, str]] = []
    meta, after = front_matter(lines)
    if lines and lines[0].strip() == "---" and not after:
        problems.append((1, "front matter opened by '---' is never closed; read as text", "error"))
    tags = _tags(lines, after) if after else ()
    titles = [
        index
        for index, outside in markup.outside_fences(lines)
        if index >= after and outside and markup.heading_level(lines[index]) == 1
    ]
    heading = markup.heading_text(lines[titles[0]]) if titles else ""
    if len(titles) > 1:
        problems.append(
            (titles[1] + 1, f"a second title (# line; the first is line {titles[0] + 1})", "error")
        )
    number = _file_number(path)
    old: list[str] = []
    new: list[str] = []
    state_text = ""
    prefix = _PREFIX.match(heading[:_LONGEST])
    if prefix:
        state_text = prefix.group(0)
        heading = heading[prefix.end() :]
    title, titled = _title(heading, number)
    if number is None:
        number = titled
    if not title:
        title = meta.get("title") or PurePosixPath(path).stem.replace("-", " ").replace("_", " ")
        if not titles and not meta.get("title"):
            problems.append((1, "no title (# line); named after its file", "error"))
    start = titles[0] + 1 if titles else after
    head = _head(lines, start)
    status = meta.get("status", "")
    date_text = meta.get("date", "")
    for index in head:
        found = _KEY_LINE.match(lines[index][:_LONGEST])
        if not found:
            continue
        key = found.group("key").lower()
        if key == "status" and not status:
            status = found.group("value")
        elif key != "status" and not date_text and key in ("date", "created", "decided"):
            date_text = found.group("value")
    if not status:
        status = _status_section(lines, start)
    status = status[:_LONGEST]
    if not date_text:
        date_text = next((lines[i] for i in head if _looks_like_date(lines[i].strip())), "").strip()
    state = _state(" ".join(filter(None, [state_text, status])))
    _links(state_text + " " + status, old, new)
    for key, into in (("supersedes", new), ("superseded-by", old), ("superseded_by", old)):
        if meta.get(key):
            into.extend(_references(meta[key][:_LONGEST]))
    for index, outside in markup.outside_fences(lines):
        line = lines[index][:_LONGEST].strip().lstrip("-*+> ").strip()
        if outside and _LINKING.match(line) and _LINK.search(line):
            _links(line, old, new)
    if old and state != "superseded":
        state = "superseded"
    date = parse_day(date_text[:200]) if date_text else None
    stop = markup.without_trailing_blanks(lines, 0, len(lines))
    return Record(
        id=record_id(path),
        path=path,
        title=_short(" ".join(title.split())),
        number=number,
        date=date,
        written_date=" ".join(date_text.split())[:40],
        state=state,
        status=" ".join(status.split())[:200],
        supersedes=tuple(dict.fromkeys(new)),
        superseded_by=tuple(dict.fromkeys(old)),
        tags=tags,
        body="\n".join(lines[titles[0] + 1 if titles else after : stop]).strip("\n"),
        end_line=max(stop, 1),
        problems=tuple(problems),
    )


def parse_day(text: str) -> dt.date | None:
    """The date ``text`` opens with, in any of the forms records use; None when it names an
    impossible day (``2024-13-05``) or none at all."""
    for form in _DATE_FORMS:
        found = form.search(text)
        if found is None:
            continue
        parts = found.groupdict()
        month = _MONTHS[parts["month"].lower()] if parts.get("month") else int(parts["mon"])
        try:
            return dt.date(int(parts["year"]), month, int(parts.get("day") or 1))
        except ValueError:
            return None
    return None


def _looks_like_date(line: str) -> bool:
    """A line that holds a date and little else (``June 19, 2018``, ``8th June 2023``)."""
    return bool(line) and len(line) <= 40 and any(form.search(line) for form in _DATE_FORMS)


def _head(lines: list[str], start: int) -> list[int]:
    """The lines under the title, up to the first section heading."""
    out = []
    for index in range(start, min(len(lines), start + _HEAD_LINES)):
        if markup.heading_level(lines[index]):
            break
        out.append(index)
    return out


def _status_section(lines: list[str], start: int) -> str:
    """The first paragraph of a ``Status`` section (any heading level)."""
    for index, outside in markup.outside_fences(lines):
        if index < start or not outside or not markup.heading_level(lines[index]):
            continue
        if markup.heading_text(lines[index]).strip().rstrip(":").lower() != "status":
            continue
        paragraph: list[str] = []
        for line in lines[index + 1 :]:
            if markup.heading_level(line):
                break
            if not line.strip():
                if paragraph:
                    break
                continue
            paragraph.append(line.strip())
        return " ".join(paragraph)
    return ""


def _state(text: str) -> str:
    """The state the earliest state word of ``text`` names; accepted when none does."""
    for found in _STATE.finditer(text):
        return next(name for name, value in found.groupdict().items() if value)
    return "accepted"


def _links(text: str, old: list[str], new: list[str]) -> None:
    """The references after each "superseded by" (into ``old``) or "supersedes" (``new``)."""
    marks = list(_LINKING.finditer(text))
    for position, mark in enumerate(marks):
        end = marks[position + 1].start() if position + 1 < len(marks) else len(text)
        into = old if mark.group("old") else new
        into.extend(_references(text[mark.end() : end]))


def _references(text: str) -> list[str]:
    """The records ``text`` names: each link's file stem, else each ``ADR-NN`` as ``#NN``."""
    found = []
    for link in _LINK.finditer(text):
        target = link.group("target").split("#", 1)[0]
        if target.endswith(".md") and "://" not in target:
            found.append(record_id(target))
        elif (named := _NUMBERED.search(link.group("text"))) is not None:
            found.append(f"#{int(named.group('n'))}")
    if not found:
        bare = _LINK.sub("", text)
        found += [f"#{int(m.group('n'))}" for m in _NUMBERED.finditer(bare)]
        if not found and bare.strip().endswith(".md"):
            found.append(record_id(bare.strip()))
    return found


def _title(heading: str, number: int | None) -> tuple[str, int | None]:
    """The title without its number (``12. Use X``, ``ADR 12: Use X``), and that number; a
    bare leading number (``28 Repo scanning``) only when it is the file's."""
    for form in (_TITLE_ADR, _TITLE_DOT):
        found = form.match(heading)
        if found:
            return found.group("t").strip(), int(found.group("n"))
    found = _TITLE_BARE.match(heading)
    if found and number is not None and int(found.group("n")) == number:
        return found.group("t").strip(), number
    return heading.strip(), None


def _short(title: str, most: int = 200) -> str:
    """A title as entries hold it: a heading of a megabyte is cut, at a word."""
    return title if len(title) <= most else title[:most].rsplit(" ", 1)[0] + " …"


def _file_number(path: str) -> int | None:
    found = _FILE_NUMBER.search(PurePosixPath(path).stem)
    return int(found.group(1)) if found else None


def _tags(lines: list[str], after: int) -> tuple[str, ...]:
    """Front-matter tags, written ``tags: [a, b]``, ``tags: a, b`` or as a ``- item`` list."""
    tags: list[str] = []
    inside = False
    for line in lines[1 : after - 1]:
        key = re.match(r"^tags\s*:\s*(.*)$", line, re.IGNORECASE)
        if key:
            inside = True
            value = key.group(1).strip().strip("[]")
            tags += [t.strip().strip("'\"") for t in value.split(",") if t.strip()]
            continue
        item = re.match(r"^\s+-\s+(.*)$", line) or re.match(r"^-\s+(.*)$", line)
        if inside and item:
            tags.append(item.group(1).strip().strip("'\""))
        elif not line.startswith((" ", "\t")):
            inside = False
    return tuple(t for t in tags if t and "," not in t)[:20]
