"""An agent CLI's sessions (Claude Code's, or another's through ``harnesses/``) followed by memsite's live session, and its tool calls recorded
without a model (issue 23). Called by ``hooks.answer`` for each event; every write is a
``Memory`` call, and the bookkeeping of which session is whose lives in
``store/session/harness.py``.

- ``SessionStart`` with no live session starts one (its task is the session's first prompt,
  until then "Claude Code session <id>"); with a live one that no other agent session is in,
  it joins it; beside a session another one is in, it starts its own (``hot/sessions/``), so
  two agents never write into one record. A live session untouched for longer than a day
  (``hot.STALE``) is stale: it is archived, never joined, so a session whose end was never
  seen (a killed CLI) ends the day after (issue 37). ``resume``, ``compact`` and ``clear``
  continue the session of that ``session_id``; ``fork`` starts a session that names its
  parent.
- ``SessionEnd`` ends only a session the hook started; one a person started by hand gets a
  checkpoint and stays live.
- ``PostToolUse``/``PostToolUseFailure``: an edit is a warm ``edited file`` entry with its
  lines added and removed (a burst of edits of one file is one entry with a count), a shell
  command is ``ran command`` with its exit status and first line of output, the todo list
  becomes the session's pending actions. Reads and searches are not logged.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from ..errors import MemsiteError
from ..memory import Memory
from ..store import code, inputs
from ..store.reading import real_path
from ..store.redact import redact
from ..store.session import capture, harness, hot, outcomes
from .harnesses import Harness

PROMPT_CHARS = 120  # a task named by a prompt keeps its first line, this long at most


def file_of(memory: Memory, sid: str) -> str | None:
    """The live-session file of Claude Code's session ``sid`` when it has its own (a second
    session running beside the first); None for the tree's ``hot/context.json``."""
    known = _load(memory).sessions.get(sid) or {}
    rel = known.get("file")
    return rel if isinstance(rel, str) and rel.startswith(hot.SESSIONS + "/") else None


def heard(memory: Memory, cli: Harness, name: str | None, mapped: bool) -> None:
    """Note for ``memsite check`` whether the event ``name`` of ``cli`` was mapped (issue 37:
    hooks that reach memsite for nothing are reported, not silent)."""
    outcomes.heard(memory.root, cli.name, cli.title, name, mapped, memory.clock())


def on_start(memory: Memory, sid: str, source: str, title: str = "Claude Code") -> None:
    """Start, join or continue the live session for the agent session ``sid`` of the CLI
    ``title``; two sessions starting at once decide one after the other."""
    with harness.starting(memory.root):
        _on_start(memory, sid, source, f"{title} session {sid[:8]}")


def _on_start(memory: Memory, sid: str, source: str, placeholder: str) -> None:
    """``on_start``; ``placeholder`` is the task until the session's first prompt names it."""
    now = memory.clock()
    _archive_stale(memory, now)
    state = _load(memory)
    known = state.sessions.get(sid)
    own = file_of(memory, sid)
    if own is not None:
        with hot.using(own):
            if memory.session() is None:  # its session ended: a resume starts it again
                _start(memory, sid, placeholder, own)
        return
    context = memory.session()
    if context is not None and known and known.get("session") == context.session_id:
        return  # resume, compact, clear: the same session goes on
    if context is None and known and known.get("ended") and source != "startup":
        # a resumed session whose memsite session ended: a new one carries its task on
        task = str(known.get("ended_task") or placeholder)
        task = task if task.endswith(" (resumed)") else f"{task} (resumed)"
        started = memory.start_session(task, at=now)
        _remember(memory, sid, {"session": started.context.session_id, "started": True})
        return
    if context is not None and source != "fork":
        holders = [
            other
            for other, record in state.sessions.items()
            if other != sid and record.get("session") == context.session_id
        ]
        # another agent session is working in it (one that started it, or one that joined a
        # session a person started): this one gets its own, so each records only its own work
        if holders:
            own = hot.session_file(sid)
            with hot.using(own):
                _start(memory, sid, placeholder, own)
            return
        _remember(memory, sid, {"session": context.session_id, "started": False})
        return
    parent = context.session_id if context is not None and source == "fork" else None
    task = placeholder + (f" (fork of {parent})" if parent else "")
    record = _start(memory, sid, task, None)
    if parent:
        record["parent"] = parent
        _remember(memory, sid, record)


def _archive_stale(memory: Memory, now: dt.datetime) -> None:
    """End every live session untouched for longer than ``hot.STALE``: its agent is gone (a
    killed CLI, a run whose end never fired) or a person left it; either way no new session
    should write into it, and its pending actions carry over as at any end."""
    for rel, context in memory.live_sessions():
        updated = hot.last_touched(context)
        if updated is None or now - updated <= hot.STALE:
            continue
        with hot.using(rel):
            memory.end_session(
                f"Archived as stale: untouched since {updated:%Y-%m-%d %H:%M}, longer than a "
                "day, and no end was seen.",
                at=now,
            )


def beside(memory: Memory, sid: str) -> str:
    """For an agent session with a live session of its own: the tree's main live session
    beside it, as context (what a person or another agent is doing there), else ``""``."""
    if file_of(memory, sid) is None:
        return ""
    with hot.using(hot.CONTEXT):
        context = memory.session()
    if context is None:
        return ""
    step = f"; current step: {context.current_step}" if context.current_step else ""
    return (
        f"\n## Also live beside this session\n\n{context.task}{step} (session "
        f"`{context.session_id}`, updated {context.updated[:16].replace('T', ' ')}). Another "
        "session is working there; this one records its own work.\n"
    )


def _start(memory: Memory, sid: str, task: str, own: str | None) -> dict[str, Any]:
    """Start a live session (in the current live-session file) for ``sid``."""
    started = memory.start_session(task, at=memory.clock())
    record: dict[str, Any] = {"session": started.context.session_id, "started": True, "task": task}
    if own is not None:
        record["file"] = own
    _remember(memory, sid, record)
    return record


def on_prompt(memory: Memory, sid: str, prompt: str) -> None:
    """Name a session the hook started after its first prompt."""
    known = _load(memory).sessions.get(sid)
    if not known or not known.get("started") or not known.get("task"):
        return
    line = next((" ".join(t.split()) for t in capture.stored(prompt).splitlines() if t.strip()), "")
    if not line:
        return
    if len(line) > PROMPT_CHARS:
        line = line[: PROMPT_CHARS - 1].rstrip() + "…"
    memory.retask(line, only_if=str(known["task"]))
    known.pop("task", None)
    _remember(memory, sid, known)


def on_end(memory: Memory, sid: str, reason: str, title: str = "Claude Code") -> None:
    """End the session the hook started for ``sid``; checkpoint one it only joined."""
    flush(memory)
    context = memory.session()
    with harness.lock(memory.root):
        state = _load(memory)
        known = state.sessions.pop(sid, None)
        if context is not None:  # kept, so that a resume carries the task on
            state.sessions[sid] = {"ended": True, "ended_task": context.task}
            if known and known.get("file"):
                state.sessions[sid]["file"] = known["file"]
        harness.save(memory.root, state)
    if context is None:
        return
    summary = f"{title} session {sid[:8]} ended (reason: {reason})."
    if known and known.get("started") and known.get("session") == context.session_id:
        memory.end_session(f"Session ended by the harness ({title}, reason: {reason}).")
    else:
        memory.checkpoint("manual", summary + " The session stays live.")


def on_tool(memory: Memory, event: dict[str, Any], failed: bool) -> None:
    """Record what one tool call did, when it is an edit, a command or the todo list."""
    tool = str(event.get("tool_name") or "")
    if not capture.captured(memory.root, tool):
        return  # not a tool memsite records, or switched off in [capture] of memsite.toml
    tool_input = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    now = memory.clock()
    edited = capture.edited_file(tool, tool_input)
    if edited is not None:
        if not failed:
            _edit(memory, edited, tool, tool_input, event.get("tool_response"), now)
        return
    command = capture.command_of(tool, tool_input)
    if command is not None:
        status, result = capture.outcome(failed, event.get("tool_response"), event.get("error"))
        # text from the harness is cleaned (controls, lone surrogates) and redacted whole,
        # never refused: a long command is cut to the limit once redacted (issue 34.1, 34.6)
        line = " ".join(capture.stored(command).split())
        details = {"command": line, "exit": "?" if status is None else str(status)}
        try:
            flush(memory)
        finally:  # a burst that cannot be written never costs the command its record
            memory.log("ran command", details, inputs.clean(result) or None, at=now, cut=True)
        return
    change = capture.task_change(tool, tool_input, event.get("tool_response"))
    if change is not None and not failed and memory.session() is not None:
        _task(memory, *change, now=now)
        return
    listed = capture.todos(tool, tool_input)
    if listed is not None and memory.session() is not None:
        open_items, done = listed
        pending = memory.session().pending_actions  # type: ignore[union-attr]
        for item in open_items:
            if item not in pending:
                memory.pending_add(item, at=now)
        for item in done:
            if item in pending:
                memory.pending_done(item, at=now)


def _edit(
    memory: Memory, path: str, tool: str, tool_input: dict[str, Any], response: object,
    now: dt.datetime,
) -> None:  # fmt: skip
    repo = code.repository_root(memory.root)
    if "\0" in path:
        return  # no file is named so: nothing was edited
    try:
        target = str(real_path(path)) if Path(path).is_absolute() else path
        # a comma is no reason to lose an edit (only a Paths value may not hold one)
        rel = code.normalise(target.replace(",", "\0"), repo).replace("\0", ",")
    except MemsiteError:
        return  # outside the repository: not this code
    # an edit of a link loop is still an edit
    tree, real = real_path(memory.root), real_path(Path(repo, rel))
    if tree == real or tree in real.parents:
        return  # the agent writing memory itself: memsite records its own writes
    # redacted before hot/harness.json keeps it until the burst is written (issue 34.1); a
    # newline or another control character in the name is kept, shown as its escape (34.6)
    name = inputs.escaped(redact(rel)[0])
    added, removed = capture.changed_lines(tool, tool_input, response)
    stamp = now.isoformat()
    # one read-modify-write under the hot lock (issue 34.5): the burst this edit ends is
    # logged and this edit's saved before another hook can read the bookkeeping
    with harness.lock(memory.root):
        state = _load(memory)
        ended = state.burst
        if ended is not None and ended.continues(name, now):
            ended.count += 1
            ended.added += added
            ended.removed += removed
            ended.last = stamp
            harness.save(memory.root, state)
            return
        state.burst = harness.Burst(name, stamp, stamp, 1, added, removed)
        try:
            if ended is not None:
                _log(memory, ended)
        finally:  # an ended burst that cannot be written never costs this edit its record
            harness.save(memory.root, state)
    if len(name) <= inputs.LINE_LIMIT:  # a longer name is in the entry, cut
        memory.touch([name], at=now)


def flush(memory: Memory) -> None:
    """Write the open burst of edits as one ``edited file`` entry."""
    with harness.lock(memory.root):
        state = _load(memory)
        burst, state.burst = state.burst, None
        if burst is None:
            return
        try:
            _log(memory, burst)
        finally:  # one that cannot be written is dropped (the error says so), never retried
            harness.save(memory.root, state)


def _log(memory: Memory, burst: harness.Burst) -> None:
    """The ``edited file`` entry of ``burst`` (the caller holds the hot lock)."""
    details = {"file": burst.file, "lines": f"+{burst.added} -{burst.removed}"}
    if burst.count > 1:
        details["edits"] = str(burst.count)
    # the paths field takes the file itself: not an escaped name (normalise turns every
    # backslash of a name into "/", so one left here is an escape), a cut one, one with a
    # comma (which separates paths) or one a glob would read otherwise ("[id].tsx")
    name = burst.file
    literal = len(name) <= inputs.LINE_LIMIT and "\\" not in name and "," not in name
    paths = [name] if literal and not code.is_glob(name) else []
    memory.log("edited file", details, at=burst.first, paths=paths, cut=True)


def _load(memory: Memory) -> harness.Harness:
    """The bookkeeping; when it could not be read, a notice says so (the hook's stderr)."""
    state = harness.load(memory.root)
    if state.problem and state.problem not in memory.notices:
        memory.notices.append(state.problem)
        if memory.notify is not None:
            memory.notify(state.problem)
    return state


def _task(memory: Memory, number: str, subject: str, status: str, now: dt.datetime) -> None:
    """A task the agent created joins the pending actions; one it completed is done."""
    with harness.lock(memory.root):
        state = _load(memory)
        known = state.tasks.get(number, "")
        if status in ("completed", "deleted"):  # done: its id is needed no more
            if state.tasks.pop(number, None) is not None:
                harness.save(memory.root, state)
        elif subject and subject != known:
            state.remember_task(number, subject)
            harness.save(memory.root, state)
    name = subject or known
    if not name:
        return
    pending = memory.session().pending_actions  # type: ignore[union-attr]
    if status in ("completed", "deleted"):
        if known and known in pending:
            memory.pending_done(known, at=now)
        elif name in pending:
            memory.pending_done(name, at=now)
    elif name not in pending:
        memory.pending_add(name, at=now)


def _remember(memory: Memory, sid: str, record: dict[str, Any]) -> None:
    with harness.lock(memory.root):
        state = _load(memory)
        state.remember(sid, record)
        harness.save(memory.root, state)


def on_compacted(memory: Memory, summary: str, trigger: str) -> None:
    """Deliver the harness's summary to the checkpoint taken before the compaction (once)."""
    latest = memory.latest_checkpoint()
    if latest is not None and latest.completes and latest.summary.strip() == summary.strip():
        return  # already delivered
    memory.checkpoint(trigger, summary, completes=True)
