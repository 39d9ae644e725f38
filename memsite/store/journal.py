"""Appending entries to the tree: decisions and learnings to ``cold/``, activities to the
day's warm log, each with a fresh id, under the storage locks; and moving old day logs to
``warm/archive/`` while no append runs.

Takes text already checked and redacted (``intake``) and a ``now`` already chosen: the
journal only decides ids and where an entry goes.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import SUPERSEDES, MemsiteError, UnknownReference, WriteFailed
from . import inputs, preflight, reading, storage, tree
from .format import DECISIONS, LEARNINGS, file_title, next_free_id, parse_entries, render_entry
from .markup import slugify
from .model import Entry
from .session import hot

_STORED_ID = re.compile(r"^(?:<!-- id: (\S+) -->|[-*+] \*\*Id:\*\* ?(.*))$", re.MULTILINE)
_ENTRY_HEADING = re.compile(r"^ {0,3}#{2,3}[ \t]", re.MULTILINE)


@dataclass(frozen=True)
class Journal:
    """Writes entries into the tree at ``root``; ``author`` signs those given no author,
    ``notice`` hears what was skipped on the way."""

    root: Path
    author: str | None
    notice: Callable[[str], None]

    def author_field(self, author: str | None) -> dict[str, str]:
        name = author if author is not None else self.author
        return {"author": inputs.one_line(name, "author")} if name else {}

    def write_cold(
        self,
        rel: str,
        kind: str,
        title: str,
        fields: dict[str, str],
        body: str,
        now: dt.datetime,
        author: str | None,
    ) -> str:
        """Append a decision or learning to ``rel`` and its pointer to the day log (both or
        neither), then list a decision in the live session; returns its id. A decision's
        ``supersedes`` may name a decision record of the ``[records]`` folders (issue 26)
        besides the entries of ``rel``."""
        supersedes = fields.get("supersedes")
        records: frozenset[str] = frozenset()
        if kind == "decision" and supersedes is not None:
            from .records import record_ids  # the records' parsers: only then (issue 35)

            records = record_ids(self.root)
        written: dict[str, str] = {}
        base = f"{now.date().isoformat()}-{slugify(title)}"
        beside = self._ids_beside(rel, now.date(), base)
        path = self.root / rel

        def compose(current: str) -> str:
            preflight.refuse_damaged(path, current, rel)
            # an id must be a real entry's, not one shown in a code block (issue 15.13)
            if (
                supersedes is not None
                and supersedes not in records
                and supersedes not in preflight.entry_ids(current, rel)
            ):
                raise UnknownReference(
                    f"{SUPERSEDES} {supersedes!r}: no {kind} with that id in {rel}"
                )
            entry_id = next_free_id(base, ids_in(current, rel) | beside)
            written["id"] = entry_id
            entry = Entry(entry_id, kind, "cold", title, now.date(), fields=fields, body=body)
            head = "" if current.strip() else file_title(kind) + "\n"
            return head + render_entry(entry)

        def point_at_it() -> None:
            written["pointer"] = "tried"
            details = {kind: written["id"], "title": title}
            self.append_activity(now, kind, details, "", "", author, about=f"{kind} {title}")

        try:
            storage.append(self.root, path, compose, then=point_at_it)
        except storage.NotRestored as err:
            raise WriteFailed(
                f"{err}: the {kind} {written['id']} is written, without its pointer in the day "
                "log; do not write it again"
            ) from None
        except MemsiteError as err:
            if "pointer" not in written:
                raise
            raise WriteFailed(
                f"{err}; the {kind} was not written either ({path} is unchanged)"
            ) from None
        entry_id = written["id"]
        if kind == "decision":
            self._list_in_session(entry_id, now)
        return entry_id

    def _list_in_session(self, entry_id: str, now: dt.datetime) -> None:
        """Add a decision to the live session's list; the decision is on disk by now, so a
        failure here is a notice, not an error that would invite writing it again. A decision
        backfilled to before the session started is not this session's: it is not listed."""
        try:
            with storage.lock(self.root / hot.LOCK):
                context = hot.load(self.root)
                if context is not None and not hot.started_after(context, now):
                    context.decisions.append(entry_id)
                    context.decided_files = len(context.files_modified)
                    context.updated = now.isoformat()
                    hot.save(self.root, context)
        except (MemsiteError, OSError, ValueError) as err:  # ValueError: a text not stored
            self.notice(
                f"{err}; decision {entry_id} is written, but the live session does not list it"
            )

    def _ids_beside(self, rel: str, day: dt.date, base: str) -> set[str]:
        """Ids ``base`` or ``base-N`` already stored in the other files whose ids share the
        namespace of ``rel`` (the two cold files and the day log), so a decision, a learning
        and an activity with the same title on the same day get distinct ids. Found by plain
        substring search: this runs on every write, and cold files grow large."""
        taken: set[str] = set()
        for other in (DECISIONS, LEARNINGS, tree.day_log(self.root, day).relative_to(self.root)):
            if Path(other).as_posix() == rel:
                continue
            try:
                text = reading.replaced_text(self.root / other)
            except (OSError, reading.NotAFile):
                continue
            for marker in ("<!-- id: ", "**Id:** "):
                at = text.find(marker + base)
                while at != -1:
                    end = text.find("\n", at)
                    line = text[at + len(marker) : end if end != -1 else len(text)]
                    taken.add(line.removesuffix("-->").strip())
                    at = text.find(marker + base, at + 1)
        return taken

    def append_activity(
        self,
        now: dt.datetime,
        action: str,
        details: dict[str, str],
        result: str,
        body: str,
        author: str | None = None,
        about: str | None = None,
        then: Callable[[str], None] | None = None,
        code: dict[str, str] | None = None,
    ) -> str:
        """Append one activity; its id is the date plus the slug of ``about`` (else the action).

        memsite's own activities (pointers, progress, session archives) pass ``about`` so that
        their ids say what they point at and two branches don't mint the same id. ``then``
        (given the new id) is the rest of a write that spans files: if it raises, the day log
        is put back as it was (``storage.append``). ``code`` holds its ``paths`` and ``commit``
        fields (issue 14).
        """
        # prune moves day logs while it holds warm/ exclusively: choosing the day log and
        # appending under a shared hold means an entry never lands in a fresh copy of a log
        # that prune just archived
        with storage.lock(self.root / "warm", shared=True):
            path = tree.day_log(self.root, now.date())
            rel = path.relative_to(self.root).as_posix()
            fields = {**(code or {}), **self.author_field(author)}
            written: dict[str, str] = {}
            base = f"{now.date().isoformat()}-{slugify(about or action)}"
            beside = self._ids_beside(rel, now.date(), base)

            def compose(current: str) -> str:
                preflight.refuse_damaged(path, current, rel)
                entry_id = next_free_id(base, ids_in(current, rel) | beside)
                written["id"] = entry_id
                entry = Entry(
                    entry_id,
                    "activity",
                    "warm",
                    action,
                    now.date(),
                    now.time(),
                    fields,
                    body=body,
                    details=details,
                    result=result,
                )
                head = "" if current.strip() else f"# {now.date().isoformat()}\n\n"
                return head + render_entry(entry)

            finish = (lambda: then(written["id"])) if then is not None else None
            storage.append(self.root, path, compose, then=finish)
            return written["id"]

    def prune(self, cutoff: dt.date) -> list[tuple[str, str]]:
        """Move day logs older than ``cutoff`` to ``warm/archive/YYYY/``; delete nothing."""
        warm = self.root / "warm"
        if not warm.is_dir():
            return []
        with storage.lock(warm):  # no day-log append runs while logs move (append_activity)
            return self._move_logs(warm, cutoff)

    def _move_logs(self, warm: Path, cutoff: dt.date) -> list[tuple[str, str]]:
        moved = []
        for path in sorted(warm.glob("????-??-??.md")):
            try:
                day = dt.date.fromisoformat(path.stem)
            except ValueError:
                continue
            if day >= cutoff or path.is_symlink():
                continue
            target = warm / "archive" / f"{day.year:04d}" / path.name
            if target.exists():
                self.notice(
                    f"{target.relative_to(self.root)} already exists; left {path.name} in place"
                )
                continue
            storage.move(self.root, path, target)
            moved.append(
                (path.relative_to(self.root).as_posix(), target.relative_to(self.root).as_posix())
            )
        return moved


def ids_in(text: str, rel: str) -> set[str]:
    """Ids already used in a file: stored ones, and those derived for hand-written entries."""
    stored = {(m.group(1) or m.group(2)).strip() for m in _STORED_ID.finditer(text)}
    if len(_ENTRY_HEADING.findall(text)) <= len(stored):
        return stored
    return stored | {e.id for e in parse_entries(text, rel).entries}
