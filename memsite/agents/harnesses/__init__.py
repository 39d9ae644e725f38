"""The agent CLIs whose hooks ``memsite hook`` answers (issue 37), one module each, and how
an event names its CLI when ``--harness`` is not given."""

from __future__ import annotations

import json

from .base import NOTES, Event, Harness, Unmapped
from .claude import HARNESS as CLAUDE
from .codex import HARNESS as CODEX
from .copilot import HARNESS as COPILOT
from .gemini import HARNESS as GEMINI
from .qwen import HARNESS as QWEN

# the others first: Claude Code's is the protocol the others borrow, so it is the fallback
HARNESSES: dict[str, Harness] = {h.name: h for h in (CODEX, GEMINI, QWEN, COPILOT, CLAUDE)}
NAMES = tuple(HARNESSES)


def named(name: str) -> Harness:
    """The harness called ``name`` (``--harness``)."""
    return HARNESSES[name]


def detect(event: Event) -> Harness:
    """The harness whose events look like ``event``; Claude Code's when none says so."""
    for harness in HARNESSES.values():
        if harness.looks_like is not None and harness.looks_like(event):
            return harness
    return CLAUDE


def chosen(event: Event, name: str | None = None) -> Harness:
    """The harness ``name`` (``--harness``), else the one ``event`` looks like."""
    return named(name) if name else detect(event)


def time_limit(raw: bytes, name: str | None, default: float) -> float:
    """``default`` seconds, or less where the CLI that sent the event (its JSON in ``raw``)
    kills a hook sooner (Codex's 3 s for SessionEnd): memsite gives up first, and says so.
    An event that is not a JSON object gets ``default`` (the hook says what is wrong)."""
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):
        return default
    if not isinstance(event, dict):
        return default
    own = chosen(event, name).time_limits.get(str(event.get("hook_event_name")))
    return min(default, own) if own is not None else default


__all__ = [
    "CLAUDE",
    "CODEX",
    "COPILOT",
    "GEMINI",
    "QWEN",
    "HARNESSES",
    "NAMES",
    "NOTES",
    "Event",
    "Harness",
    "Unmapped",
    "chosen",
    "detect",
    "named",
    "time_limit",
]
