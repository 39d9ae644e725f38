"""What one agent CLI's hooks look like, as data (issue 37): ``Harness``.

memsite answers hook events in Claude Code's terms (``hooks.answer``); a ``Harness`` says how
another CLI's events, tools, arguments and outputs map onto them, and where it must not be
taken literally. Each CLI is one module beside this one holding one ``HARNESS``; what may
change when a CLI does is kept there, small enough to update by reading its hooks reference.

The canonical event a harness hands over is the one Claude Code sends: ``hook_event_name`` one
of ``hooks.EVENTS``, ``tool_name`` one of Claude Code's (``Edit``, ``Write``, ``Bash``,
``TodoWrite``), ``tool_input`` with Claude Code's field names (``file_path``, ``old_string``,
``new_string``, ``content``, ``command``), and for a tool's result:

- an edit's lines as ``tool_response.structuredPatch`` (hunks of ``+``/``-`` lines), when the
  CLI gives a real diff;
- a command's exit status as ``tool_response.exit_code``: a number, or ``None`` where the CLI
  says nothing (recorded as unknown, never as 0); a failure may also come as Claude Code's
  ``PostToolUseFailure`` with ``error: "Exit code N\\n..."``;
- under ``NOTES``, lines for the hook's stderr: a field the CLI was expected to send and did
  not (silence is not success), the event still answered;
- a ``SessionStart`` may carry the session's first ``prompt``, which names the session (a CLI
  that runs the prompt's hook before the start's has ended);
- a compaction's size as ``tokens_before`` of ``PreCompact``, where the CLI counts it (else
  the transcript's size stands for it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Event = dict[str, Any]
NOTES = "memsite_notes"  # a canonical event's lines for stderr (see above)


class Unmapped(ValueError):
    """An event, a tool or a field the harness's table does not know; the hook says so on
    stderr in one line and still exits 0."""


@dataclass(frozen=True)
class Harness:
    """One agent CLI's hook protocol.

    ``events`` maps the CLI's event names to Claude Code's; ``tools`` its tool names to Claude
    Code's, and ``arguments`` (per Claude Code tool name) its argument names to Claude Code's.
    ``read`` turns one event, already renamed, into the canonical events memsite answers (none
    for an event not to be taken literally, several for a patch of several files); ``cap`` is
    the most context the CLI takes whole, counted in ``counts``; ``nested`` puts the context in
    ``hookSpecificOutput`` (else at the top level); ``why_after_tool`` gives the decision that
    governs an edited file with the tool's result, where the CLI drops PreToolUse context;
    ``looks_like`` tells this CLI's events from the others' when ``--harness`` is not given;
    ``time_limits`` (seconds, per event of the CLI) is memsite's own limit where the CLI
    kills a hook sooner than memsite's default would give up."""

    name: str
    title: str
    events: Mapping[str, str]
    tools: Mapping[str, str] = field(default_factory=dict)
    arguments: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    read: Callable[[Event], list[Event]] | None = None
    cap: int = 10_000
    counts: Literal["chars", "bytes"] = "chars"
    nested: bool = True
    why_after_tool: bool = False
    looks_like: Callable[[Event], bool] | None = None
    time_limits: Mapping[str, float] = field(default_factory=dict)

    def canonical(self, event: Event) -> list[Event]:
        """The canonical events for one of this CLI's events; ``Unmapped`` for an event
        name the table does not hold."""
        name = event.get("hook_event_name")
        if not isinstance(name, str) or name not in self.events:
            raise Unmapped(f"{self.title} event {_shown(name)} is not one memsite maps")
        renamed = dict(event)
        renamed["hook_event_name"] = self.events[name]
        tool = event.get("tool_name")
        if isinstance(tool, str) and tool in self.tools:
            renamed["tool_name"] = self.tools[tool]
            names = self.arguments.get(self.tools[tool], {})
            arguments = event.get("tool_input")
            if names and isinstance(arguments, Mapping):
                renamed["tool_input"] = {names.get(key, key): v for key, v in arguments.items()}
        return self.read(renamed) if self.read is not None else [renamed]

    def size(self, text: str) -> int:
        """``text``'s size as this CLI counts it against ``cap``."""
        return len(text.encode("utf-8")) if self.counts == "bytes" else len(text)

    def output(self, native: str, markdown: str) -> str:
        """The JSON that adds ``markdown`` (already fitted) to the model's context for the
        CLI's event ``native``; nothing for no text."""
        if not markdown.strip():
            return ""
        if not self.nested:
            return json.dumps({"additionalContext": markdown}, ensure_ascii=False)
        inner = {"hookEventName": native, "additionalContext": markdown}
        return json.dumps({"hookSpecificOutput": inner}, ensure_ascii=False)


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
