"""A session as the site shows it, live or archived, so both render from one template.

The live session comes from ``hot/context.json``; an archived one from its ``session end``
or ``session archived`` entry in the warm log, whose body holds the same lists as markdown
(``**Files modified:**``, ``**Decisions:**``, ``**Pending:**``, then ``- item`` lines; see
``store.session.live.snapshot``). Both become a ``SessionView``: files, the decisions (and
learnings) it names with their links and status, pending actions, its checkpoints, and
whatever else an archive's body holds (issue 12). A checkpoint holds the same lists and its
summary, so its log entry is a ``SessionView`` too, with what the checkpoint adds
(``Moment``); a day names each of its sessions once, its checkpoints under it (issue 25).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..store.markup import split_lines
from ..store.model import Entry, HotContext
from ..store.session.checkpoints import is_checkpoint
from .material import Link

if TYPE_CHECKING:
    from .material import Material

ENDED = ("session end", "session archived")  # the titles of a session's archive entry
CHECKPOINTS_SHOWN = 5  # the newest checkpoints a session lists (as the hot context keeps)
SUMMARY_CHARS = 300  # of a checkpoint's summary in the list; its log entry has it whole

# the bold labels of an archive's lists, and the list each one fills
_LISTS = {
    "files modified": "files",
    "decisions": "named",
    "learnings": "named",
    "pending": "pending",
}
_LABEL = re.compile(r"\*\*([^*]+):\*\*")
_ITEM = re.compile(r"[-*+] (.*)")


@dataclass(frozen=True)
class Named:
    """A decision or learning a session names: its link and badge when the site has it."""

    id: str
    link: Link | None = None
    badge: str = ""  # its status: current or superseded, for a decision and a learning alike
    kind: str = ""  # decision or learning: said in words beside the badge (issue 39.6)


@dataclass(frozen=True)
class CheckpointLine:
    """One checkpoint of a session: when, its summary, the id of its log entry."""

    id: str
    time: str
    summary: str


@dataclass(frozen=True)
class Moment:
    """What a checkpoint adds to the session it was taken of: what caused it, the window's
    size around it, the checkpoint it completes and a note (a summarizer that failed)."""

    trigger: str
    tokens: str = ""  # "120,000 tokens before, 30,000 tokens after"
    completes: str = ""
    note: str = ""


@dataclass(frozen=True)
class SessionView:
    live: bool
    session_id: str
    task: str
    step: str
    started: str
    updated: str
    summary: str = ""
    files: list[str] = field(default_factory=list)
    named: list[Named] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    checkpoints: list[CheckpointLine] = field(default_factory=list)
    more_checkpoints: int = 0
    rest: str = ""
    checkpoint: Moment | None = None  # the session as a checkpoint of it saw it

    @property
    def named_label(self) -> str:
        if self.named and all(n.kind == "learning" for n in self.named):
            return "Learnings"
        if any(n.kind == "learning" for n in self.named):
            return "Decisions and learnings"
        return "Decisions"


def split_archive(body: str) -> tuple[dict[str, list[str]], str]:
    """An archive's body as its lists (``files``, ``named``, ``pending``) and the rest."""
    lists: dict[str, list[str]] = {"files": [], "named": [], "pending": []}
    rest: list[str] = []
    current = ""
    for line in split_lines(body):
        label = _LABEL.fullmatch(line.strip())
        if label and label.group(1).strip().casefold() in _LISTS:
            current = _LISTS[label.group(1).strip().casefold()]
            continue
        item = _ITEM.fullmatch(line) if current else None
        if item:
            lists[current].append(item.group(1).strip())
        elif not (current and not line.strip()):
            current = ""
            rest.append(line)
    lists["files"] = [_unquoted(path) for path in lists["files"]]
    return lists, "\n".join(rest).strip("\n")


def _unquoted(path: str) -> str:
    """A file as the archive wrote it (a code span) without its backticks."""
    if len(path) > 1 and path[0] == "`" and path[-1] == "`" and "`" not in path[1:-1]:
        return path[1:-1]
    return path


def named(tree: Material, ids: list[str]) -> list[Named]:
    found = []
    for entry_id in dict.fromkeys(i.strip() for i in ids if i.strip()):
        entry = tree.by_id.get(entry_id)
        if entry is None or entry.kind not in ("decision", "learning"):
            found.append(Named(entry_id))
        else:
            status = "superseded" if tree.superseded_by.get(entry_id) else "current"
            found.append(Named(entry_id, tree.links.get(entry_id), status, entry.kind))
    return found


Checkpoints = dict[str, list[Entry]]  # session id -> its checkpoints, oldest first


def by_session(activities: list[Entry]) -> Checkpoints:
    """The checkpoints among ``activities`` (oldest first), by session id."""
    found: Checkpoints = {}
    for entry in activities:
        if is_checkpoint(entry):
            found.setdefault(entry.details.get("session_id", ""), []).append(entry)
    return found


def checkpoints(marks: Checkpoints, session_id: str) -> tuple[list[CheckpointLine], int]:
    """The newest checkpoints of a session, oldest first, and how many earlier ones."""
    mine = marks.get(session_id, []) if session_id else []
    shown = mine[-CHECKPOINTS_SHOWN:]
    lines = [
        CheckpointLine(e.id, e.time.strftime("%H:%M") if e.time else "", headline(e)) for e in shown
    ]
    return lines, len(mine) - len(shown)


def headline(entry: Entry) -> str:
    """A checkpoint's summary in one line of a list: its first line (after a ``Task:`` line
    that repeats the session's task), shortened, with an ellipsis when more follows."""
    task = f"task: {entry.details.get('task', '')}".casefold().strip()
    lines = [line.strip() for line in split_lines(entry.result) if line.strip()]
    if len(lines) > 1 and lines[0].casefold() == task:
        lines = lines[1:]
    first = lines[0] if lines else ""
    if len(first) > SUMMARY_CHARS:
        return first[: SUMMARY_CHARS - 1].rstrip() + "…"
    return first + (" …" if len(lines) > 1 else "")


def archived(tree: Material, entry: Entry, marks: Checkpoints) -> SessionView:
    """The session an archive entry holds."""
    shown, earlier = checkpoints(marks, entry.details.get("session_id", ""))
    return _ended(tree, entry, checkpoints=shown, more_checkpoints=earlier)


def at_checkpoint(tree: Material, entry: Entry) -> SessionView:
    """The session as a checkpoint entry holds it: the lists of its body, its summary whole
    (shown line by line), and what the checkpoint adds."""
    details = entry.details
    sizes = []
    for key, said in (("tokens_before", "tokens before"), ("tokens_after", "tokens after")):
        value = details.get(key, "").replace(",", "").strip()
        if value.isdigit():
            sizes.append(f"{int(value):,} {said}")
    moment = Moment(
        trigger=details.get("trigger", ""),
        tokens=", ".join(sizes),
        completes=details.get("completes", ""),
        note=details.get("note", ""),
    )
    return _ended(tree, entry, checkpoint=moment)


def _ended(tree: Material, entry: Entry, **more: object) -> SessionView:
    """A session as an archive or checkpoint entry holds it: its fields and its body's lists."""
    details = entry.details
    lists, rest = split_archive(entry.body)
    return SessionView(
        live=False,
        session_id=details.get("session_id", ""),
        task=details.get("task", ""),
        step=details.get("current_step", ""),
        started=details.get("started", ""),
        updated=details.get("updated", ""),
        summary=entry.result,
        files=lists["files"],
        named=named(tree, lists["named"]),
        pending=lists["pending"],
        rest=rest,
        **more,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class DaySession:
    """A session as a day names it once: its task, the entry that archived it that day (if
    it ended then) and the checkpoints taken of it that day, oldest first."""

    session_id: str
    task: str
    ended: Entry | None = None
    checkpoints: list[Entry] = field(default_factory=list)


def of_day(entries: list[Entry]) -> list[DaySession]:
    """The sessions a day's entries (oldest first) archive or checkpoint, in the order they
    first appear, each once."""
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        session_id = entry.details.get("session_id", "")
        ends = entry.title in ENDED
        if not session_id or not (ends or is_checkpoint(entry)):
            continue
        seen = found.setdefault(session_id, {"task": "", "ended": None, "checkpoints": []})
        seen["task"] = seen["task"] or entry.details.get("task", "")
        if ends:
            seen["ended"] = entry
        else:
            seen["checkpoints"].append(entry)
    return [DaySession(session_id, **values) for session_id, values in found.items()]


def live(tree: Material, context: HotContext, marks: Checkpoints) -> SessionView:
    """The live session of ``hot/``."""
    shown, earlier = checkpoints(marks, context.session_id)
    return SessionView(
        live=True,
        session_id=context.session_id,
        task=context.task,
        step=context.current_step,
        started=context.started,
        updated=context.updated,
        files=list(context.files_modified),
        named=named(tree, context.decisions),
        pending=list(context.pending_actions),
        checkpoints=shown,
        more_checkpoints=earlier,
    )
