"""The hot context (``hot/context.json``): load, save atomically, render as "where were we?".

A second Claude Code session running beside the first in one repository keeps its own live
session in ``hot/sessions/<its id>.json`` (issue 23): the hook runs each event inside
:func:`using` that file, so every read and write of "the live session" below it (the
journal's, the checkpoints', prime's) is that session's.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from ...errors import MemsiteError, UnsafePath
from .. import reading, storage
from ..inputs import escaped
from ..model import HotContext

CONTEXT = "hot/context.json"
LOCK = "hot"  # the folder is locked while the context is read-modified-written
SESSIONS = "hot/sessions"  # the live sessions of harness sessions beside the first one
_FILE: ContextVar[str] = ContextVar("memsite_hot_file", default=CONTEXT)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def current_file() -> str:
    """The live session's file, relative to the tree (``hot/context.json`` unless a hook
    runs inside :func:`using` another)."""
    return _FILE.get()


@contextlib.contextmanager
def using(rel: str | None) -> Iterator[None]:
    """Make ``rel`` (``hot/context.json`` or a file of ``hot/sessions/``) the live session
    for the calls inside; ``None`` keeps the current one."""
    if rel is None:
        yield
        return
    if rel != CONTEXT and not (rel.startswith(SESSIONS + "/") and rel.count("/") == 2):
        raise MemsiteError(f"{rel}: not a live-session file of hot/")
    token = _FILE.set(rel)
    try:
        yield
    finally:
        _FILE.reset(token)


def session_file(harness_id: str) -> str:
    """The file of the live session of one harness session beside the first."""
    name = _UNSAFE.sub("-", harness_id).strip("-")[:64] or "session"
    return f"{SESSIONS}/{name}.json"


def live_files(root: Path) -> list[str]:
    """Every live-session file of the tree: ``hot/context.json`` first, when it exists."""
    found = [CONTEXT] if (root / CONTEXT).is_file() else []
    folder = root / SESSIONS
    if folder.is_dir():
        found += sorted(f"{SESSIONS}/{p.name}" for p in folder.glob("*.json") if p.is_file())
    return found


def live_contexts(root: Path) -> list[tuple[str, HotContext]]:
    """Every live session of the tree with its file, in :func:`live_files`' order."""
    found = []
    for rel in live_files(root):
        with using(rel):
            context = load(root)
        if context is not None:
            found.append((rel, context))
    return found


# A live session untouched this long is stale: the site says so, and no new agent session
# joins it (the next SessionStart archives it, issue 37).
STALE = dt.timedelta(hours=24)


def moment(stamp: str) -> dt.datetime | None:
    """A time the context holds (``started``, ``updated``) as a naive local time, like every
    ``now`` memsite compares it with; None when it is no time. One a person gave with its
    offset (``+05:00``) made ``checkpoint`` a ``TypeError`` (the sweep after issue 36)."""
    try:
        found = dt.datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return None
    try:
        return found.astimezone().replace(tzinfo=None) if found.tzinfo else found
    except (OverflowError, ValueError):  # an offset that takes it past year 1 or 9999
        return None


def last_touched(context: HotContext) -> dt.datetime | None:
    """When ``context`` was last updated, as a naive local time (None when it does not say)."""
    return moment(context.updated)


# A live session is a task, a step and a few lists; megabytes of it are damage, not state.
MAX_CONTEXT = 4 * 1024 * 1024


class BrokenContext(MemsiteError):
    """``hot/context.json`` exists but is not a valid session."""


def load(root: Path) -> HotContext | None:
    path = root / current_file()
    try:
        raw = reading.read_inside(root, path)
    except FileNotFoundError:
        return None
    except UnsafePath as err:
        raise UnsafePath(f"{err}; replace the link with a file") from None
    except OSError as err:
        raise BrokenContext(f"{path}: cannot read ({err.strerror})") from None
    if len(raw) > MAX_CONTEXT:
        raise BrokenContext(
            f"{path}: {len(raw):,} bytes, over the {MAX_CONTEXT:,}-byte limit of a live "
            "session; fix or delete it"
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BrokenContext(f"{path}: not valid JSON ({err}); fix or delete it") from None
    except (ValueError, RecursionError) as err:
        # a number of thousands of digits, or arrays nested thousands deep (issue 15.14)
        what = "nested too deeply" if isinstance(err, RecursionError) else str(err).split(";")[0]
        raise BrokenContext(f"{path}: not a usable session ({what}); fix or delete it") from None
    if not isinstance(data, dict) or not data.get("session_id"):
        raise BrokenContext(f"{path}: not a session (no session_id); fix or delete it")
    try:
        context = HotContext.from_dict(data)
    except (TypeError, ValueError, AttributeError, RecursionError) as err:
        raise BrokenContext(f"{path}: not a session ({err}); fix or delete it") from None
    if not context.session_id:  # only control characters
        raise BrokenContext(f"{path}: not a session (no session_id); fix or delete it")
    return context


def save(root: Path, context: HotContext) -> None:
    """Replace the context atomically. Callers hold the ``hot/`` lock, so any temporary file
    still lying in ``hot/`` was left by a writer that was killed: it is removed."""
    text = json.dumps(context.to_dict(), indent=2, ensure_ascii=False) + "\n"
    path = root / current_file()
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        leftover.unlink(missing_ok=True)
    storage.replace(root, path, text)


def remember_recall(root: Path, path: str) -> bool:
    """Note in the live session that the agent was given the memory about ``path``; False
    when it already was (or there is no live session to remember it in)."""
    with storage.lock(root / LOCK):
        context = load(root)
        # as the context reads back: a name from an agent may hold a lone surrogate
        path = escaped(path)
        if context is None or path in context.recalled:
            return False
        context.recalled.append(path)
        save(root, context)
        return True


def clear(root: Path) -> None:
    storage.remove(root, root / current_file())


def started_after(context: HotContext, after: dt.datetime) -> bool:
    """Whether the session started after ``after`` (False when its start cannot be read)."""
    started = moment(context.started)
    return started is not None and started > after


def render(context: HotContext) -> str:
    """The hot context as markdown, for people and for injection into an agent's context."""
    out = [
        "# Where were we?",
        "",
        f"**Task:** {context.task}",
        f"**Session:** `{context.session_id}` (started {context.started}, updated {context.updated})",
        f"**Current step:** {context.current_step or '(none yet)'}",
    ]
    sections = (
        ("Pending", [_pending(context, item) for item in context.pending_actions]),
        ("Decisions this session", [f"- {item}" for item in context.decisions]),
        ("Files modified", [f"- `{item}`" for item in context.files_modified]),
    )
    for title, items in sections:
        if items:
            out += ["", f"## {title}", "", *items]
    return "\n".join(out) + "\n"


def _pending(context: HotContext, item: str) -> str:
    source = context.carried.get(item)
    return f"- [ ] {item}" + (f" (carried from `{source}`)" if source else "")
