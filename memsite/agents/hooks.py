"""``memsite hook``: one command for every Claude Code hook event (issue 11).

A thin adapter like ``mcp_server.py``: it reads the event's JSON, makes one call into
``Memory`` and answers as the event's protocol expects (Claude Code's hooks reference,
https://code.claude.com/docs/en/hooks). ``SessionStart`` and ``UserPromptSubmit`` add
context through ``hookSpecificOutput.additionalContext``; ``PreCompact``, ``PostCompact``
and ``SessionEnd`` only write memory and print nothing; ``PreToolUse`` of a tool that edits a
file adds ``why`` for that file, once per file per session and only when memory governs it,
and never decides the tool's permission (issue 14); any other event is answered with
nothing. A hook must never block the agent: whatever goes wrong (no memory tree, a broken
index, malformed JSON, a call that outlives the time limit) is one line for stderr, nothing
on stdout, and exit code 0.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MemsiteError
from ..memory import Memory
from ..search.payloads.recall import PRIME_BUDGET, RECALL_BUDGET
from ..search.payloads.tokens import tokens_of_size

TIME_LIMIT = 5.0  # seconds; Claude Code waits for a hook, so memsite gives up first
# the watchdog's own margin over TIME_LIMIT: the worker's thread gives up first when it can
GRACE = 1.0
TRIGGERS = ("auto", "manual")
# Claude Code's file-editing tools and the input field that holds the file's (absolute) path
EDIT_TOOLS = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)


@dataclass(frozen=True)
class Answer:
    """What the hook prints: ``stdout`` for the harness, ``error`` one line for stderr;
    ``late`` when the call was still running at the time limit."""

    stdout: str = ""
    error: str = ""
    late: bool = False


def run(
    raw: bytes,
    open_memory: Callable[[], Memory],
    *,
    time_limit: float = TIME_LIMIT,
    prime_budget: int = PRIME_BUDGET,
    recall_budget: int = RECALL_BUDGET,
) -> Answer:
    """Answer one hook event (its JSON in ``raw``) within ``time_limit`` seconds."""
    done: list[Answer] = []

    def work() -> None:
        try:
            event = _event(raw)
            done.append(Answer(answer(event, open_memory, prime_budget, recall_budget)))
        except Exception as err:  # noqa: BLE001 - a hook never fails the agent
            said = isinstance(err, (MemsiteError, _Malformed))
            name = "" if said else f"{type(err).__name__}: "
            message = " ".join(f"{name}{err}".split())
            done.append(Answer(error=f"memsite hook: {message}; no context added"))

    # a daemon thread: the caller can leave at the time limit without waiting for it
    thread = threading.Thread(target=work, name="memsite-hook", daemon=True)
    thread.start()
    thread.join(time_limit)
    if done:
        return done[0]
    return Answer(
        error=f"memsite hook: no answer within {time_limit:g} s; no context added", late=True
    )


def bounded(work: Callable[[], Answer], time_limit: float = TIME_LIMIT + GRACE) -> Answer:
    """``work()`` run in a forked child that is killed at ``time_limit`` seconds (issue 22).

    A thread's time limit holds only while the thread it waits on lets go of the GIL: a
    regular expression or any C loop that does not keeps the waiting thread from ever
    returning, and reading stdin happened before the limit started. Here the limit starts
    before anything is read and a kill ends whatever the child is doing; its writes go
    through the store's locked appends and atomic replaces, which a kill never half-writes.
    """
    readable, writable = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # the child: do the work, hand the answer over, and leave at once
        code = 0
        try:
            os.close(readable)
            said = work()
            data = json.dumps([said.stdout, said.error, said.late]).encode("utf-8")
            with os.fdopen(writable, "wb") as out:
                out.write(data)
        except BaseException:  # noqa: BLE001 - whatever happens, the parent answers
            code = 1
        finally:
            os._exit(code)
    os.close(writable)
    deadline = time.monotonic() + time_limit
    chunks: list[bytes] = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([readable], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                return Answer(
                    error=f"memsite hook: no answer within {TIME_LIMIT:g} s; no context added",
                    late=True,
                )
            chunk = os.read(readable, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(readable)
        os.waitpid(pid, 0)
    try:
        stdout, error, late = json.loads(b"".join(chunks).decode("utf-8"))
    except ValueError:
        return Answer(error="memsite hook: the hook's worker ended without an answer")
    return Answer(str(stdout), str(error), bool(late))


def answer(
    event: dict[str, Any], open_memory: Callable[[], Memory], prime_budget: int, recall_budget: int
) -> str:
    """What to print for one event (``""`` for nothing)."""
    name = event.get("hook_event_name")
    if name not in EVENTS:
        return ""
    edited = _edited_file(event) if name == "PreToolUse" else None
    if name == "PreToolUse" and edited is None:
        return ""  # not a file edit: nothing to say, and the index is never opened
    with open_memory() as memory:
        if edited is not None:
            found = memory.before_edit(edited, budget=recall_budget)
            return _context(name, found.markdown) if found is not None else ""
        if name == "SessionStart":
            compact = event.get("source") == "compact"
            primed = memory.prime(budget=prime_budget, after_compact=compact)
            return _context(name, primed.markdown)
        if name == "UserPromptSubmit":
            recalled = memory.recall(_text(event, "prompt"), budget=recall_budget)
            return _context(name, recalled.markdown)
        trigger = event.get("trigger") if event.get("trigger") in TRIGGERS else "auto"
        if name == "PreCompact":
            size = _transcript_tokens(event.get("transcript_path"))
            memory.checkpoint(str(trigger), tokens_before=size)
        elif name == "PostCompact":
            summary = _text(event, "compact_summary") or None
            memory.checkpoint(str(trigger), summary, completes=True)
        else:
            reason = _text(event, "reason") or "other"
            memory.end_session(f"Session ended by the harness (Claude Code, reason: {reason}).")
        return ""


class _Malformed(ValueError):
    """The event on stdin is not a JSON object naming an event."""


def _event(raw: bytes) -> dict[str, Any]:
    try:
        event = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        what = str(err).split(":")[0] if str(err) else type(err).__name__
        raise _Malformed(f"the event on stdin is not JSON ({what})") from None
    if not isinstance(event, dict):
        raise _Malformed("the event on stdin is not a JSON object")
    return event


def _context(name: str, markdown: str) -> str:
    """The JSON that adds ``markdown`` to the agent's context; nothing when it is empty."""
    if not markdown.strip():
        return ""
    output = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": markdown}}
    return json.dumps(output, ensure_ascii=False)


def _edited_file(event: dict[str, Any]) -> str | None:
    """The file a ``PreToolUse`` event is about to edit, or None for any other tool."""
    field = EDIT_TOOLS.get(str(event.get("tool_name")))
    tool_input = event.get("tool_input")
    if field is None or not isinstance(tool_input, dict):
        return None
    path = tool_input.get(field)
    return path if isinstance(path, str) and path.strip() else None


def _text(event: dict[str, Any], key: str) -> str:
    value = event.get(key)
    return value if isinstance(value, str) else ""


def _transcript_tokens(path: object) -> int | None:
    """The transcript's size as tokens, when its path is given and it can be read."""
    if not isinstance(path, str) or not path:
        return None
    try:
        return tokens_of_size(Path(path).expanduser().stat().st_size)
    except (OSError, ValueError):
        return None
