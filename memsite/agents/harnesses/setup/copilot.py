"""``memsite init --copilot``: memsite's hooks in GitHub Copilot CLI's ``.github/hooks/
memsite.json`` (issue 37), written new or merged into the file there.

Copilot reads every ``.github/hooks/*.json`` of the repository: ``{"version": 1, "hooks":
{EVENT: [{"type": "command", "bash": CMD, "timeoutSec": 10, "matcher": ...}]}}``. Events are
named in PascalCase, the only names whose input says which event it is (camelCase names send
none); timeouts are in seconds; a tool event's ``matcher`` is a ``|`` list of the tool names
Copilot's PascalCase events carry (Claude Code's: ``Edit``, ``Write``, ``Bash``). As for
Claude Code, only memsite's own entries are replaced (its ``memsite hook`` with or without
``--harness copilot``), and taken out of events memsite does not map (camelCase names, whose
input names no event); every other hook and setting is kept, and writing twice changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....errors import InvalidInput
from ... import settings
from ...settings import hook_command, is_ours, without_ours

CONFIG = ".github/hooks/memsite.json"
HARNESS = "copilot"
TIMEOUT = 10  # seconds (timeoutSec); memsite answers within 5
EDITS = "Edit|Write"
# event -> matcher ("" for events that take none)
EVENTS = {
    "SessionStart": "",
    "UserPromptSubmit": "",
    "PreToolUse": EDITS,
    "PostToolUse": f"{EDITS}|Bash",
    "PostToolUseFailure": f"{EDITS}|Bash",
    "PreCompact": "",
    "SessionEnd": "",
}
NOTE = (
    "Copilot CLI runs a repository's hooks only in a folder it trusts: answer its trust prompt "
    "once (with -p: --trust-folder, or COPILOT_ALLOW_ALL=true)"
)


def _ours(hook: object) -> bool:
    return is_ours(hook, "bash", HARNESS)


def _entries(entries: list[Any], entry: dict[str, Any]) -> list[Any]:
    """An event's entries with memsite's ``entry`` in place of its first one (or at the end),
    memsite's others taken out, from Claude-style groups too; the rest kept where they are."""
    out: list[Any] = []
    placed = False
    for item in entries:
        if _ours(item):
            if not placed:
                out.append(entry)
                placed = True
            continue
        kept = without_ours(item, _ours)
        if kept is not None:
            out.append(kept)
    return out if placed else [*out, entry]


def merged(config: dict[str, Any], command: str) -> dict[str, Any]:
    """``config`` with memsite's hook for every event, every other hook kept where it is."""
    out = {"version": 1, **config}
    hooks = out.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f"{CONFIG}: 'hooks' is not an object; fix it by hand first")
    hooks = dict(hooks)
    for event, matcher in EVENTS.items():
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            raise InvalidInput(f"{CONFIG}: hooks.{event} is not a list; fix it by hand first")
        entry: dict[str, Any] = {"type": "command", "bash": command, "timeoutSec": TIMEOUT}
        if matcher:
            entry["matcher"] = matcher
        hooks[event] = _entries(entries, entry)
    for event in [name for name in hooks if name not in EVENTS]:
        # memsite's own hook under a name it cannot map (camelCase: no event name is sent)
        # runs for nothing on every turn: it goes, and the event with it when it held no other
        entries = hooks[event]
        if not isinstance(entries, list):
            continue
        kept = [item for item in entries if not _ours(item)]
        kept = [k for k in (without_ours(item, _ours) for item in kept) if k is not None]
        if kept != entries:
            hooks[event] = kept
            if not kept:
                del hooks[event]
    out["hooks"] = hooks
    return out


def write_hooks(project: Path, command: str | None = None) -> tuple[Path, bool]:
    """Write or merge ``project/.github/hooks/memsite.json``; whether the file changed."""
    hook = command or hook_command(HARNESS)
    return settings.write_hooks(project, CONFIG, lambda existing: merged(existing, hook))
