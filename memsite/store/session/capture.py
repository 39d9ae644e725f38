"""What a harness's tool call says about the work, read without a model (issue 23): the file
an edit touched and the lines it added and removed, a command's exit status and a one-line
result, the agent's todo list. Pure functions over the event's JSON fields."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import config
from ..inputs import clean, stored_line, whole_characters
from ..redact import redact

# Claude Code's file-editing tools and the input field that holds the file's path
EDIT_TOOLS = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
COMMAND_TOOLS = ("Bash",)
TODO_TOOLS = ("TodoWrite",)  # the whole list at once (Claude Code before 2.1)
TASK_TOOLS = ("TaskCreate", "TaskUpdate")  # one task at a time (2.1.328)
RESULT_CHARS = 200
# ``[capture]`` of memsite.toml switches recording off per tool: ``Bash = false``
CAPTURE = config.Table(
    "capture",
    {tool: config.Flag() for tool in (*EDIT_TOOLS, *COMMAND_TOOLS, *TODO_TOOLS, *TASK_TOOLS)},
)
_EXIT = re.compile(r"^Exit code (-?\d+)")


def captured(root: object, tool: str) -> bool:
    """Whether the tree's ``[capture]`` settings record calls of ``tool`` (all do by default)."""
    if tool not in CAPTURE.keys:
        return False
    return bool(config.read(root, CAPTURE).get(tool, True))  # type: ignore[arg-type]


def edited_file(tool: str, tool_input: object) -> str | None:
    """The file an editing tool names, or None for any other tool."""
    field = EDIT_TOOLS.get(tool)
    if field is None or not isinstance(tool_input, Mapping):
        return None
    path = tool_input.get(field)
    # a lone surrogate's escape ("a\\ud83d.py") made the file system refuse the name, the
    # edit was lost and the memory about it never given (the sweep after issue 36): it is
    # the U+FFFD the agent's own file has
    return whole_characters(path) if isinstance(path, str) and path.strip() else None


def changed_lines(tool: str, tool_input: Mapping[str, Any], response: object) -> tuple[int, int]:
    """Lines added and removed: from the response's ``structuredPatch`` hunks when it has
    them, else from the input (a ``Write`` of new content, an ``Edit``'s strings)."""
    patch = response.get("structuredPatch") if isinstance(response, Mapping) else None
    if isinstance(patch, list) and patch:
        added = removed = 0
        for hunk in patch:
            lines = hunk.get("lines") if isinstance(hunk, Mapping) else None
            for line in lines if isinstance(lines, list) else ():
                if isinstance(line, str) and line.startswith("+"):
                    added += 1
                elif isinstance(line, str) and line.startswith("-"):
                    removed += 1
        return added, removed
    if tool == "Write":
        return _count(tool_input.get("content")), 0
    if tool == "Edit":
        return _count(tool_input.get("new_string")), _count(tool_input.get("old_string"))
    if tool == "MultiEdit":
        edits = tool_input.get("edits")
        pairs = [e for e in edits if isinstance(e, Mapping)] if isinstance(edits, list) else []
        return (
            sum(_count(e.get("new_string")) for e in pairs),
            sum(_count(e.get("old_string")) for e in pairs),
        )
    return 0, 0


def _count(text: object) -> int:
    return len(text.splitlines()) if isinstance(text, str) else 0


def command_of(tool: str, tool_input: object) -> str | None:
    """The command a shell tool ran, or None for any other tool."""
    if tool not in COMMAND_TOOLS or not isinstance(tool_input, Mapping):
        return None
    command = tool_input.get("command")
    return command if isinstance(command, str) and command.strip() else None


def outcome(failed: bool, response: object, error: object) -> tuple[int | None, str]:
    """A command's exit status (0 when it succeeded, None when unknown) and its first line
    of output. A failing command comes as ``error: "Exit code 3\\n<output>"``; another CLI's
    command as its table read it, ``exit_code`` in the response (None: the CLI never says)."""
    if failed:
        text = error if isinstance(error, str) else ""
        found = _EXIT.match(text)
        rest = text.split("\n", 1)[1] if found and "\n" in text else ("" if found else text)
        return (int(found.group(1)) if found else None), first_line(rest)
    out = ""
    status: int | None = 0
    if isinstance(response, Mapping):
        if "exit_code" in response:  # another CLI's status, read by its table (issue 37)
            code = response.get("exit_code")
            status = code if isinstance(code, int) and not isinstance(code, bool) else None
        for key in ("stdout", "stderr", "output"):
            value = response.get(key)
            if isinstance(value, str) and value.strip():
                out = value
                break
    elif isinstance(response, str):
        out = response
    return status, first_line(out)


def stored(text: str) -> str:
    """Text from the harness made fit to store (``clean``), its secrets redacted whole: before
    any cut, which would otherwise keep a token that straddles it in part (issue 34)."""
    return redact(clean(text))[0]


def first_line(text: str) -> str:
    """The first non-blank line, redacted whole, then cut to ``RESULT_CHARS`` characters."""
    for line in clean(text).splitlines():
        line = " ".join(redact(line)[0].split())
        if line:
            return line if len(line) <= RESULT_CHARS else line[: RESULT_CHARS - 1] + "…"
    return ""


def todos(tool: str, tool_input: object) -> tuple[list[str], list[str]] | None:
    """The todo list as (open, completed) items, or None for any other tool."""
    if tool not in TODO_TOOLS or not isinstance(tool_input, Mapping):
        return None
    items = tool_input.get("todos")
    if not isinstance(items, list):
        return None
    open_items: list[str] = []
    done: list[str] = []
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("content"), str):
            continue
        text = " ".join(stored(item["content"]).split())[:RESULT_CHARS]
        if text:
            (done if item.get("status") == "completed" else open_items).append(text)
    return open_items, done


def task_change(tool: str, tool_input: object, response: object) -> tuple[str, str, str] | None:
    """``(task id, subject, status)`` of a ``TaskCreate`` (status ``pending``; the id from
    its response) or a ``TaskUpdate`` (subject ``""`` unless it renames the task)."""
    if tool not in TASK_TOOLS or not isinstance(tool_input, Mapping):
        return None
    if tool == "TaskCreate":
        task = response.get("task") if isinstance(response, Mapping) else None
        subject = tool_input.get("subject")
        number = task.get("id") if isinstance(task, Mapping) else None
        if not isinstance(subject, str) or not subject.strip() or number is None:
            return None
        return stored_line(str(number)), " ".join(stored(subject).split())[:RESULT_CHARS], "pending"
    number = tool_input.get("taskId")
    status = tool_input.get("status")
    subject = tool_input.get("subject")
    if number is None:
        return None
    text = " ".join(stored(subject).split())[:RESULT_CHARS] if isinstance(subject, str) else ""
    return stored_line(str(number)), text, status if isinstance(status, str) else ""
