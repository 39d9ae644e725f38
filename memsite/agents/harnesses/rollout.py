"""Codex's session log (its "rollout", the JSONL file at an event's ``transcript_path``) read
for one tool call (issue 37): Codex's PostToolUse carries a command's output but not its
exit status, and an ``apply_patch`` its patch but not the diff it made. Codex 0.169.0 writes
both just before the hook runs, as an ``item_completed`` event whose item has the tool call's
id::

    {"type": "event_msg", "payload": {"type": "item_completed", "item": {
        "type": "CommandExecution", "id": "call_2", "exit_code": 3, ...}}}
    {"type": "event_msg", "payload": {"type": "item_completed", "item": {
        "type": "FileChange", "id": "call_1", "status": "completed",
        "changes": {"/abs/a.py": {"type": "update", "unified_diff": "@@ ...", ...}}}}}

A compaction's summary is there too (the model's reply marked ``compaction_output``), where
Codex's PostCompact carries none.

The log of a long session is large: only its last ``TAIL`` bytes are read, and a path that is
not a regular file (a FIFO, a device) is not read at all.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from typing import Any

TAIL = 1 << 20  # bytes read from the end of the log: the call that just ended is near it
_EXITED = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)$", re.M)


def completed(path: object, call_id: object) -> Mapping[str, Any] | None:
    """The item the tool call ``call_id`` completed, from the end of the log at ``path``
    (else the exit status its output to the model states); None when the log cannot be
    read or does not hold it."""
    if not isinstance(call_id, str) or not call_id:
        return None
    quoted = json.dumps(call_id)
    said: Mapping[str, Any] | None = None
    for line in _tail(path):
        if quoted not in line:
            continue
        record = _json(line)
        payload = record.get("payload") if isinstance(record, dict) else None
        if not isinstance(payload, dict):
            continue
        item = payload.get("item")
        if payload.get("type") == "item_completed" and isinstance(item, dict):
            if item.get("id") == call_id:
                return item
        elif payload.get("call_id") == call_id:
            # the output the model was sent, a line after: its text says how it exited
            found = _EXITED.search(str(payload.get("output") or ""))
            if found and said is None:
                said = {"id": call_id, "exit_code": int(found.group(1))}
    return said


def compaction(path: object) -> str | None:
    """The summary of the latest compaction, from the end of the log at ``path``: the
    model's reply Codex marked ``compaction_output``; None when the log does not hold one."""
    for line in _tail(path):
        if '"compaction_output"' not in line:
            continue
        record = _json(line)
        payload = record.get("payload") if isinstance(record, dict) else None
        meta = record.get("metadata") if isinstance(record, dict) else None
        if not isinstance(payload, dict) or not isinstance(meta, dict):
            continue
        if meta.get("compaction_output") is True and payload.get("type") == "message":
            parts = payload.get("content") if isinstance(payload.get("content"), list) else []
            text = "".join(
                p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
            if text.strip():
                return text
    return None


def exit_code(item: Mapping[str, Any] | None) -> int | None:
    """A completed command's exit status; None when the item does not say (still running)."""
    code = item.get("exit_code") if item is not None else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _tail(path: object) -> list[str]:
    """The whole lines of the last ``TAIL`` bytes of the file at ``path``, last first."""
    if not isinstance(path, str) or not path or "\0" in path:
        return []
    try:
        fd = os.open(os.path.expanduser(path), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return []
        start = max(info.st_size - TAIL, 0)
        data = os.pread(fd, TAIL, start)
    except OSError:
        return []
    finally:
        os.close(fd)
    lines = data.decode("utf-8", "replace").splitlines()
    if start > 0 and lines:
        lines = lines[1:]  # cut by the bounded read
    return lines[::-1]


def _json(line: str) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None
