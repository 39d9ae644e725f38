"""Pending actions of ended sessions waiting for the next session (``hot/carried.json``).

``session end`` leaves the open items of the session here and the next ``session start`` of
the tree takes them into its pending list (issue 25.4). Callers hold the hot lock.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import reading, storage
from ..inputs import stored_line

CARRIED = "hot/carried.json"
# a few pending actions; megabytes of them are damage, not state
MAX_CARRIED = 1024 * 1024


def load(root: Path) -> list[tuple[str, str]]:
    """The waiting items as (text, id of the session they come from), oldest first; none
    when the file is missing or cannot be read (carried work is a courtesy, not a record:
    the archived session in the warm log still lists it)."""
    try:
        raw = reading.read_inside(root, root / CARRIED, limit=MAX_CARRIED)
        data = json.loads(raw.decode("utf-8"))
        items = data.get("pending") if isinstance(data, dict) else None
        # one clean line each, as the live session reads them back: a lone surrogate's
        # escape made session start a UnicodeEncodeError (the sweep after issue 36)
        found = [
            (stored_line(str(item["text"])), stored_line(str(item.get("from", ""))))
            for item in items or []
            if isinstance(item, dict) and "text" in item
        ]
        return [(text, source) for text, source in found if text]
    except Exception:  # noqa: BLE001 - a damaged file must not stop a session from starting
        return []


def add(root: Path, pending: list[str], session_id: str) -> None:
    """Leave ``pending`` of the ended session ``session_id`` for the next session."""
    waiting = load(root)
    known = {text for text, _ in waiting}
    waiting += [(text, session_id) for text in pending if text not in known]
    if waiting:
        items = [{"text": text, "from": source} for text, source in waiting]
        text = json.dumps({"pending": items}, indent=2, ensure_ascii=False) + "\n"
        storage.replace(root, root / CARRIED, text)


def clear(root: Path) -> None:
    storage.remove(root, root / CARRIED)
