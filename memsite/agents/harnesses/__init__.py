"""The agent CLIs whose hooks ``memsite hook`` answers (issue 37), one module each, and how
an event names its CLI when ``--harness`` is not given."""

from __future__ import annotations

from .base import Event, Harness, Unmapped
from .claude import HARNESS as CLAUDE
from .gemini import HARNESS as GEMINI

# the others first: Claude Code's is the protocol the others borrow, so it is the fallback
HARNESSES: dict[str, Harness] = {h.name: h for h in (GEMINI, CLAUDE)}
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


__all__ = [
    "CLAUDE",
    "GEMINI",
    "HARNESSES",
    "NAMES",
    "Event",
    "Harness",
    "Unmapped",
    "detect",
    "named",
]
