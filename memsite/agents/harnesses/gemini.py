"""Gemini CLI (``@google/gemini-cli``, tested at ``tests/gemini_cli.py``'s PIN): its hooks
(``.gemini/settings.json``) as data, and where its events must not be taken literally.

Measured with the real binary (tests/fixtures/harnesses/gemini/ holds the events it sent):

- ``BeforeAgent`` is the prompt; in headless mode (``-p``) it already begins with the
  session-start block, wrapped as ``<hook_context>...</hook_context>``: recall reads the
  user's own words after it.
- ``BeforeTool``'s context never reaches the model; ``AfterTool``'s is appended to the tool's
  result, so the decision that governs an edited file comes with ``AfterTool``.
- ``PreCompress`` fires before every model call (``trigger: auto``) whether or not the
  history is compressed; the CLI compresses only when the last prompt took at least its
  ``model.compressionThreshold`` (default 0.5) of its 1,048,576-token window, and the
  transcript (JSON lines at ``transcript_path``) records each reply's prompt size as
  ``tokens.input``. So an automatic ``PreCompress`` is a compaction only when that size has
  reached the threshold; ``manual`` (``/compress``) always is.
- ``write_todos`` is the whole todo list (``description``, ``status``), as ``TodoWrite``.
- ``replace`` and ``write_file`` give the real diff as ``tool_response.returnDisplay.fileDiff``
  (a unified diff) and an ``error`` object when they failed; ``run_shell_command``'s
  ``llmContent`` ends with sections ``Exit Code: N`` (only when N is not 0), ``Error:``,
  ``Signal:``, ``Process Group PGID:``: a finished command without ``Exit Code``, ``Error``
  or ``Signal`` exited 0; a cancelled or backgrounded one says nothing (unknown).
- Hook context has ``<`` and ``>`` escaped as ``&lt;`` ``&gt;`` (``&`` is kept): memsite's
  markdown holds no raw HTML, so it reads the same, placeholders such as ``<question>``
  shown escaped.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from typing import Any

from .base import Event, Harness

EVENTS = {
    "SessionStart": "SessionStart",
    "BeforeAgent": "UserPromptSubmit",
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "PreCompress": "PreCompact",
    "SessionEnd": "SessionEnd",
}
TOOLS = {
    "replace": "Edit",
    "write_file": "Write",
    "run_shell_command": "Bash",
    "write_todos": "TodoWrite",
}
# its own events, which no other CLI sends: how an event names Gemini CLI without --harness
OWN = ("BeforeAgent", "BeforeTool", "AfterTool", "PreCompress", "AfterAgent", "BeforeModel")
WINDOW = 1_048_576  # tokens: the window of every Gemini model the CLI names (tokenLimit)
COMPRESSES_AT = 0.5  # of the window: model.compressionThreshold's default
SETTINGS_LIMIT = 1 << 20  # bytes of a settings file read; Gemini CLI's are a few KB
TAIL = 1 << 22  # bytes of the transcript's end read for the last prompt's size (~5 ms)

_STATUS = {"cancelled": "completed"}
_PROMPT_SIZE = re.compile(rb'"tokens":\s*\{\s*"input":\s*(\d+)')
_WRAPPED = re.compile(r"(?:\s*<hook_context>.*?</hook_context>)+\s*", re.S)
_SECTION = re.compile(r"^(Error|Exit Code|Signal|Background PIDs|Process Group PGID): ?(.*)$")
_UNTRUSTED = re.compile(r"^\s*<untrusted_context>\n?(.*?)\n?</untrusted_context>\s*$", re.S)


def own_prompt(prompt: str) -> str:
    """The user's prompt without the session-start blocks Gemini CLI puts before it (one per
    hook that gave context; hook context is escaped, so a ``</hook_context>`` is a block's
    own end)."""
    found = _WRAPPED.match(prompt)
    return prompt[found.end() :] if found else prompt


def structured_patch(diff: object) -> list[dict[str, list[str]]] | None:
    """A unified diff's hunks as Claude Code's ``structuredPatch`` (``lines`` of each hunk,
    ``+``/``-``/`` `` kept); None when ``diff`` holds no hunk."""
    if not isinstance(diff, str):
        return None
    hunks: list[dict[str, list[str]]] = []
    for line in diff.splitlines():
        if line.startswith("@@"):
            hunks.append({"lines": []})
        elif hunks and not line.startswith("\\"):
            hunks[-1]["lines"].append(line)
    return hunks or None


def shell_outcome(content: object) -> tuple[int | None, str]:
    """A ``run_shell_command`` result's exit status (None: it does not say) and output."""
    if not isinstance(content, str):
        return None, ""
    inner = _UNTRUSTED.match(content)
    text = inner.group(1) if inner else content
    if not text.startswith("Output: "):
        return None, ""  # cancelled, moved to the background, or a shape not known
    lines = text.splitlines()
    sections: dict[str, str] = {}
    while len(lines) > 1 and (found := _SECTION.match(lines[-1])):
        sections[found.group(1)] = found.group(2)
        lines.pop()
    output = "\n".join(lines)[len("Output: ") :]
    output = "" if output == "(empty)" else output
    code = sections.get("Exit Code", "")
    if re.fullmatch(r"-?\d+", code.strip()):
        return int(code), output
    return (None if "Error" in sections or "Signal" in sections else 0), output


def last_prompt_tokens(transcript: object) -> int | None:
    """The prompt size of the latest reply in the transcript at ``transcript``, as the API
    counted it (``"tokens":{"input":N`` of its last record that has one: a key of the
    record itself, for a quote inside a message is escaped); None when it cannot be read."""
    tail = _tail(transcript, TAIL)
    sizes = _PROMPT_SIZE.findall(tail) if tail is not None else []
    return int(sizes[-1]) if sizes else None


def compresses_at(cwd: object) -> float:
    """The share of its window at which Gemini CLI compresses: ``model.compressionThreshold``
    of the project's ``.gemini/settings.json`` (``cwd``'s), else of the user's (under
    ``$GEMINI_CLI_HOME``, else HOME), else its default, 0.5."""
    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    places = [os.path.join(cwd, ".gemini", "settings.json")] if isinstance(cwd, str) else []
    for place in [*places, os.path.join(home, ".gemini", "settings.json")]:
        raw = _tail(place, SETTINGS_LIMIT)
        try:
            settings = json.loads(raw) if raw is not None and len(raw) < SETTINGS_LIMIT else None
        except (ValueError, RecursionError):  # comments, which Gemini CLI allows: the next
            continue
        model = settings.get("model") if isinstance(settings, dict) else None
        value = model.get("compressionThreshold") if isinstance(model, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1:
            return float(value)
    return COMPRESSES_AT


def _tail(path: object, limit: int) -> bytes | None:
    """The last ``limit`` bytes of the regular file at ``path``; None for anything else (a
    FIFO there would hold the hook until its time limit, a directory cannot be read)."""
    if not isinstance(path, str) or not path:
        return None
    try:
        handle = os.open(os.path.expanduser(path), os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:
        regular = stat.S_ISREG(os.fstat(handle).st_mode)
    except OSError:
        regular = False
    if not regular:
        os.close(handle)
        return None
    with os.fdopen(handle, "rb") as file:
        try:
            file.seek(max(file.seek(0, os.SEEK_END) - limit, 0))
            return file.read(limit)
        except OSError:
            return None


def _tool_result(event: Event) -> Event:
    """A tool's result in the canonical fields: an edit's diff as ``structuredPatch`` (a
    failed edit as ``PostToolUseFailure``), a command's exit status and output."""
    response = event.get("tool_response")
    response = response if isinstance(response, Mapping) else {}
    tool = event.get("tool_name")
    if tool in ("Edit", "Write"):
        error = response.get("error")
        if error:
            message = error.get("message") if isinstance(error, Mapping) else error
            return {**event, "hook_event_name": "PostToolUseFailure", "error": str(message)}
        display = response.get("returnDisplay")
        patch = structured_patch(display.get("fileDiff") if isinstance(display, Mapping) else None)
        return {**event, "tool_response": {**response, "structuredPatch": patch or []}}
    if tool == "Bash":
        status, output = shell_outcome(response.get("llmContent"))
        return {**event, "tool_response": {"exit_code": status, "output": output}}
    if tool == "TodoWrite":
        arguments = event.get("tool_input")
        items = arguments.get("todos") if isinstance(arguments, Mapping) else None
        listed = items if isinstance(items, list) else []
        todos = [_todo(item) for item in listed if isinstance(item, Mapping)]
        return {**event, "tool_input": {"todos": todos}}
    return event


def _todo(item: Mapping[str, Any]) -> dict[str, Any]:
    """One of ``write_todos``' items as a ``TodoWrite`` item: a cancelled one is done with."""
    status = item.get("status") if isinstance(item.get("status"), str) else ""
    return {"content": item.get("description"), "status": _STATUS.get(status, status)}


def read(event: Event) -> list[Event]:
    """One of Gemini CLI's events (renamed) as the canonical events memsite answers."""
    name = event.get("hook_event_name")
    if name == "UserPromptSubmit" and isinstance(event.get("prompt"), str):
        return [{**event, "prompt": own_prompt(event["prompt"])}]
    if name == "PreToolUse":
        return []  # its context never reaches the model: the decision comes with AfterTool
    if name == "PostToolUse":
        return [_tool_result(event)]
    if name == "PreCompact":
        size = last_prompt_tokens(event.get("transcript_path"))
        auto = event.get("trigger") != "manual"
        if auto and (size is None or size < compresses_at(event.get("cwd")) * WINDOW):
            return []  # fired before every model call: no compression comes
        return [{**event, "tokens_before": size}]
    return [event]


def looks_like(event: Event) -> bool:
    """Whether ``event`` is one only Gemini CLI sends, or names its transcript as Gemini CLI
    does (``chats/session-<time>-<id>.jsonl`` under its home)."""
    if event.get("hook_event_name") in OWN:
        return True
    path = event.get("transcript_path")
    if not isinstance(path, str):
        return False
    parts = path.replace("\\", "/").split("/")
    return len(parts) >= 2 and parts[-2] == "chats" and parts[-1].startswith("session-")


HARNESS = Harness(
    name="gemini",
    title="Gemini CLI",
    events=EVENTS,
    tools=TOOLS,
    read=read,
    cap=10_000,  # no cap of its own was found; Claude Code's keeps the answers alike
    why_after_tool=True,
    looks_like=looks_like,
)
