"""``memsite init --gemini``: memsite's hooks in Gemini CLI's ``.gemini/settings.json``,
written into a new file or merged into the project's own as ``--claude`` does (every other
hook and setting kept, the same block twice changes nothing).

Gemini CLI times hooks in milliseconds and matches session events (``SessionStart``'s
source, ``PreCompress``'s trigger) as exact strings, so those take no matcher; a tool
event's matcher is a regular expression, anchored here so that an MCP tool named like one
of the CLI's own is not matched. ``BeforeTool`` is left out: the CLI never shows the model
its context (the governing decision comes with ``AfterTool``), and each hook costs a process
per tool call.
"""

from __future__ import annotations

from pathlib import Path

from ... import settings
from ..gemini import TOOLS

SETTINGS = ".gemini/settings.json"
TIMEOUT = 10_000  # milliseconds Gemini CLI waits; memsite answers within 5 s
EVENTS = {
    "SessionStart": "",
    "BeforeAgent": "",
    "AfterTool": f"^({'|'.join(TOOLS)})$",
    "PreCompress": "",
    "SessionEnd": "",
}
NOTE = (
    "Gemini CLI reads it only in a trusted folder: trust this one when it asks (or run it "
    "with GEMINI_CLI_TRUST_WORKSPACE=true), and review the project hooks it lists on its "
    "first run"
)


def write_hooks(project: Path, command: str | None = None) -> tuple[Path, bool]:
    """Write or merge ``project/.gemini/settings.json``; whether the file changed."""
    timeouts = dict.fromkeys(EVENTS, TIMEOUT)
    return settings.write_event_hooks(project, SETTINGS, "gemini", EVENTS, timeouts, command)
