"""GitHub Copilot CLI (``@github/copilot``, tested at ``tests/copilot_cli.py``'s PIN): hooks in
``.github/hooks/*.json`` (``memsite init --copilot``).

With PascalCase event names Copilot sends Claude Code's event and tool names in snake_case,
but its own arguments (``path``, ``old_str``, ``new_str``, ``file_text``) and its own result
(``tool_result.text_result_for_llm``); camelCase names send no event name at all, so they are
never mapped. It reads only a top-level ``additionalContext``. What ``read`` adds:

- ``source`` ``new`` is Claude Code's ``startup``; its ``initial_prompt`` names the session
  (Copilot starts the prompt's hook before SessionStart's has ended, so that one could not);
- an edit's lines: Copilot's result says only "File ... updated with changes.", and its edit
  replaces ``old_str`` by ``new_str`` once, so the lines that differ between the two are the
  edit's own (a line both keep is not counted, as Claude Code's ``structuredPatch`` would not);
- a command's exit status: the result text ends ``<shellId: 0 completed with exit code 3>``
  (``exit code 0`` on success); a command started in the background (``<command started in
  background with shellId: 0>``) has none, and its status is unknown, never 0.
"""

from __future__ import annotations

import re
from typing import Any

from .base import Event, Harness

EVENTS = {
    "SessionStart": "SessionStart",
    "UserPromptSubmit": "UserPromptSubmit",
    "PreToolUse": "PreToolUse",
    "PostToolUse": "PostToolUse",
    "PostToolUseFailure": "PostToolUseFailure",
    "PreCompact": "PreCompact",
    "SessionEnd": "SessionEnd",
}
# PascalCase events already name Claude Code's tools; the table is there to rename arguments
TOOLS = {"Edit": "Edit", "Write": "Write", "Bash": "Bash"}
ARGUMENTS = {
    "Edit": {"path": "file_path", "old_str": "old_string", "new_str": "new_string"},
    "Write": {"path": "file_path", "file_text": "content"},
}
SOURCES = {"new": "startup", "startup": "startup", "resume": "resume"}
MAX_COMPARED = 1_000_000  # lines before x after: 2,000 by 2,000 took 0.3 s on a loaded machine
_STATUS = re.compile(r"\n?<shellId: [^>]*? completed with exit code (-?\d+)>\s*\Z")


def read(event: Event) -> list[Event]:
    """``event`` (renamed by the table) in Claude Code's terms."""
    out = dict(event)
    if out.get("hook_event_name") == "SessionStart":
        out["source"] = SOURCES.get(str(out.get("source")), "startup")
        out["prompt"] = out.get("initial_prompt")
    result = out.get("tool_result")
    text = result.get("text_result_for_llm") if isinstance(result, dict) else None
    if out.get("tool_name") == "Bash" and "tool_response" not in out:
        out["tool_response"] = _command(text if isinstance(text, str) else "")
    elif out.get("tool_name") == "Edit" and isinstance(out.get("tool_input"), dict):
        patch = diff(out["tool_input"].get("old_string"), out["tool_input"].get("new_string"))
        out["tool_response"] = {"structuredPatch": patch, "result": text}
    return [out]


def _command(text: str) -> dict[str, Any]:
    """A command's ``tool_response``: its output without the status line, and the status
    that line gives (None when there is none)."""
    found = _STATUS.search(text)
    if found is None:
        return {"stdout": text, "exit_code": None}
    return {"stdout": text[: found.start()], "exit_code": int(found.group(1))}


def diff(old: object, new: object) -> list[dict[str, Any]]:
    """The lines ``old`` loses and ``new`` gains as one ``structuredPatch`` hunk; none (the
    strings' own lines are counted) for an edit too large to compare within the hook's time."""
    import difflib

    before = old.splitlines() if isinstance(old, str) else []
    after = new.splitlines() if isinstance(new, str) else []
    if len(before) * len(after) > MAX_COMPARED:
        return []
    lines = [
        line
        for line in difflib.unified_diff(before, after, lineterm="", n=0)
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]
    return [{"lines": lines}] if lines else []


def looks_like(event: Event) -> bool:
    """Copilot's events carry a ``timestamp`` (an ISO text in PascalCase events, a number in
    camelCase ones, which name the session ``sessionId``) and, but for PreCompact, no
    ``transcript_path``; Claude Code's carry no ``timestamp``."""
    if "sessionId" in event and "session_id" not in event:
        return True
    if not isinstance(event.get("timestamp"), str):
        return False
    return "transcript_path" not in event or event.get("hook_event_name") == "PreCompact"


HARNESS = Harness(
    name="copilot",
    title="Copilot CLI",
    events=EVENTS,
    tools=TOOLS,
    arguments=ARGUMENTS,
    read=read,
    cap=10_000,  # characters: memsite's own hook limit (Copilot's is far larger)
    nested=False,  # Copilot ignores hookSpecificOutput for SessionStart and UserPromptSubmit
    looks_like=looks_like,
)
