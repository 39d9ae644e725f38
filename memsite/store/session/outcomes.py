"""Whether memsite could map the last few hook events of each agent CLI (issue 37, "silence
is not success"), kept in ``hot/hooks.json`` for ``memsite check``.

A CLI whose hooks name events memsite cannot map (Copilot CLI's camelCase names send no event
name) calls ``memsite hook`` on every turn and gets nothing back, and the agent works without
memory while nothing fails. The hook notes each event's outcome here; ``check`` warns of a
CLI whose last events were all unmapped. It is written only when what it holds changes (an
unmapped event, or a mapped one while unmapped ones are remembered), so a sound setup never
writes it and reads at most a small file per event; an unreadable one reads as empty.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from .. import reading, storage
from ..format import Problem
from . import hot

FILE = "hot/hooks.json"
KEPT = 8  # events remembered per CLI: a turn's worth
LIMIT = 64 * 1024  # bytes read; a few CLIs take a few hundred
MAPPED, UNMAPPED = "+", "-"


def _load(root: Path) -> dict[str, Any]:
    try:
        data = json.loads(reading.read_inside(root, root / FILE, limit=LIMIT).decode("utf-8"))
    except Exception:  # noqa: BLE001 - bookkeeping only: a damaged file starts again
        return {}
    return data if isinstance(data, dict) else {}


def heard(
    root: Path, name: str, title: str, event: str | None, mapped: bool, now: dt.datetime
) -> None:
    """Note that the CLI ``name`` (shown as ``title``) sent ``event`` (its own name, None
    when it gave none) and whether memsite mapped it."""
    known = _load(root).get(name)
    recent = str(known.get("recent", "")) if isinstance(known, dict) else ""
    if mapped and UNMAPPED not in recent:
        return  # nothing to tell: the usual case, never written
    with storage.lock(root / hot.LOCK):
        data = _load(root)
        record = data.get(name) if isinstance(data.get(name), dict) else {}
        recent = (str(record.get("recent", "")) + (MAPPED if mapped else UNMAPPED))[-KEPT:]
        record = {**record, "title": title, "recent": recent}
        if not mapped:
            record["last"] = {"event": event, "at": now.isoformat(timespec="seconds")}
        data[name] = record
        storage.replace(root, root / FILE, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def problems(root: Path) -> list[Problem]:
    """A warning for each CLI whose hooks sent events lately and none of the last was
    mapped: its hooks reach memsite, but memsite does nothing for them."""
    found = []
    for name, record in sorted(_load(root).items()):
        if not isinstance(record, dict):
            continue
        recent = str(record.get("recent", ""))
        if not recent or set(recent) != {UNMAPPED}:
            continue
        last = record.get("last") if isinstance(record.get("last"), dict) else {}
        event = last.get("event")
        what = f"event {event!r}" if isinstance(event, str) else "an event without a name"
        title = record.get("title") or name
        found.append(
            Problem(
                FILE,
                1,
                # "in a row": mapped events before the first unmapped one are never written
                f"{title}'s hooks sent memsite {len(recent)} event(s) in a row it could not map "
                f"(the last: {what}, {last.get('at', '?')}): that CLI gets no "
                f"memory; rewrite its hooks with `memsite init --{name}` (or, if they are gone, "
                f"delete {FILE})",
                "warning",
            )
        )
    return found
