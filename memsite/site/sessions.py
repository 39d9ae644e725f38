"""A session as the site shows it, live or archived, so both render from one template.

The live session comes from ``hot/context.json``; an archived one from its ``session end``
or ``session archived`` entry in the warm log, whose body holds the same lists as markdown
(``**Files modified:**``, ``**Decisions:**``, ``**Pending:**``, then ``- item`` lines; see
``store.session.live.snapshot``). Both become a ``SessionView``: files, the decisions (and
learnings) it names with their links and status, pending actions, its checkpoints, and
whatever else an archive's body holds (issue 12).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..store.markup import split_lines
from ..store.model import Entry, HotContext
from ..store.session.checkpoints import is_checkpoint
from .material import Link

if TYPE_CHECKING:
    from .material import Material

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
    badge: str = ""  # current, superseded or learning


@dataclass(frozen=True)
class CheckpointLine:
    """One checkpoint of a session: when, its summary, the id of its log entry."""

    id: str
    time: str
    summary: str


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

    @property
    def named_label(self) -> str:
        if self.named and all(n.badge == "learning" for n in self.named):
            return "Learnings"
        if any(n.badge == "learning" for n in self.named):
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
        elif entry.kind == "learning":
            found.append(Named(entry_id, tree.links.get(entry_id), "learning"))
        else:
            status = "superseded" if tree.superseded_by.get(entry_id) else "current"
            found.append(Named(entry_id, tree.links.get(entry_id), status))
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
        CheckpointLine(
            e.id,
            e.time.strftime("%H:%M") if e.time else "",
            _shortened(" ".join(e.result.split())),
        )
        for e in shown
    ]
    return lines, len(mine) - len(shown)


def _shortened(text: str) -> str:
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1].rstrip() + "…"


def archived(tree: Material, entry: Entry, marks: Checkpoints) -> SessionView:
    """The session an archive entry holds."""
    details = entry.details
    lists, rest = split_archive(entry.body)
    session_id = details.get("session_id", "")
    shown, earlier = checkpoints(marks, session_id)
    return SessionView(
        live=False,
        session_id=session_id,
        task=details.get("task", ""),
        step=details.get("current_step", ""),
        started=details.get("started", ""),
        updated=details.get("updated", ""),
        summary=entry.result,
        files=lists["files"],
        named=named(tree, lists["named"]),
        pending=lists["pending"],
        checkpoints=shown,
        more_checkpoints=earlier,
        rest=rest,
    )


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
