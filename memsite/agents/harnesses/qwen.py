"""Qwen Code (``@qwen-code/qwen-code``, tested at ``tests/qwen_cli.py``'s PIN): Claude Code's
hook protocol in ``.qwen/settings.json``, with its own tool names and results.

What is read here rather than taken literally (measured with 0.24.4, the events in
``tests/fixtures/harnesses/qwen/``):

- ``UserPromptSubmit`` fires again with ``prompt: ""`` before each follow-up model request of
  a turn (after every tool result): not a prompt, so nothing is recalled or renamed.
- ``PreToolUse`` context is dropped outside ACP: the decision that governs an edited file
  comes with the ``PostToolUse`` answer instead (``why_after_tool``), and ``PreToolUse`` is
  answered with nothing, so the decision is never spent on an answer the model does not see.
- An edit's real lines are the unified diff in ``tool_response.returnDisplay.fileDiff``
  (``edit``'s strings hold whole lines around the change: +7 -5 for a +4 -2 edit).
- A command's exit status is the ``Exit Code: N`` line of its result text: of
  ``tool_response.llmContent`` when it exits 0, of the ``PostToolUseFailure`` ``error``
  otherwise; a result without one (a killed command says ``Exit Code: (none)``) is unknown.
- It escapes ``<`` and ``>`` in hook context (``ESCAPED``) and never fires
  ``SessionEnd`` in a ``-p`` run: ``Stop`` (each turn's end) writes the last burst of edits,
  and the session is archived once stale (``following``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .base import Event, Harness
from .claude import EVENTS as CLAUDE_EVENTS

# Claude Code's event names, and Stop: the end of a turn, where a `-p` run's last burst of
# edits is written (it never fires SessionEnd)
EVENTS = (*CLAUDE_EVENTS, "Stop")
# its tool ids -> Claude Code's; their arguments already carry Claude Code's names
TOOLS = {
    "edit": "Edit",
    "write_file": "Write",
    "run_shell_command": "Bash",
    "todo_write": "TodoWrite",
}
# what Qwen Code does to hook context before the model sees it
ESCAPED = (("<", "&lt;"), (">", "&gt;"))

_EXIT = re.compile(r"^Exit Code: (-?\d+)\s*$", re.M)
_OUTPUT = re.compile(r"^Output: (.*?)(?=^Error: |^Exit Code: |\Z)", re.M | re.S)
_HUNK = re.compile(r"^@@ [^@]* @@")


def read(event: Event) -> list[Event]:
    """One renamed event as the canonical events memsite answers."""
    name = event.get("hook_event_name")
    if name == "PreToolUse":
        return []  # its context never reaches the model outside ACP
    if name == "UserPromptSubmit":
        prompt = event.get("prompt")
        return [event] if isinstance(prompt, str) and prompt.strip() else []
    tool = event.get("tool_name")
    response = event.get("tool_response")
    if name == "PostToolUse" and tool in ("Edit", "Write") and isinstance(response, Mapping):
        display = response.get("returnDisplay")
        diff = display.get("fileDiff") if isinstance(display, Mapping) else None
        if isinstance(diff, str):
            # a diff without hunks changed nothing: one empty hunk, never the strings' count
            patch = hunks(diff) or [{"lines": []}]
            return [{**event, "tool_response": {**response, "structuredPatch": patch}}]
    if name == "PostToolUse" and tool == "Bash":
        text = response.get("llmContent") if isinstance(response, Mapping) else response
        text = text if isinstance(text, str) else ""
        shown = {"exit_code": exit_code(text), "output": output(text)}
        return [{**event, "tool_response": shown}]
    if name == "PostToolUseFailure" and tool == "Bash":
        error = event.get("error") if isinstance(event.get("error"), str) else ""
        code = exit_code(error)
        said = output(error) if _OUTPUT.search(error) else error
        # Claude Code's shape: "Exit code N" first, or no status at all when none is said
        return [{**event, "error": f"Exit code {code}\n{said}" if code is not None else said}]
    return [event]


def hunks(diff: str) -> list[dict[str, list[str]]]:
    """A unified diff's hunks, each its ``+``/``-``/`` `` lines (the ``---``/``+++`` file
    header and ``\\ No newline`` notes left out)."""
    found: list[dict[str, list[str]]] = []
    for line in diff.splitlines():
        if _HUNK.match(line):
            found.append({"lines": []})
        elif found and line[:1] in ("+", "-", " "):
            found[-1]["lines"].append(line)
    return found


def exit_code(text: str) -> int | None:
    """The ``Exit Code: N`` of a command's result text; None where it says none."""
    found = _EXIT.search(text)
    return int(found.group(1)) if found else None


def output(text: str) -> str:
    """The ``Output:`` part of a command's result text (what the command printed)."""
    found = _OUTPUT.search(text)
    return found.group(1).strip() if found else ""


def looks_like(event: Event) -> bool:
    """Qwen Code's events: Claude Code's names, with its transcripts under ``.qwen/`` or one
    of its own tool ids."""
    if event.get("hook_event_name") not in EVENTS:
        return False
    transcript = event.get("transcript_path")
    if isinstance(transcript, str) and "/.qwen/" in transcript.replace("\\", "/"):
        return True
    return event.get("tool_name") in TOOLS


HARNESS = Harness(
    name="qwen",
    title="Qwen Code",
    events={name: name for name in EVENTS},
    tools=TOOLS,
    read=read,
    cap=10_000,  # characters, as Claude Code's: what Qwen Code passes whole
    why_after_tool=True,
    looks_like=looks_like,
)
