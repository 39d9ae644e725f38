"""``memsite init --qwen``: memsite's hooks in Qwen Code's ``.qwen/settings.json`` (issue 37),
Claude Code's format with Qwen Code's event sources, tool ids and matcher rules, merged as
``init --claude`` merges its own (``agents/settings.py``).

Matchers: a ``|`` list is compared entry by entry and then read as an unanchored regular
expression (``edit`` would also match ``notebook_edit``), so the tool ids are anchored.
``PreToolUse`` is left out (its context never reaches the model outside ACP: the governing
decision comes with ``PostToolUse``), and so is a failing edit (nothing was edited).
Timeouts are seconds (a value of 1000 or more would be read as milliseconds).
"""

from __future__ import annotations

from pathlib import Path

from ... import settings

SETTINGS = ".qwen/settings.json"
TIMEOUT = 10  # seconds Qwen Code waits; memsite answers within 5
EVENTS = {
    "SessionStart": "startup|resume|clear|compact",
    "UserPromptSubmit": "",
    "PostToolUse": "^(edit|write_file|run_shell_command|todo_write)$",
    "PostToolUseFailure": "^run_shell_command$",
    "PreCompact": "manual|auto",
    "PostCompact": "manual|auto",
    "SessionEnd": "",
    "Stop": "",  # a -p run never ends its session: each turn's end writes its last edits
}
NOTE = (
    "Qwen Code loads a project's hooks only in a trusted folder: with security.folderTrust "
    "on, trust this one when it asks"
)


def write_hooks(project: Path, command: str | None = None) -> tuple[Path, bool]:
    """Write or merge ``project/.qwen/settings.json``; whether the file changed."""
    timeouts = dict.fromkeys(EVENTS, TIMEOUT)
    return settings.write_event_hooks(project, SETTINGS, "qwen", EVENTS, timeouts, command)
