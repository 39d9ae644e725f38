"""``memsite init --codex``: memsite's hooks in Codex's ``.codex/hooks.json`` (issue 37),
written into a new file or merged into the project's own as ``init --claude`` merges Claude
Code's settings (``agents/settings.py``: only memsite's own entries replaced, idempotent).

Codex 0.169.0 reads Claude Code's format here: timeouts in seconds, and a SessionEnd hook
clamped to 3 (written as 3, so Codex has nothing to clamp or warn about); matchers are
regular expressions over the tool's name (``apply_patch`` for edits, ``Bash`` for the
shell). ``Stop`` ends a turn, not the session, so it is not asked. Codex loads the file only
in a trusted project and runs each hook only once it is reviewed: ``NOTE`` says how.
"""

from __future__ import annotations

from pathlib import Path

from ... import settings

HOOKS = ".codex/hooks.json"
# event -> matcher ("" for every one)
EVENTS = {
    "SessionStart": "",
    "UserPromptSubmit": "",
    "PreToolUse": "apply_patch",
    "PostToolUse": "apply_patch|Bash",
    "PreCompact": "",
    "PostCompact": "",
    "SessionEnd": "",
}
TIMEOUTS = {"SessionEnd": 3}  # seconds Codex waits at most; memsite gives up at 2
NOTE = (
    "Codex runs them only in a trusted project, once each is reviewed: start `codex` here, "
    "trust the folder, then trust memsite's hooks in /hooks"
)


def write_hooks(project: Path, command: str | None = None) -> tuple[Path, bool]:
    """Write or merge ``project/.codex/hooks.json``; whether the file changed."""
    return settings.write_event_hooks(project, HOOKS, "codex", EVENTS, TIMEOUTS, command)
