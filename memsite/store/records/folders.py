"""The team's decision-record folders, read in place as decisions (issue 26).

``memsite.toml`` names them::

    [records]
    paths = ["../docs/adr"]   # folders or globs, relative to the tree

A folder gives its numbered ``.md`` files (``README.md``, ``index.md`` and ``template.md``
are not records); a glob gives every ``.md`` it matches. Nothing outside the repository that
holds the tree is read, nor a folder inside the tree (its files are notes already), and every
file goes through ``storage.read_inside``: no link out of the repository, regular files only,
at most ``MAX_BYTES``. A record's path is relative to the tree (``../docs/adr/0001-x.md``),
as every entry's is. Records are never written: what is wrong with one is a ``Problem`` for
``memsite check``, and the record is read as far as it goes or skipped.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ...errors import InvalidInput, UnsafePath
from .. import code, config, storage
from ..format import Problem
from ..git import run
from ..model import Entry
from .formats import Record, parse_record, record_id

TABLE = config.Table("records", {"paths": config.Texts(most=50, longest=400)})
# the longest record of the devset is 27 KB; a megabyte is a file put in the wrong place
MAX_BYTES = 1024 * 1024
NOT_RECORDS = frozenset({"readme", "index", "template", "adr-template", "_template"})


@dataclass
class Records:
    """The records of the tree's folders, as decisions, with their texts and problems."""

    entries: list[Entry] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def record_files(root: Path) -> tuple[list[str], list[Problem]]:
    """The record files the ``[records]`` table names, relative to the tree and sorted,
    each a regular file inside the repository of at most ``MAX_BYTES``; what is left out is
    a problem."""
    problems: list[Problem] = []
    try:
        items = config.read(root, TABLE).get("paths", ())
    except config.BadConfig as err:
        return [], [Problem(config.CONFIG, 1, f"{_after_path(str(err))}; records not read")]
    if not isinstance(items, tuple) or not items:
        return [], []
    repo = code.repository_root(root).resolve()
    real_root = root.resolve()
    found: dict[str, None] = {}
    for item in items:
        for path in _candidates(root, repo, real_root, item, problems):
            rel = posixpath.normpath(os.path.relpath(path, root))
            if rel in found:
                continue
            problem = _refusal(path, repo, real_root)
            if problem is not None:
                problems.append(Problem(rel, 1, problem))
                continue
            found[rel] = None
    return sorted(found), problems


def _candidates(
    root: Path, repo: Path, real_root: Path, item: str, problems: list[Problem]
) -> list[Path]:
    where = f"[records] paths {item!r}"
    text = item.strip().replace("\\", "/")
    if not text or text.startswith("/"):
        problems.append(Problem(config.CONFIG, 1, f"{where}: give a path relative to the tree"))
        return []
    parts = PurePosixPath(text).parts
    split = next((i for i, part in enumerate(parts) if set(part) & code.GLOB_CHARACTERS), None)
    base = root.joinpath(*parts[:split]) if split != 0 else root
    real = base.resolve()
    if real != repo and repo not in real.parents:
        problems.append(Problem(config.CONFIG, 1, f"{where} is outside the repository; not read"))
        return []
    if real == real_root or real_root in real.parents:
        problems.append(
            Problem(
                config.CONFIG,
                1,
                f"{where} is inside the memory tree, whose files are notes already; point it "
                "at the folder outside memory/ (or move the records there)",
            )
        )
        return []
    if split is not None:
        pattern = "/".join(parts[split:])
        return sorted(p for p in base.glob(pattern) if p.name.endswith(".md"))
    if base.is_file():
        return [base]
    if not base.is_dir():
        problems.append(Problem(config.CONFIG, 1, f"{where}: no such folder; not read"))
        return []
    return sorted(
        p
        for p in base.iterdir()
        if p.name.endswith(".md")
        and not p.name.startswith(".")
        and p.stem.lower() not in NOT_RECORDS
        and any(c.isdigit() for c in p.stem)
    )


def _refusal(path: Path, repo: Path, real_root: Path) -> str | None:
    """Why the record file ``path`` is not read, or None."""
    real = path.resolve()
    if real != repo and repo not in real.parents:
        return "symbolic link points outside the repository; not read"
    if real_root in real.parents:
        return "symbolic link into the memory tree; not read as a record"
    try:
        info = os.stat(path)
    except OSError as err:
        return f"cannot read: {err.strerror}"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file; not read"
    if info.st_size > MAX_BYTES:
        return f"{info.st_size:,} bytes, over the {MAX_BYTES:,}-byte limit of a record; not read"
    return None


def record_ids(root: Path) -> frozenset[str]:
    """The ids of the tree's decision records, from their file names (none is read)."""
    return frozenset(record_id(rel) for rel in record_files(root)[0])


def record_stats(root: Path) -> dict[str, tuple[int, int]]:
    """``(mtime_ns, size)`` of every record file, for the search index to see changes."""
    stats = {}
    for rel in record_files(root)[0]:
        try:
            info = os.stat(root / rel)
        except OSError:
            continue
        stats[rel] = (info.st_mtime_ns, info.st_size)
    return stats


def read_records(root: Path) -> Records:
    """Every record of the tree's folders as a decision (``Records``), never raising."""
    files, problems = record_files(root)
    out = Records(problems=list(problems))
    if not files:
        return out
    repo = code.repository_root(root).resolve()
    parsed: list[Record] = []
    for rel in files:
        text = _text(root, repo, rel, out.problems)
        if text is None:
            continue
        record = parse_record(rel, text)
        out.texts[rel] = text
        parsed.append(record)
        out.problems += [
            Problem(rel, line, msg, severity) for line, msg, severity in record.problems
        ]
    out.entries = _entries(root, repo, parsed, out.problems)
    return out


def _text(root: Path, repo: Path, rel: str, problems: list[Problem]) -> str | None:
    try:
        raw = storage.read_inside(repo, root / rel, limit=MAX_BYTES)
    except UnsafePath:
        problems.append(Problem(rel, 1, "resolves outside the repository; not read"))
        return None
    except (storage.NotAFile, storage.TooLarge) as err:
        problems.append(Problem(rel, 1, _after_path(str(err))))
        return None
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


def _entries(root: Path, repo: Path, records: list[Record], problems: list[Problem]) -> list[Entry]:
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
    entries = []
    for record in records:
        if by_id[record.id] is not record:
            continue  # check names the duplicate id
        state = "accepted" if record.id in cut else record.state
        fields = {"status": state, "record": record.path}
        if record.id in successor:
            fields["superseded-by"] = successor[record.id]
            fields["status"] = "superseded"
        if record.id in older:
            fields["supersedes"] = sorted(older[record.id], key=lambda i: dates[i])[-1]
        if record.tags:
            fields["tags"] = ", ".join(record.tags)
        if record.number is not None:
            fields["number"] = str(record.number)
        entries.append(
            Entry(
                id=record.id,
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
