"""Claude Code (``@anthropic-ai/claude-code``, tested at ``tests/claude_code.py``'s PIN): the
protocol memsite speaks natively, so its table maps every event to itself."""

from __future__ import annotations

from .base import Harness

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)

HARNESS = Harness(
    name="claude",
    title="Claude Code",
    events={name: name for name in EVENTS},
    cap=10_000,  # characters of hook context Claude Code takes whole (see payloads/recall.py)
)
