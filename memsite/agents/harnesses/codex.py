"""Codex (``@openai/codex``, tested at ``tests/codex_cli.py``'s PIN): Claude Code's hook
format in ``.codex/hooks.json`` (``memsite init --codex``), with its own edit tool and no
failure event.

- Edits arrive as ``apply_patch`` with the patch text in ``tool_input.command``, relative
  paths, maybe several files: each file is one canonical ``Edit`` (``patches``), its lines
  from the diff Codex logged (``rollout``), else from the patch.
- The shell arrives as ``Bash``; a command that exits 3 still fires ``PostToolUse`` with its
  output only: the status is read from the session log, unknown (never 0) when it is not there.
- Context is counted in bytes: over 10,000 (2,500 tokens of 4 bytes) Codex keeps a head and
  a tail and writes the rest to a world-readable file, so answers fit ``CAP``.
- PostCompact carries no summary: it is read from the session log too.
- SessionEnd hooks are clamped to 3 s: memsite gives up on it first (``time_limits``).
- ``Stop`` ends a turn, not the session: it is not mapped (``init --codex`` does not ask it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from .base import NOTES, Event, Harness, Unmapped
from .patches import changes, nameless
from .rollout import compaction, completed, exit_code

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
# 10,000 bytes pass whole and 10,001 are cut (measured with 0.169.0, ASCII and two-byte
# text alike); the margin is for the cut line's own bytes
CAP = 9_800
SESSION_END_LIMIT = 2.0  # seconds: Codex kills a SessionEnd hook at 3, start-up included
PATCH = "apply_patch"
_EXIT = re.compile(r"^Exit code: (-?\d+)")


def read(event: Event) -> list[Event]:
    """The canonical events of one Codex event (already renamed)."""
    name, tool = event.get("hook_event_name"), event.get("tool_name")
    if tool == PATCH and name in ("PreToolUse", "PostToolUse"):
        return _patched(event, after=name == "PostToolUse")
    if tool == "Bash" and name == "PostToolUse":
        return [_ran(event)]
    if name == "PostCompact" and not event.get("compact_summary"):
        return [_compacted(event)]
    return [event]


def _patched(event: Event, after: bool) -> list[Event]:
    """One ``Edit`` per file of the patch; a patch that failed is a ``PostToolUseFailure``."""
    tool_input = event.get("tool_input")
    text = tool_input.get("command") if isinstance(tool_input, Mapping) else None
    if not isinstance(text, str):
        raise Unmapped("Codex apply_patch came without its patch (tool_input.command)")
    found = changes(text)
    if not found:
        raise Unmapped("Codex apply_patch names no file (no *** Add/Update/Delete File: path)")
    unnamed = nameless(text)
    notes = [f"{unnamed} file header(s) of Codex's patch name no file"] if unnamed else []
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else ""
    failed = after and _patch_status(event.get("tool_response")) not in (0, None)
    item = completed(event.get("transcript_path"), event.get("tool_use_id")) if after else None
    logged = item.get("changes") if item is not None else None
    out: list[Event] = []
    for change in found:
        lines = _logged_lines(_logged(logged, cwd, change.path))
        one: Event = {
            **event,
            "tool_name": "Edit",
            "tool_input": {"file_path": os.path.join(cwd, change.target)},
        }
        if after:
            patch = {"lines": list(change.lines if lines is None else lines)}
            one["tool_response"] = {"structuredPatch": [patch]}
        if failed:
            one["hook_event_name"] = "PostToolUseFailure"
            one["error"] = str(event.get("tool_response") or "").replace(
                "Exit code: ", "Exit code ", 1
            )
        out.append(one)
    if notes:
        out[0][NOTES] = notes
    return out


def _logged(logged: object, cwd: str, path: str) -> object:
    """The logged change of the file ``path`` names (Codex logs absolute paths)."""
    if not isinstance(logged, Mapping):
        return None
    wanted = os.path.normpath(os.path.join(cwd, path))
    known = {os.path.normpath(str(key)): value for key, value in logged.items()}
    if wanted in known:
        return known[wanted]
    tail = os.sep + os.path.normpath(path).lstrip(os.sep)
    ends = [value for key, value in known.items() if key.endswith(tail)]
    return ends[0] if len(ends) == 1 else None


def _patch_status(response: object) -> int | None:
    """The status Codex's own result of ``apply_patch`` states ("Exit code: 0 ...")."""
    found = _EXIT.match(response) if isinstance(response, str) else None
    return int(found.group(1)) if found else None


def _logged_lines(change: object) -> list[str] | None:
    """The ``+``/``-`` lines of one file of a logged ``FileChange``; None when not logged."""
    if not isinstance(change, Mapping):
        return None
    diff, content = change.get("unified_diff"), change.get("content")
    if isinstance(diff, str):
        return [
            line
            for line in diff.splitlines()
            if line[:1] in ("+", "-") and not line.startswith(("+++ ", "--- "))
        ]
    if isinstance(content, str) and change.get("type") in ("add", "delete"):
        sign = "+" if change.get("type") == "add" else "-"
        return [sign + line for line in content.splitlines()]
    return None


def _ran(event: Event) -> Event:
    """A command's PostToolUse with its exit status from the session log (None: unknown)."""
    item = completed(event.get("transcript_path"), event.get("tool_use_id"))
    status = exit_code(item)
    output = event.get("tool_response")
    response: dict[str, Any] = {
        "stdout": output if isinstance(output, str) else "",
        "exit_code": status,
    }
    out: Event = {**event, "tool_response": response}
    if status is None:
        out[NOTES] = [
            "Codex's session log (transcript_path) does not say how the command exited; "
            "recorded as unknown (?)"
        ]
    return out


def _compacted(event: Event) -> Event:
    """A PostCompact with the summary Codex logged (its event carries none)."""
    summary = compaction(event.get("transcript_path"))
    if summary is not None:
        return {**event, "compact_summary": summary}
    note = "Codex's session log holds no summary of the compaction; the checkpoint has none"
    return {**event, NOTES: [note]}


def looks_like(event: Event) -> bool:
    """Codex's events: an ``apply_patch``, a ``turn_id``, or a session log named "rollout-"."""
    if event.get("tool_name") == PATCH or "turn_id" in event:
        return True
    path = event.get("transcript_path")
    name = os.path.basename(path) if isinstance(path, str) else ""
    return name.startswith("rollout-") and name.endswith(".jsonl")


HARNESS = Harness(
    name="codex",
    title="Codex",
    events={name: name for name in EVENTS},
    read=read,
    cap=CAP,
    counts="bytes",
    looks_like=looks_like,
    time_limits={"SessionEnd": SESSION_END_LIMIT},
)
