"""``memsite init --claude``: the hooks block of Claude Code's ``.claude/settings.json``
(issue 23), written into a new file or merged into the project's own.

Each event memsite answers gets one matcher group whose command is the absolute path of the
memsite that ran ``init`` (the harness's PATH may not hold a virtualenv's ``bin/``). Groups
that already call ``memsite hook`` are updated in place, every other hook and setting is
kept, and writing the same block twice changes nothing.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..store import storage

SETTINGS = ".claude/settings.json"
EDITS = "Edit|Write|MultiEdit|NotebookEdit"
TIMEOUT = 10  # seconds Claude Code waits; memsite answers within 5
# event -> matcher ("" for events that take none)
EVENTS = {
    "SessionStart": "startup|resume|clear|compact|fork",
    "UserPromptSubmit": "",
    "PreToolUse": EDITS,
    "PostToolUse": f"{EDITS}|Bash|TodoWrite|TaskCreate|TaskUpdate",
    "PostToolUseFailure": f"{EDITS}|Bash",
    "PreCompact": "auto|manual",
    "PostCompact": "auto|manual",
    "SessionEnd": "",
}


def hook_command() -> str:
    """The command that runs this memsite's ``hook``, by absolute path."""
    script = Path(sys.executable).parent / "memsite"
    if script.is_file():
        return f"{shlex.quote(str(script))} hook"
    return f"{shlex.quote(sys.executable)} -m memsite hook"


def _ours(group: object) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and "memsite" in str(h.get("command", "")) and
        str(h.get("command", "")).rstrip().endswith(" hook")
        for h in hooks
    )  # fmt: skip


def merged(settings: dict[str, Any], command: str) -> dict[str, Any]:
    """``settings`` with memsite's hook group for every event (others kept as they are)."""
    out = dict(settings)
    hooks = out.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f"{SETTINGS}: 'hooks' is not an object; fix it by hand first")
    hooks = dict(hooks)
    for event, matcher in EVENTS.items():
        group: dict[str, Any] = {
            "hooks": [{"type": "command", "command": command, "timeout": TIMEOUT}]
        }
        if matcher:
            group = {"matcher": matcher, **group}
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{SETTINGS}: hooks.{event} is not a list; fix it by hand first")
        kept = [g for g in groups if not _ours(g)]
        hooks[event] = [*kept, group]
    out["hooks"] = hooks
    return out


def write_settings(project: Path, command: str | None = None) -> tuple[Path, bool]:
    """Write or merge ``project/.claude/settings.json``; whether the file changed."""
    path = project / SETTINGS
    existing: dict[str, Any] = {}
    if path.exists():
        try:
            existing = json.loads(storage.read_inside(project, path, limit=1 << 20))
        except (ValueError, UnicodeDecodeError) as err:
            raise InvalidInput(f"{path}: not JSON ({err}); fix it by hand first") from None
        if not isinstance(existing, dict):
            raise InvalidInput(f"{path}: not a JSON object; fix it by hand first")
    wanted = merged(existing, command or hook_command())
    if wanted == existing:
        return path, False
    storage.replace(project, path, json.dumps(wanted, indent=2) + "\n")
    return path, True
