"""The live session in ``hot/``: starting, updating and ending it, each a read-modify-write
of the context under the hot lock, and archiving it into the warm log through the journal.

Takes text already checked and redacted and a ``now`` already chosen, like the journal.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from ..errors import NotFound
from . import hot, storage, tree
from .format import parse_entries
from .journal import Journal
from .model import HotContext


@dataclass(frozen=True)
class SessionStart:
    """What ``start_session`` did: the new context and any unfinished session it archived."""

    context: HotContext
    archived: HotContext | None = None
    archived_id: str | None = None


def start(journal: Journal, session_id: str, task: str, now: dt.datetime) -> SessionStart:
    """Start a session; an unfinished one still in ``hot/`` is archived to warm first."""
    root = journal.root
    with storage.lock(root / hot.LOCK):
        previous = hot.load(root)
        archived_id = None
        if previous is not None:
            archived_id = archive(journal, previous, now, "session archived", None)
        context = HotContext(
            session_id=session_id,
            task=task,
            started=now.isoformat(),
            updated=now.isoformat(),
            pending_actions=list(previous.pending_actions) if previous else [],
        )
        hot.save(root, context)
    return SessionStart(context, previous, archived_id)


def end(journal: Journal, summary: str, now: dt.datetime) -> str:
    """Archive the live session into the warm log and clear ``hot/``; returns the log id."""
    with storage.lock(journal.root / hot.LOCK):
        context = require(journal.root)
        entry_id = archive(journal, context, now, "session end", summary)
        hot.clear(journal.root)
    return entry_id


def progress(journal: Journal, step: str, files: list[str], now: dt.datetime) -> str:
    """Record the current step (and files touched) in hot and in the warm log."""
    with storage.lock(journal.root / hot.LOCK):
        context = require(journal.root)
        context.current_step = step
        context.files_modified += [f for f in files if f not in context.files_modified]
        context.updated = now.isoformat()
        details = {"files": ", ".join(files)} if files else {}
        entry_id = journal.append_activity(
            now, "progress", details, step, "", about=f"progress {step}"
        )
        hot.save(journal.root, context)
    return entry_id


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
            problem = "matches several" if matches else "matches no"
            raise NotFound(f"{text!r} {problem} pending action (pending: {listed})")
        context.pending_actions.remove(matches[0])
        context.updated = now.isoformat()
        journal.append_activity(now, "pending done", {}, matches[0], "", about=f"done {matches[0]}")
        hot.save(journal.root, context)
        return list(context.pending_actions)


def require(root: Path) -> HotContext:
    """The live session; NotFound when there is none."""
    context = hot.load(root)
    if context is None:
        raise NotFound("no active session (start one with 'memsite session start TASK')")
    return context


def archive(
    journal: Journal, context: HotContext, now: dt.datetime, action: str, summary: str | None
) -> str:
    """Write a session into the warm log once (a retry after a crash finds it there)."""
    for day in {now.date(), _day_of(context.updated)} - {None}:
        path = tree.day_log(journal.root, day)  # type: ignore[arg-type]
        if path.exists():
            rel = path.relative_to(journal.root).as_posix()
            for entry in parse_entries(path.read_text("utf-8", errors="replace"), rel).entries:
                if entry.details.get("session_id") == context.session_id and entry.title.startswith(
                    "session"
                ):
                    return entry.id
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
    body = "\n".join(lines).strip()
    about = f"{action} {context.session_id}"
    return journal.append_activity(now, action, details, summary or "", body, about=about)


def _day_of(stamp: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(stamp[:10])
    except ValueError:
        return None
