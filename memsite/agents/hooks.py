"""``memsite hook``: one command for every hook event of Claude Code (issue 11) and of the
other agent CLIs, each read through its table in ``harnesses/`` (issue 37).

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

import contextlib
import contextvars
import hashlib
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
from ..search.index.place import is_built
from ..search.payloads.recall import HOOK_BUDGET, HOOK_CONTEXT_CAP, RECALL_BUDGET
from ..search.payloads.tokens import tokens_of_size
from ..store.inputs import MAX_TOKENS, clean
from ..store.session import hot
from ..store.session.capture import edited_file
from ..store.session.summaries import MAX_SUMMARY, compact_summary
from . import background, following, harnesses, warm
from .harnesses.claude import EVENTS as CLAUDE_EVENTS

TIME_LIMIT = 5.0  # seconds; Claude Code waits for a hook, so memsite gives up first
CONTEXT_CAP = HOOK_CONTEXT_CAP  # every answer fits Claude Code's cap (see recall.py)
# the watchdog's own margin over TIME_LIMIT: the worker's thread gives up first when it can
GRACE = 1.0
TRIGGERS = ("auto", "manual")
# the events memsite answers: Claude Code's (its harness's own table), and Stop, a turn's end
# (a Qwen Code ``-p`` run's last burst of edits is written there)
EVENTS = (*CLAUDE_EVENTS, "Stop")
SOURCES = ("startup", "resume", "clear", "compact", "fork")
SESSION_ID = 128  # characters: the CLIs' ids are UUIDs (36); a longer one is kept as its hash


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
    prime_budget: int = HOOK_BUDGET,
    recall_budget: int = RECALL_BUDGET,
    lexical: bool = False,
    verbose: bool = False,
    harness: str | None = None,
) -> Answer:
    """Answer one hook event (its JSON in ``raw``) within ``time_limit`` seconds; ``lexical``
    leaves the embedding model out of prime and recall; ``verbose`` (a hook run by hand)
    says on stderr when it started a warm process; ``harness`` names the CLI that sent it
    (``harnesses.NAMES``; by default told from the event's shape)."""
    done: list[Answer] = []
    time_limit = harnesses.time_limit(raw, harness, time_limit)

    def work() -> None:
        try:
            event = _event(raw)
            started: list[bool] = []
            notes: list[str] = []
            said = answer(
                event, open_memory, prime_budget, recall_budget, lexical, started,
                harness=harness, notes=notes,
            )  # fmt: skip
            if verbose and any(started):
                notes.append(warm.started_note(lexical))
            done.append(Answer(said, "\n".join(note for note in notes if note)))
        except Exception as err:  # noqa: BLE001 - a hook never fails the agent
            said = isinstance(err, (MemsiteError, _Malformed))
            name = "" if said else f"{type(err).__name__}: "
            message = " ".join(f"{name}{err}".split())
            done.append(Answer(error=f"memsite hook: {message}; no context added"))

    # a daemon thread: the caller can leave at the time limit without waiting for it; it runs
    # in the caller's context, so messages name what the command line takes (issue 25.5)
    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(work,), name="memsite-hook", daemon=True)
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
    event: dict[str, Any],
    open_memory: Callable[[], Memory],
    prime_budget: int,
    recall_budget: int,
    lexical: bool = False,
    started: list[bool] | None = None,
    *,
    harness: str | None = None,
    notes: list[str] | None = None,
) -> str:
    """What to print for one event of the CLI ``harness`` (``""`` for nothing); ``started``
    hears whether a warm process was started, ``notes`` the lines for stderr (an event the
    CLI's table does not map, an answer cut to the CLI's cap)."""
    notes = notes if notes is not None else []
    chosen = harnesses.chosen(event, harness)
    try:
        events = chosen.canonical(event)
    except harnesses.Unmapped as err:
        notes.append(f"memsite hook: {err}; nothing done")
        with contextlib.suppress(MemsiteError, OSError), open_memory() as memory:  # for check
            name = event.get("hook_event_name")
            following.heard(memory, chosen, name if isinstance(name, str) else None, mapped=False)
        return ""
    notes.extend(f"memsite hook: {n}" for one in events for n in one.pop(harnesses.NOTES, ()))
    said = [
        _one(one, chosen, open_memory, prime_budget, recall_budget, lexical,
             started if started is not None else [])
        for one in events
    ]  # fmt: skip
    markdown = "\n".join(text for text in said if text.strip())
    unit = chosen.counts[:-1]  # "byte", "character"
    fitted = fit(markdown, chosen.cap, chosen.size, unit)
    if fitted != markdown:
        notes.append(
            f"memsite hook: the answer was cut to fit {chosen.title}'s {chosen.cap:,}-{unit} "
            "hook context"
        )
    return chosen.output(str(event.get("hook_event_name")), fitted)


def _one(
    event: dict[str, Any],
    chosen: harnesses.Harness,
    open_memory: Callable[[], Memory],
    prime_budget: int,
    recall_budget: int,
    lexical: bool,
    started: list[bool],
) -> str:
    """The markdown for one canonical event (Claude Code's terms, ``harnesses.base``)."""
    name = event.get("hook_event_name")
    if name not in EVENTS:
        return ""
    edited = _edited_file(event) if name in ("PreToolUse", "PostToolUse") else None
    if name == "PreToolUse" and edited is None:
        return ""  # not a file edit: nothing to say, and the index is never opened
    sid = _session_id(event)
    with open_memory() as memory:
        following.heard(memory, chosen, str(name), mapped=True)
        if name == "SessionStart":
            source = _text(event, "source")
            # a damaged live-session file starts no session; the persona and memory still
            # come, as from ``memsite prime``, whose one line on stderr says what it skipped
            # (the sweep after issue 36)
            with contextlib.suppress(MemsiteError):
                following.on_start(
                    memory, sid, source if source in SOURCES else "startup", title=chosen.title
                )
        # a second agent session beside the first has a live session of its own
        with hot.using(following.file_of(memory, sid)):
            return _answer(
                name, event, memory, sid, edited, prime_budget, recall_budget, lexical,
                started, chosen,
            )  # fmt: skip


def _answer(
    name: str,
    event: dict[str, Any],
    memory: Memory,
    sid: str,
    edited: str | None,
    prime_budget: int,
    recall_budget: int,
    lexical: bool,
    started: list[bool],
    chosen: harnesses.Harness = harnesses.CLAUDE,
) -> str:
    """The markdown for one event, inside the live session of the agent's session ``sid``;
    ``started`` hears whether a warm process was started."""
    if edited is not None and name == "PreToolUse":
        found = memory.before_edit(edited, budget=recall_budget)
        return found.markdown if found is not None else ""
    if name in ("PostToolUse", "PostToolUseFailure"):
        following.on_tool(memory, event, failed=name == "PostToolUseFailure")
        if edited is not None and chosen.why_after_tool and name == "PostToolUse":
            # the CLI drops PreToolUse context: the governing decision comes with the result
            found = memory.before_edit(edited, budget=recall_budget)
            return found.markdown if found is not None else ""
        return ""
    if name == "SessionStart":
        if _text(event, "prompt"):  # the first prompt, whose own hook may run before this one
            following.on_prompt(memory, sid, _text(event, "prompt"))
        compact = _text(event, "source") == "compact"
        built = is_built(memory.root, memory.cache_dir)
        if not built:  # a fresh clone: the index builds in the background, not in the hook
            background.build_index(memory.root, memory.cache_dir)
        primed = memory.prime(
            budget=prime_budget, lexical=lexical, after_compact=compact, use_index=built
        )
        if built:  # the prompts to come are answered by a warm process (issue 24)
            started.append(warm.start(memory.root, memory.cache_dir, lexical))
        return primed.markdown + following.beside(memory, sid)
    if name == "UserPromptSubmit":
        prompt = _text(event, "prompt")
        following.flush(memory)
        following.on_prompt(memory, sid, prompt)
        return _recall(memory, sid, prompt, recall_budget, lexical, started)
    if name == "Stop":  # a turn's end: its last burst of edits is written (issue 37)
        following.flush(memory)
        return ""
    trigger = event.get("trigger") if event.get("trigger") in TRIGGERS else "auto"
    if name == "PreCompact":
        following.flush(memory)
        said = event.get("tokens_before")  # the CLI's own count, where its table reads one
        known = isinstance(said, int) and not isinstance(said, bool) and 0 <= said <= MAX_TOKENS
        size = said if known else _transcript_tokens(event.get("transcript_path"))
        memory.checkpoint(str(trigger), tokens_before=size)
    elif name == "PostCompact":
        # cut like a summarizer's answer: a checkpoint over a huge summary is not lost
        summary = compact_summary(_text(event, "compact_summary"))[:MAX_SUMMARY]
        if summary:
            following.on_compacted(memory, summary, str(trigger))
        else:
            memory.checkpoint(str(trigger), None, completes=True)
    else:
        following.on_end(memory, sid, _text(event, "reason") or "other", title=chosen.title)
    return ""


def _recall(
    memory: Memory, sid: str, prompt: str, budget: int, lexical: bool, started: list[bool]
) -> str:
    """The recall for a prompt: from the tree's warm process when one answers, else made
    here (and a warm process started for the next prompt, once the index is built)."""
    path = warm.where(memory.root, memory.cache_dir, lexical) if warm.enabled() else None
    if path is not None:
        session_file = following.file_of(memory, sid)
        said = warm.recall(path, memory.root, prompt, budget, session_file, warm.code_stamp())
        if said is not None:
            return said
    markdown = memory.recall(prompt, budget=budget, lexical=lexical).markdown
    if path is not None and is_built(memory.root, memory.cache_dir):
        started.append(warm.start(memory.root, memory.cache_dir, lexical))
    return markdown


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


CUT = "\n_Cut to fit the harness's {cap:,}-{unit} limit; ask memsite for more._\n"


def fit(
    markdown: str, cap: int = CONTEXT_CAP, size: Callable[[str], int] = len, unit: str = "character"
) -> str:
    """``markdown`` within ``cap`` (as ``size`` counts it: characters, or a CLI's bytes):
    whole, or cut at the last line that fits, with a line that says so, so the model never
    gets a harness's preview of it."""
    if size(markdown) <= cap:
        return markdown
    note = CUT.format(cap=cap, unit=unit)
    room = cap - size(note)
    head = markdown[:room]
    while head and size(head) > room:  # characters of several bytes each
        head = head[: max(len(head) - max((size(head) - room) // 4, 1), 0)]
    head = head[: head.rfind("\n") + 1] or head
    return head + note


def _edited_file(event: dict[str, Any]) -> str | None:
    """The file a ``PreToolUse`` event is about to edit, or None for any other tool."""
    return edited_file(str(event.get("tool_name")), event.get("tool_input"))


def _text(event: dict[str, Any], key: str) -> str:
    """A text field of the event, cleaned (``inputs.clean``): JSON carries lone surrogates
    (``\\ud83d``, an emoji cut in half), NEL and U+2028, which memsite would refuse to
    write or a tokenizer would choke on (issue 22)."""
    value = event.get(key)
    return clean(value) if isinstance(value, str) else ""


def _session_id(event: dict[str, Any]) -> str:
    """The agent session's id, or a hash of it past SESSION_ID characters: every id is kept
    in ``hot/harness.json`` while its session is live, and one of 300,000 characters made
    the file too large to read back, so every session it followed was forgotten (the sweep
    after issue 36). The same long id always gives the same hash."""
    sid = _text(event, "session_id") or "unknown"
    if len(sid) <= SESSION_ID:
        return sid
    return "long-" + hashlib.sha256(sid.encode("utf-8")).hexdigest()[:32]


def _transcript_tokens(path: object) -> int | None:
    """The transcript's size as tokens, when its path is given and it can be read."""
    if not isinstance(path, str) or not path:
        return None
    try:
        size = tokens_of_size(Path(path).expanduser().stat().st_size)
    except (OSError, ValueError):
        return None
    # a transcript of over 40 MB says nothing of one window: unknown, not a refused checkpoint
    return size if size <= MAX_TOKENS else None
