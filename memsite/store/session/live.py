"""The live session in ``hot/``: starting, updating and ending it, each a read-modify-write
of the context under the hot lock, and archiving it into the warm log through the journal.

Takes text already checked and redacted and a ``now`` already chosen, like the journal.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from ...errors import START_SESSION, InvalidInput, NotFound, WriteFailed
from .. import reading, storage, tree
from ..format import next_free_id, parse_entries
from ..journal import Journal
from ..model import Entry, HotContext, SessionStart
from . import carried, hot


def start(
    journal: Journal, session_id: str, task: str, now: dt.datetime, *, chosen: bool = True
) -> SessionStart:
    """Start a session; an unfinished one still in ``hot/`` is archived to warm first.

    The new session's pending list holds the open items of the session it archived and of
    the sessions ended since the last start (``hot/carried.json``), each marked with the
    session it was carried from (issue 25.4).

    A session id names one session: a ``chosen`` id already used that day (or by the live
    session) is refused, a generated one gets a ``-2``, ``-3`` suffix (issue 15.3).
    """
    root = journal.root
    with storage.lock(root / hot.LOCK):
        previous = hot.load(root)
        used = _ids_used(root, now.date()) | ({previous.session_id} if previous else set())
        if session_id in used:
            if chosen:
                raise InvalidInput(
                    f"session id {session_id!r} was already used on {now.date().isoformat()}; "
                    "give another --id, or none for a fresh one"
                )
            session_id = next_free_id(session_id, used)
        archived_id = None
        if previous is not None:
            archived_id = archive(journal, previous, now, "session archived", None)
        context = HotContext(
            session_id=session_id, task=task, started=now.isoformat(), updated=now.isoformat()
        )
        waiting = carried.load(root)
        if previous is not None:
            waiting += [(text, previous.session_id) for text in previous.pending_actions]
        for text, source in waiting:
            if text not in context.pending_actions:
                context.pending_actions.append(text)
                context.carried[text] = source
        hot.save(root, context)
        # after the save: a crash between the two carries the items again, never loses them
        carried.clear(root)
    return SessionStart(context, previous, archived_id)


def end(journal: Journal, summary: str, now: dt.datetime, *, drop_pending: bool = False) -> str:
    """Archive the live session into the warm log and clear ``hot/``; returns the log id.

    Its open pending actions wait in ``hot/carried.json`` for the next session of the tree,
    unless ``drop_pending`` (the archive lists them either way)."""
    with storage.lock(journal.root / hot.LOCK):
        context = require(journal.root)
        entry_id = archive(journal, context, now, "session end", summary)
        if context.pending_actions and not drop_pending:
            carried.add(journal.root, context.pending_actions, context.session_id)
        hot.clear(journal.root)
    return entry_id


def progress(journal: Journal, step: str, files: list[str], now: dt.datetime) -> str:
    """Record the current step (and files touched) in hot and in the warm log (both or
    neither: a failed hot update takes the log entry back)."""
    with storage.lock(journal.root / hot.LOCK):
        context = require(journal.root)
        context.current_step = step
        context.files_modified += [f for f in files if f not in context.files_modified]
        context.updated = now.isoformat()
        details = {"files": ", ".join(files)} if files else {}
        return journal.append_activity(
            now,
            "progress",
            details,
            step,
            "",
            about=f"progress {step}",
            then=lambda _: hot.save(journal.root, context),
        )


def retask(root: Path, task: str, now: dt.datetime, *, only_if: str | None = None) -> bool:
    """Rename the live session's task (``only_if`` it still is that task); False when there
    is no live session or its task was already changed (issue 23: a session the hook started
    is named by its first prompt)."""
    with storage.lock(root / hot.LOCK):
        context = hot.load(root)
        if context is None or (only_if is not None and context.task != only_if):
            return False
        context.task = task
        context.updated = now.isoformat()
        hot.save(root, context)
        return True


def touch(root: Path, files: list[str], now: dt.datetime) -> bool:
    """Add ``files`` to the live session's files (no log entry: the edit's own entry is the
    record); False when there is no live session."""
    with storage.lock(root / hot.LOCK):
        context = hot.load(root)
        if context is None:
            return False
        new = [f for f in files if f not in context.files_modified]
        if new:
            context.files_modified += new
            context.updated = now.isoformat()
            hot.save(root, context)
        return True


def pending_add(journal: Journal, text: str, now: dt.datetime) -> list[str]:
    with storage.lock(journal.root / hot.LOCK):
        context = require(journal.root)
        if text not in context.pending_actions:
            context.pending_actions.append(text)
        context.updated = now.isoformat()
        hot.save(journal.root, context)
        return list(context.pending_actions)


def pending_done(journal: Journal, text: str, now: dt.datetime) -> list[str]:
    """Mark a pending action done (exact text, or a unique part of it); it is logged to warm."""
    with storage.lock(journal.root / hot.LOCK):
        context = require(journal.root)
        matches = [p for p in context.pending_actions if p == text] or [
            p for p in context.pending_actions if text.casefold() in p.casefold()
        ]
        if len(matches) != 1:
            listed = "; ".join(context.pending_actions) or "none"
            problem = "matches several pending actions" if matches else "matches no pending action"
            raise NotFound(f"{text!r} {problem} (pending: {listed})")
        context.pending_actions.remove(matches[0])
        context.carried.pop(matches[0], None)
        context.updated = now.isoformat()
        journal.append_activity(
            now,
            "pending done",
            {},
            matches[0],
            "",
            about=f"done {matches[0]}",
            then=lambda _: hot.save(journal.root, context),
        )
        return list(context.pending_actions)


def require(root: Path) -> HotContext:
    """The live session; NotFound when there is none."""
    context = hot.load(root)
    if context is None:
        raise NotFound(f"no active session (start one with {START_SESSION})")
    return context


def files_since_decision(root: Path, notice: Callable[[str], None]) -> list[str]:
    """The files the live session touched since its previous decision (``decide``'s
    ``paths_from_session``, issue 14); ``notice`` hears when there are none."""
    tree.check_root(root)
    context = hot.load(root)
    if context is None:
        raise InvalidInput(
            "--paths-from-session: no live session; name the code with --path, or start a "
            "session with: memsite session start TASK"
        )
    files = context.files_modified[context.decided_files :]
    if not files:
        notice("--paths-from-session: no files touched since the previous decision")
    return files


def archive(
    journal: Journal, context: HotContext, now: dt.datetime, action: str, summary: str | None
) -> str:
    """Write a session into the warm log once, and return the id of the entry that holds it.

    An archive already there counts only if it holds this very state (same details, same
    body, and the summary when one is given): that is a retry after a crash. Anything else,
    even with the same session id, is written, then read back before the caller may clear
    ``hot/`` (issue 15.3).
    """
    details, body = snapshot(context)
    for day in {now.date(), _day_of(context.updated)} - {None}:
        for entry in _day_entries(journal.root, day):  # type: ignore[arg-type]
            if _holds(entry, details, body, summary):
                return entry.id

    def read_back(entry_id: str) -> None:
        path = tree.day_log(journal.root, now.date())
        if not any(
            entry.id == entry_id
            and _holds(entry, details, body, None)
            and entry.result == (summary or "")
            for entry in _day_entries(journal.root, now.date())
        ):
            raise WriteFailed(
                f"{path}: session {context.session_id!r} did not read back as written; "
                "nothing was written and hot/ is kept"
            )

    about = f"{action} {context.session_id}"
    return journal.append_activity(
        now, action, details, summary or "", body, about=about, then=read_back
    )


def snapshot(context: HotContext) -> tuple[dict[str, str], str]:
    """The details and body of a session's archive (and of its checkpoints)."""
    details = {
        "session_id": context.session_id,
        "task": context.task,
        "started": context.started,
        "updated": context.updated,
    }
    if context.current_step:
        details["current_step"] = context.current_step
    lines = []
    for title, items in (
        ("Files modified", [f"`{f}`" for f in context.files_modified]),
        ("Decisions", context.decisions),
        ("Pending", context.pending_actions),
    ):
        if items:
            lines += [f"**{title}:**", *[f"- {item}" for item in items], ""]
    return details, "\n".join(lines).strip()


def _holds(entry: Entry, details: dict[str, str], body: str, summary: str | None) -> bool:
    return (
        entry.title.startswith("session")
        and entry.details == details
        and entry.body == body
        and (not summary or entry.result == summary)
    )


def _day_entries(root: Path, day: dt.date) -> list[Entry]:
    path = tree.day_log(root, day)
    try:
        text = reading.replaced_text(path)
    except FileNotFoundError:
        return []
    return parse_entries(text, path.relative_to(root).as_posix()).entries


def _ids_used(root: Path, day: dt.date) -> set[str]:
    """Session ids archived in the day log of ``day``."""
    return {
        entry.details["session_id"]
        for entry in _day_entries(root, day)
        if entry.title.startswith("session") and "session_id" in entry.details
    }


def _day_of(stamp: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(stamp[:10])
    except ValueError:
        return None
