"""The hot context (``hot/context.json``): load, save atomically, render as "where were we?"."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from ...errors import MemsiteError, UnsafePath
from .. import storage
from ..model import HotContext

CONTEXT = "hot/context.json"
LOCK = "hot"  # the folder is locked while the context is read-modified-written


# A live session is a task, a step and a few lists; megabytes of it are damage, not state.
MAX_CONTEXT = 4 * 1024 * 1024


class BrokenContext(MemsiteError):
    """``hot/context.json`` exists but is not a valid session."""


def load(root: Path) -> HotContext | None:
    path = root / CONTEXT
    try:
        raw = storage.read_inside(root, path)
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
        return HotContext.from_dict(data)
    except (TypeError, ValueError, AttributeError, RecursionError) as err:
        raise BrokenContext(f"{path}: not a session ({err}); fix or delete it") from None


def save(root: Path, context: HotContext) -> None:
    """Replace the context atomically. Callers hold the ``hot/`` lock, so any temporary file
    still lying in ``hot/`` was left by a writer that was killed: it is removed."""
    text = json.dumps(context.to_dict(), indent=2, ensure_ascii=False) + "\n"
    for leftover in (root / "hot").glob(".context.json.*.tmp"):
        leftover.unlink(missing_ok=True)
    storage.replace(root, root / CONTEXT, text)


def remember_recall(root: Path, path: str) -> bool:
    """Note in the live session that the agent was given the memory about ``path``; False
    when it already was (or there is no live session to remember it in)."""
    with storage.lock(root / LOCK):
        context = load(root)
        if context is None or path in context.recalled:
            return False
        context.recalled.append(path)
        save(root, context)
        return True


def clear(root: Path) -> None:
    storage.remove(root, root / CONTEXT)


def started_after(context: HotContext, moment: dt.datetime) -> bool:
    """Whether the session started after ``moment`` (False when its start cannot be read)."""
    try:
        return dt.datetime.fromisoformat(context.started) > moment
    except (TypeError, ValueError):
        return False


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
        ("Pending", [f"- [ ] {item}" for item in context.pending_actions]),
        ("Decisions this session", [f"- {item}" for item in context.decisions]),
        ("Files modified", [f"- `{item}`" for item in context.files_modified]),
    )
    for title, items in sections:
        if items:
            out += ["", f"## {title}", "", *items]
    return "\n".join(out) + "\n"
