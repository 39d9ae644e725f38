"""Which memsite session each of a harness's sessions is, and the edits not yet logged
(issue 23), kept in ``hot/harness.json`` beside the live context.

Claude Code names its sessions (``session_id``); memsite has one live session per tree. A
harness session either *started* the live one (the hook started it, so the hook ends it) or
*joined* one a person started by hand (the hook checkpoints it at the end and leaves it
live). Bursts of edits of one file are held here until the burst ends, so thirty edits in a
minute are one warm entry with a count. The file is a cache of the hooks' bookkeeping: a
missing or damaged one reads as empty, and it is replaced atomically under the hot lock.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import storage
from . import hot

STATE = "hot/harness.json"
BURST = dt.timedelta(seconds=60)  # edits of one file closer than this are one entry
PLACEHOLDER = "Claude Code session "  # the task until the session's first prompt names it
MAX_STATE = 256 * 1024


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

    def to_dict(self) -> dict[str, Any]:
        burst = None if self.burst is None else self.burst.__dict__
        return {"sessions": self.sessions, "burst": burst, "tasks": self.tasks}


def load(root: Path) -> Harness:
    """The bookkeeping, or an empty one when there is none or it cannot be read."""
    try:
        raw = storage.read_inside(root, root / STATE, limit=MAX_STATE)
        data = json.loads(raw.decode("utf-8"))
        sessions = data.get("sessions") or {}
        burst = data.get("burst")
        if not isinstance(sessions, dict):
            return Harness()
        kept = {str(k): v for k, v in sessions.items() if isinstance(v, dict)}
        tasks = data.get("tasks") or {}
        named = (
            {str(k): v for k, v in tasks.items() if isinstance(v, str)}
            if isinstance(tasks, dict)
            else {}
        )
        return Harness(kept, Burst(**burst) if isinstance(burst, dict) else None, named)
    except Exception:  # noqa: BLE001 - bookkeeping only: start again rather than fail a hook
        return Harness()


def save(root: Path, harness: Harness) -> None:
    """Replace the bookkeeping atomically (callers hold the hot lock)."""
    text = json.dumps(harness.to_dict(), indent=2, ensure_ascii=False) + "\n"
    storage.replace(root, root / STATE, text)


def lock(root: Path):  # type: ignore[no-untyped-def]
    """The hot lock, which every change of the live session takes."""
    return storage.lock(root / hot.LOCK)


def starting(root: Path):  # type: ignore[no-untyped-def]
    """The lock a harness session holds while it decides which live session is its own (a
    folder of its own: the decision itself takes the hot lock, more than once)."""
    return storage.lock(root / hot.SESSIONS)
