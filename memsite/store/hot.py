"""The hot context (``hot/context.json``): load, save atomically, render as "where were we?"."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import MemsiteError
from . import storage
from .model import HotContext

CONTEXT = "hot/context.json"
LOCK = "hot"  # the folder is locked while the context is read-modified-written


class BrokenContext(MemsiteError):
    """``hot/context.json`` exists but is not a valid session."""


def load(root: Path) -> HotContext | None:
    path = root / CONTEXT
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise BrokenContext(f"{path}: cannot read ({err.strerror})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BrokenContext(f"{path}: not valid JSON ({err}); fix or delete it") from None
    if not isinstance(data, dict) or not data.get("session_id"):
        raise BrokenContext(f"{path}: not a session (no session_id); fix or delete it")
    return HotContext.from_dict(data)


def save(root: Path, context: HotContext) -> None:
    """Replace the context atomically. Callers hold the ``hot/`` lock, so any temporary file
    still lying in ``hot/`` was left by a writer that was killed: it is removed."""
    text = json.dumps(context.to_dict(), indent=2, ensure_ascii=False) + "\n"
    for leftover in (root / "hot").glob(".context.json.*.tmp"):
        leftover.unlink(missing_ok=True)
    storage.replace(root, root / CONTEXT, text)


def clear(root: Path) -> None:
    storage.remove(root, root / CONTEXT)


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
