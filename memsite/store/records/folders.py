"""The team's decision-record folders, read in place as decisions (issue 26).

``memsite.toml`` names them::

    [records]
    paths = ["../docs/adr"]   # folders or globs, relative to the tree

Which files they give is :mod:`.listing`'s (a walk that stays in the repository, within a
budget); every file goes through ``reading.read_inside``: no link out of the repository,
regular files only, at most ``MAX_BYTES``. A record's id is its file's name, unless a
decision or learning of the tree has it (:mod:`.ids`). A record's path is relative to the
tree (``../docs/adr/0001-x.md``), as every entry's is. Records are never written: what is
wrong with one is a ``Problem`` for ``memsite check``, and the record is read as far as it
goes or skipped.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InvalidInput, UnsafePath
from .. import code, reading
from ..format import Problem
from ..git import run
from ..model import Entry
from .formats import Record, parse_record, record_id
from .ids import own_ids, renamed_ids, taken_ids
from .listing import MAX_BYTES, checked_files, listing


@dataclass
class Records:
    """The records of the tree's folders, as decisions, with their texts and problems."""

    entries: list[Entry] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def record_files(root: Path) -> tuple[list[str], list[Problem]]:
    """The record files the ``[records]`` table names, relative to the tree and sorted,
    each a regular file inside the repository of at most ``MAX_BYTES``; what is left out is
    a problem (:mod:`.listing`)."""
    stats, problems = checked_files(root)
    return sorted(stats), problems


def record_ids(root: Path) -> frozenset[str]:
    """The ids of the tree's decision records, from their file names (none is read) and the
    ids of the tree's cold files (:func:`.ids.renamed_ids`)."""
    renamed = renamed_ids(root)
    return frozenset(renamed.get(rel, record_id(rel)) for rel in record_files(root)[0])


def record_stats(root: Path) -> dict[str, tuple[int, int]]:
    """``(mtime_ns, size)`` of every record file, for the search index to see changes."""
    return checked_files(root)[0]


_READ: dict[str, tuple[object, Records]] = {}


def read_records(root: Path, taken: Mapping[str, str] | None = None) -> Records:
    """Every record of the tree's folders as a decision (``Records``), never raising.
    ``taken``: the ids of the tree's decisions and learnings, with the file of each, when
    the caller has read them (:func:`.ids.taken_ids` otherwise); a record of one of those
    ids is read under an id of its own (:mod:`.ids`). Read again only when a record file or
    those ids changed (prime asks twice: 5,000 records took 1.8 s a time, issue 34)."""
    stats, problems = checked_files(root)
    taken = dict(taken_ids(root) if taken is None else taken)
    key = os.path.abspath(root)
    known = _READ.get(key)
    if known is not None and known[0] == (stats, taken, problems):
        out = known[1]
    else:
        out = _read(root, sorted(stats), problems, taken, listing(root).linked)
        _READ[key] = ((stats, taken, list(problems)), out)
    return Records(list(out.entries), dict(out.texts), list(out.problems))


def _read(
    root: Path,
    files: list[str],
    problems: list[Problem],
    taken: dict[str, str],
    linked: frozenset[str],
) -> Records:
    out = Records(problems=list(problems))
    if not files:
        return out
    repo = code.repository_root(root).resolve()
    parsed: list[Record] = []
    for rel in files:
        text = _text(root, repo if rel in linked else None, rel, out.problems)
        if text is None:
            continue
        record = parse_record(rel, text)
        out.texts[rel] = text
        parsed.append(record)
        out.problems += [
            Problem(rel, line, msg, severity) for line, msg, severity in record.problems
        ]
    # from every file's name, read or not, as the index names them (ids.renamed_ids)
    own = own_ids((record_id(rel) for rel in files), taken)
    out.entries = _entries(root, repo, parsed, out.problems, taken, own)
    return out


def _text(root: Path, repo: Path | None, rel: str, problems: list[Problem]) -> str | None:
    """The text of the record ``rel``: checked against the repository ``repo`` when the walk
    went through a link to it, else read without following one (the walk checked its way)."""
    try:
        if repo is None:
            raw = reading.read_regular(root / rel, limit=MAX_BYTES, follow=False)
        else:
            raw = reading.read_inside(repo, root / rel, limit=MAX_BYTES)
    except UnsafePath:
        problems.append(Problem(rel, 1, "resolves outside the repository; not read"))
        return None
    except (reading.NotAFile, reading.TooLarge) as err:
        problems.append(Problem(rel, 1, _after_path(str(err))))
        return None
    except FileNotFoundError:
        return None  # gone since the walk: a build folder's file, left out
    except OSError as err:
        problems.append(Problem(rel, 1, f"cannot read: {err.strerror}"))
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        problems.append(
            Problem(rel, line, f"not valid UTF-8 (byte 0x{raw[err.start]:02x}); record skipped")
        )
        return None
    if "\x00" in text:
        problems.append(Problem(rel, 1, "contains NUL bytes (binary?); record skipped"))
        return None
    return text


def _after_path(message: str) -> str:
    """A storage or config message without the path it starts with (``check`` prints it)."""
    return message.split(": ", 1)[-1]


def _entries(
    root: Path,
    repo: Path,
    records: list[Record],
    problems: list[Problem],
    taken: Mapping[str, str],
    own: Mapping[str, str],
) -> list[Entry]:
    by_id: dict[str, Record] = {}
    for record in records:
        first = by_id.setdefault(record.id, record)
        if first is not record:
            problems.append(
                Problem(
                    record.path,
                    1,
                    f"duplicate record id {record.id!r} (also {first.path}); skipped",
                )
            )
    seen = _first_seen(root, repo, [r for r in records if r.date is None])
    dates = {r.id: r.date or seen.get(r.path) or _modified(root, r.path) for r in records}
    for record in records:
        if record.date is None:
            source = "the date git first saw the file" if record.path in seen else "its file's date"
            what = (
                f"date {record.written_date!r} is not a real date"
                if record.written_date
                else "no date"
            )
            problems.append(Problem(record.path, 1, f"{what}; {source} is used", "warning"))
    successor, cut = _successors(by_id, records, dates, problems)
    older: dict[str, list[str]] = {}
    for old, new in successor.items():
        older.setdefault(new, []).append(old)
    for name, new in own.items():
        if name not in by_id:
            continue  # a record not read: check says why
        message = (
            f"record id {name!r} is the id of an entry of {taken[name]}, which keeps it; "
            f"the record is read as {new!r}"
        )
        problems.append(Problem(by_id[name].path, 1, message, "warning"))
    entries = []
    for record in records:
        if by_id[record.id] is not record:
            continue  # check names the duplicate id
        state = "accepted" if record.id in cut else record.state
        fields = {"status": state, "record": record.path}
        if record.id in successor:
            fields["superseded-by"] = own.get(successor[record.id], successor[record.id])
            fields["status"] = "superseded"
        if record.id in older:
            replaced = sorted(older[record.id], key=lambda i: dates[i])[-1]
            fields["supersedes"] = own.get(replaced, replaced)
        if record.tags:
            fields["tags"] = ", ".join(record.tags)
        if record.number is not None:
            fields["number"] = str(record.number)
        entries.append(
            Entry(
                id=own.get(record.id, record.id),
                kind="decision",
                tier="cold",
                title=record.title,
                date=dates[record.id],
                fields=fields,
                body=record.body,
                path=record.path,
                line=1,
                end_line=record.end_line,
            )
        )
    return entries


def _successors(
    by_id: dict[str, Record],
    records: list[Record],
    dates: dict[str, dt.date],
    problems: list[Problem],
) -> tuple[dict[str, str], set[str]]:
    """The record that replaced each superseded one, from either side of the link; the newest
    when several claim it, and no link that closes a cycle (the records it was cut from)."""
    numbers: dict[tuple[str, int], str] = {}
    for record in by_id.values():
        if record.number is not None:
            numbers.setdefault((posixpath.dirname(record.path), record.number), record.id)

    def resolve(record: Record, ref: str) -> str | None:
        if ref.startswith("#"):
            found = numbers.get((posixpath.dirname(record.path), int(ref[1:])))
        else:
            found = ref if ref in by_id else None
        if found is None:
            shown = f"number {ref[1:]}" if ref.startswith("#") else repr(ref)
            problems.append(
                Problem(record.path, 1, f"status names record {shown}, which does not exist")
            )
        elif found == record.id:
            problems.append(Problem(record.path, 1, "names itself as superseding it"))
            return None
        return found

    claims: list[tuple[str, str]] = []
    for record in records:
        if by_id.get(record.id) is not record:
            continue
        claims += [
            (record.id, new) for ref in record.superseded_by if (new := resolve(record, ref))
        ]
        claims += [(old, record.id) for ref in record.supersedes if (old := resolve(record, ref))]
    successor: dict[str, str] = {}
    cut: set[str] = set()  # the records whose link closed a cycle: they hold
    for old, new in claims:
        current = successor.get(old)
        if current is None or (dates[new], new) > (dates[current], current):
            successor[old] = new
    for start in list(successor):
        chain = [start]
        while (step := successor.get(chain[-1])) is not None and step not in chain:
            chain.append(step)
        if step is None:
            continue
        loop = chain[chain.index(step) :]
        newest = max(loop, key=lambda i: (dates[i], i))
        shown = " → ".join([*loop, loop[0]])
        for member in loop:
            message = f"supersession cycle {shown}; {newest}, the newest, is read as holding"
            problems.append(Problem(by_id[member].path, 1, message))
        successor.pop(newest, None)
        cut.add(newest)
    return successor, cut


def _first_seen(root: Path, repo: Path, records: Iterable[Record]) -> dict[str, dt.date]:
    """The day git first saw each record's file, by path: one ``git log`` per folder."""
    wanted = {(root / r.path).resolve(): r.path for r in records}
    folders = {path.parent for path in wanted}
    if not folders or not code.is_repository(repo):
        return {}
    seen: dict[str, dt.date] = {}
    for folder in sorted(folders):
        where = folder.relative_to(repo).as_posix() if folder != repo else "."
        try:
            out = run(
                repo, "log", "--diff-filter=A", "--format=%x00%as", "--name-only", "--", where
            )
        except InvalidInput:
            continue
        day = None
        for line in out.decode("utf-8", "replace").splitlines():
            if line.startswith("\x00"):
                try:
                    day = dt.date.fromisoformat(line[1:].strip())
                except ValueError:
                    day = None
            elif line.strip() and day is not None:
                rel = wanted.get(repo / line.strip())
                if rel is not None:
                    # newest first: the last add of a path is the first time git saw it
                    seen[rel] = day
    return seen


def _modified(root: Path, rel: str) -> dt.date:
    try:
        return dt.date.fromtimestamp(os.stat(root / rel).st_mtime)
    except OSError:
        return dt.date(1970, 1, 1)
