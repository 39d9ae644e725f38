"""Which memsite session each of a harness's sessions is, and the edits not yet logged
(issue 23), kept in ``hot/harness.json`` beside the live context.

Claude Code names its sessions (``session_id``); memsite has one live session per tree. A
harness session either *started* the live one (the hook started it, so the hook ends it) or
*joined* one a person started by hand (the hook checkpoints it at the end and leaves it
live). Bursts of edits of one file are held here until the burst ends, so thirty edits in a
minute are one warm entry with a count. The file is a cache of the hooks' bookkeeping: a
missing or damaged one reads as empty (``problem`` says why, for the hook to tell), and it is
replaced atomically under the hot lock. It stays small: the agent's task ids are a bounded
most-recent set, forgotten once done, and what is saved is kept under ``BUDGET`` bytes by
forgetting the oldest task ids, then ended sessions, never a live one (issue 34).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import reading, storage
from . import hot

STATE = "hot/harness.json"
BURST = dt.timedelta(seconds=60)  # edits of one file closer than this are one entry
MAX_STATE = 256 * 1024  # the most that is read
BUDGET = MAX_STATE // 4  # the most that is saved, live mappings aside
MAX_SESSIONS = 32  # a tree is followed by a few harness sessions at a time
MAX_TASKS = 200  # the agent's open tasks kept by id, the most recent
TASK_ID = 100  # characters: a longer task id is not kept (Claude Code's are small numbers)


@dataclass
class Burst:
    """Edits of one file not logged yet: how many, the lines they added and removed."""

    file: str
    first: str
    last: str
    count: int = 1
    added: int = 0
    removed: int = 0

    def continues(self, file: str, now: dt.datetime) -> bool:
        try:
            last = dt.datetime.fromisoformat(self.last)
        except ValueError:
            return False
        return file == self.file and dt.timedelta(0) <= now - last <= BURST


@dataclass
class Harness:
    """The harness sessions known to this tree, by their id, and the open burst of edits."""

    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    burst: Burst | None = None
    tasks: dict[str, str] = field(default_factory=dict)  # the agent's task ids -> subjects
    problem: str = ""  # why the file could not be read (then all else is empty); not saved

    def to_dict(self) -> dict[str, Any]:
        burst = None if self.burst is None else self.burst.__dict__
        return {"sessions": self.sessions, "burst": burst, "tasks": self.tasks}

    def remember(self, sid: str, record: dict[str, Any]) -> None:
        """Keep ``record`` for harness session ``sid`` (the newest); past ``MAX_SESSIONS``
        the oldest ended ones are forgotten first."""
        self.sessions.pop(sid, None)
        self.sessions[sid] = record
        while len(self.sessions) > MAX_SESSIONS and self._forget_ended():
            pass
        while len(self.sessions) > MAX_SESSIONS:
            self.sessions.pop(next(iter(self.sessions)))

    def remember_task(self, number: str, subject: str) -> None:
        """Keep ``subject`` for task ``number`` (the newest); past ``MAX_TASKS`` the oldest
        task ids are forgotten."""
        if len(number) > TASK_ID:
            return
        self.tasks.pop(number, None)
        self.tasks[number] = subject
        while len(self.tasks) > MAX_TASKS:
            self.tasks.pop(next(iter(self.tasks)))

    def _forget_ended(self) -> bool:
        ended = next((sid for sid, rec in self.sessions.items() if rec.get("ended")), None)
        if ended is not None:
            del self.sessions[ended]
        return ended is not None

    def fit(self) -> str:
        """The JSON to save, within ``BUDGET`` bytes: the oldest task ids, then the oldest
        ended sessions, are forgotten until it fits (live mappings are never forgotten)."""
        text = _dumped(self)
        while len(text.encode("utf-8")) > BUDGET:
            if self.tasks:
                for number in list(self.tasks)[: max(1, len(self.tasks) // 4)]:
                    del self.tasks[number]
            elif not self._forget_ended():
                break
            text = _dumped(self)
        return text


def _dumped(harness: Harness) -> str:
    return json.dumps(harness.to_dict(), indent=2, ensure_ascii=False) + "\n"


def load(root: Path) -> Harness:
    """The bookkeeping, or an empty one when there is none or it cannot be read (then
    ``problem`` says why)."""
    try:
        raw = reading.read_inside(root, root / STATE, limit=MAX_STATE)
    except FileNotFoundError:
        return Harness()
    except Exception as err:  # noqa: BLE001 - bookkeeping only: start again, never fail a hook
        return _unread(err)
    try:
        data = json.loads(raw.decode("utf-8"))
        sessions = (data.get("sessions") or {}) if isinstance(data, dict) else None
        if not isinstance(sessions, dict):
            return _unread(ValueError("not an object of sessions"))
        burst = data.get("burst")
        kept = {str(k): v for k, v in sessions.items() if isinstance(v, dict)}
        tasks = data.get("tasks") or {}
        named = (
            {str(k): v for k, v in tasks.items() if isinstance(v, str)}
            if isinstance(tasks, dict)
            else {}
        )
        return Harness(kept, Burst(**burst) if isinstance(burst, dict) else None, named)
    except Exception as err:  # noqa: BLE001 - as above
        return _unread(err)


def _unread(err: Exception) -> Harness:
    why = " ".join(str(err).split()) or type(err).__name__
    return Harness(
        problem=f"{STATE} could not be read ({why}); the sessions it followed are forgotten"
    )


def save(root: Path, harness: Harness) -> None:
    """Replace the bookkeeping atomically (callers hold the hot lock)."""
    storage.replace(root, root / STATE, harness.fit())


def lock(root: Path):  # type: ignore[no-untyped-def]
    """The hot lock, which every change of the live session takes."""
    return storage.lock(root / hot.LOCK)


def starting(root: Path):  # type: ignore[no-untyped-def]
    """The lock a harness session holds while it decides which live session is its own (a
    folder of its own: the decision itself takes the hot lock, more than once)."""
    return storage.lock(root / hot.SESSIONS)
