"""The domain values: an entry of memory, the live session (hot context), and what writing
an entry returns (its id, with what the write noticed: issue 27)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..errors import SUPERSEDES
from .inputs import escaped, stored_line

KINDS = ("decision", "learning", "activity", "note")
TIERS = ("hot", "warm", "cold")


def comma_list(text: str) -> list[str]:
    """The items of a comma-separated value (``Tags``, ``Paths``, a ``files`` detail),
    stripped, empty ones left out."""
    return [item.strip() for item in text.split(",") if item.strip()]


@dataclass(frozen=True)
class Entry:
    """One entry of memory, as read back from the tree.

    ``fields`` holds the ``- **Key:** value`` lines under the heading, keyed in lower case
    (``why``, ``risk``, ``supersedes``, ``repeats``, ``tags``, ``category``, ``author``); the id has its own
    attribute. ``details`` and ``result`` are used by activity entries only. ``path`` is
    relative to the memory root, ``line``/``end_line`` are 1-based and inclusive.
    """

    id: str
    kind: str
    tier: str
    title: str
    date: dt.date
    time: dt.time | None = None
    fields: dict[str, str] = field(default_factory=dict)
    body: str = ""
    path: str = ""
    line: int = 0
    end_line: int = 0
    details: dict[str, str] = field(default_factory=dict)
    result: str = ""

    @property
    def why(self) -> str | None:
        return self.fields.get("why")

    @property
    def risk(self) -> str | None:
        return self.fields.get("risk")

    @property
    def category(self) -> str | None:
        return self.fields.get("category")

    @property
    def supersedes(self) -> str | None:
        return self.fields.get("supersedes")

    @property
    def repeats(self) -> str | None:
        """The id of the earlier learning this one repeats (issue 27), from ``Repeats``."""
        value = (self.fields.get("repeats") or "").strip()
        return value or None

    @property
    def author(self) -> str | None:
        return self.fields.get("author")

    @property
    def tags(self) -> list[str]:
        return comma_list(self.fields.get("tags", ""))

    @property
    def paths(self) -> list[str]:
        """The code the entry governs (issue 14): files, folders and globs, relative to the
        repository root, as written in its ``Paths`` field."""
        return comma_list(self.fields.get("paths", ""))

    @property
    def commit(self) -> str | None:
        """The commit the entry names (its ``Commit`` field), a full hash when it was resolved."""
        value = (self.fields.get("commit") or "").strip()
        return value or None

    @property
    def when(self) -> dt.datetime:
        """Date and time together (midnight when the entry has no time)."""
        return dt.datetime.combine(self.date, self.time or dt.time())

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view of the entry."""
        return {
            "id": self.id,
            "kind": self.kind,
            "tier": self.tier,
            "title": self.title,
            "date": self.date.isoformat(),
            "time": self.time.isoformat() if self.time else None,
            "fields": dict(self.fields),
            "tags": self.tags,
            "paths": self.paths,
            "commit": self.commit,
            "details": dict(self.details),
            "result": self.result,
            "body": self.body,
            "path": self.path,
            "line": self.line,
            "end_line": self.end_line,
        }


@dataclass
class HotContext:
    """The live session kept in ``hot/context.json``."""

    session_id: str
    task: str
    started: str
    updated: str
    current_step: str = ""
    files_modified: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    pending_actions: list[str] = field(default_factory=list)
    # ids of this session's newest checkpoints in the warm log, oldest first (issue 11)
    checkpoints: list[str] = field(default_factory=list)
    # how many of ``files_modified`` the session had touched at its last decision, so that
    # ``decide --paths-from-session`` takes the files touched since then (issue 14)
    decided_files: int = 0
    # the files whose governing memory a PreToolUse hook already gave the agent (issue 14)
    recalled: list[str] = field(default_factory=list)
    # the pending actions carried over from an ended session, each with that session's id
    # (issue 25.4)
    carried: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        # ``checkpoints`` only once there is one, so a context without them reads as before
        extra: dict[str, object] = (
            {"checkpoints": list(self.checkpoints)} if self.checkpoints else {}
        )
        # issue 14's keys, too, only once they say something
        if self.decided_files:
            extra["decided_files"] = self.decided_files
        if self.recalled:
            extra["recalled"] = list(self.recalled)
        if self.carried:
            extra["carried"] = dict(self.carried)
        return {
            "session_id": self.session_id,
            "task": self.task,
            "current_step": self.current_step,
            "files_modified": list(self.files_modified),
            "decisions": list(self.decisions),
            "pending_actions": list(self.pending_actions),
            "started": self.started,
            "updated": self.updated,
            **extra,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> HotContext:
        """The context as ``hot/context.json`` holds it, made fit to write back (the sweep
        after issue 36): a person may edit the file, and a lone surrogate's escape in its
        task made every write of the session a ``UnicodeEncodeError``, a newline an archive
        that never read back as written. Each text is one clean line (``stored_line``), each
        file name shown with its escapes as the hooks record them (``escaped``)."""

        def text(key: str) -> str:
            value = data.get(key, "")
            return stored_line(value if isinstance(value, str) else str(value))

        def items(key: str, kept: Callable[[str], str] = stored_line) -> list[str]:
            value = data.get(key) or []
            found = [kept(str(item)) for item in (value if isinstance(value, list) else [value])]
            return [item for item in found if item.strip()]

        return cls(
            session_id=text("session_id"),
            task=text("task"),
            started=text("started"),
            updated=text("updated"),
            current_step=text("current_step"),
            files_modified=items("files_modified", escaped),
            decisions=items("decisions"),
            pending_actions=items("pending_actions"),
            checkpoints=items("checkpoints"),
            decided_files=_count(data.get("decided_files")),
            recalled=items("recalled", escaped),
            carried=_sources(data.get("carried")),
        )


@dataclass(frozen=True)
class SessionStart:
    """What ``start_session`` did: the new context and any unfinished session it archived."""

    context: HotContext
    archived: HotContext | None = None
    archived_id: str | None = None


def _sources(value: object) -> dict[str, str]:
    """The ``carried`` map of pending text to session id; empty when it is not one."""
    if not isinstance(value, dict):
        return {}
    return {stored_line(str(k)): stored_line(str(v)) for k, v in value.items()}


def _count(value: object) -> int:
    """A non-negative whole number from the context, 0 when it is missing or not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class Notice:
    """An entry a new one may replace (or repeats): its id, title, date and ``why`` it was
    named (``governs services/auth/passwords.py``, ``close topic (0.42)``)."""

    id: str
    title: str
    date: dt.date
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title, "date": self.date.isoformat(), "why": self.why}

    def line(self) -> str:
        """The notice as ``memsite decide`` prints it on stderr (``supersedes=`` in MCP)."""
        return (
            f"may replace {self.id}: {self.title} ({self.date.isoformat()}); "
            f"pass {SUPERSEDES.given(self.id)} if it does"
        )

    def repeated(self) -> str:
        """The line that says a new learning repeats this one."""
        return f"repeats {self.id}: {self.title} ({self.date.isoformat()})"


class Written(str):
    """The id of an entry just written (a ``str``, as ``decide`` and ``learn`` always
    returned), carrying what the write noticed: ``may_supersede`` for a decision, ``repeats``
    for a learning."""

    may_supersede: tuple[Notice, ...]
    repeats: Notice | None

    def __new__(
        cls, entry_id: str, may_supersede: Iterable[Notice] = (), repeats: Notice | None = None
    ) -> Written:
        made = super().__new__(cls, entry_id)
        made.may_supersede = tuple(may_supersede)
        made.repeats = repeats
        return made


@dataclass(frozen=True)
class Successor:
    """The entry that now holds in place of a superseded one."""

    id: str
    title: str
    date: dt.date

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title, "date": self.date.isoformat()}
