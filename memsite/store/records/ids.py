"""A decision record's id (issue 34): its file's name, unless a decision or learning of the
tree has that id already; then ``adr-<name>`` (``adr-<name>-2`` when that is taken too).

The tree's own entry keeps its id, whatever file arrives in a records folder: a record named
``2026-11-05-move-the-session-store-from-mongodb-to-postgres.md`` took the id of the memory's
decision of that name, and recall, search and the hook returned the record in its place.
Only the ids of the cold files count (the decisions and learnings, the entries a record can
stand in for), so the ids are known from the cold files and the records' names alone: the
index keeps each record's id in ``state.json`` and re-reads a record whose id changed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from .. import reading
from ..format import DECISIONS, LEARNINGS, next_free_id, parse_entries
from ..model import Entry
from .formats import record_id
from .listing import checked_files

PREFIX = "adr-"

_TAKEN: dict[str, tuple[tuple[object, ...], dict[str, str]]] = {}


def taken_ids(root: Path) -> dict[str, str]:
    """The ids of the tree's decisions and learnings, each with the cold file that holds it;
    read again only when a cold file changed."""
    stamp: list[object] = []
    for rel in (DECISIONS, LEARNINGS):
        try:
            info = os.stat(root / rel)
            stamp.append((info.st_mtime_ns, info.st_size, info.st_ino))
        except OSError:
            stamp.append(None)
    key = os.path.abspath(root)
    known = _TAKEN.get(key)
    if known is not None and known[0] == tuple(stamp):
        return known[1]
    taken: dict[str, str] = {}
    for rel in (DECISIONS, LEARNINGS):
        try:
            text = reading.read_regular(root / rel).decode("utf-8")
        except (OSError, reading.NotAFile, UnicodeDecodeError):
            continue  # as the tree reads it: a file it cannot read has no entries
        if "\x00" in text:
            continue
        taken.update(ids_of(parse_entries(text, rel).entries))
    _TAKEN[key] = (tuple(stamp), taken)
    return taken


def ids_of(entries: Iterable[Entry]) -> dict[str, str]:
    """``{id: path}`` of the decisions and learnings among ``entries``."""
    return {e.id: e.path for e in entries if e.kind in ("decision", "learning")}


def own_ids(names: Iterable[str], taken: Mapping[str, str]) -> dict[str, str]:
    """``{name: id}`` of the records named ``names`` whose name is ``taken``."""
    names = list(names)
    used = {*taken, *names}
    out: dict[str, str] = {}
    for name in sorted(set(names)):
        if name in taken:
            out[name] = next_free_id(f"{PREFIX}{name}", used)
            used.add(out[name])
    return out


def renamed_ids(root: Path) -> dict[str, str]:
    """``{path: id}`` of the tree's records whose id is not their file's name."""
    names = {rel: record_id(rel) for rel in checked_files(root)[0]}
    own = own_ids(names.values(), taken_ids(root))
    return {rel: own[name] for rel, name in names.items() if name in own}
