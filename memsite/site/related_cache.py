"""The related links of the last build, kept beside the related index (issue 12, warm builds).

A warm build of an unchanged tree asked the index again for the related entries of every
decision and learning (a thousand at a year, ~1.5 s). The answers are kept in one JSON file
beside the index, under a key made of what they depend on: the files the index holds (their
sizes, times and content hashes, from its ``state.json``), the ids asked and the limit,
whether meaning takes part, and the search code itself. Any change to one of them asks the
index again. Like every cache of memsite it is safe to delete.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

FORMAT = 1


@dataclass(frozen=True)
class Related:
    """What a related link is made of (the fields of a ``Hit`` the site reads)."""

    record: str
    path: str
    heading: str
    anchor: str


def answers(index: Any, ids: Sequence[str], limit: int) -> dict[str, list[Related]]:
    """``index.related_many(ids, limit)`` as links, from the cache while its key holds."""
    from ..search import meaning

    index.refresh()
    place = index.folder.parent / f"{index.folder.name}.answers.json"
    key = _key(index.state_path, ids, limit, meaning.available())
    kept = _read(place, key) if key else None
    if kept is not None:
        return kept
    found = {
        entry_id: [Related(h.record or h.id, h.path, h.heading, h.anchor) for h in hits]
        for entry_id, hits in index.related_many(list(ids), limit=limit).items()
    }
    if key:
        _write(place, key, found)
    return found


def _key(state_path: Path, ids: Sequence[str], limit: int, meaning: bool) -> str | None:
    try:
        files = json.loads(state_path.read_text("utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    parts = [FORMAT, files, list(ids), limit, meaning, _code()]
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()


def _code() -> str:
    """A hash of the search wing's source: new ranking code asks the index again."""
    folder = Path(__file__).resolve().parent.parent / "search"
    digest = hashlib.sha256()
    for source in sorted(folder.rglob("*.py")):
        name = source.relative_to(folder).as_posix()
        digest.update(name.encode("utf-8") + b"\0" + source.read_bytes())
    return digest.hexdigest()


def _read(place: Path, key: str) -> dict[str, list[Related]] | None:
    try:
        data = json.loads(place.read_text("utf-8"))
        if data["key"] != key:
            return None
        return {
            entry_id: [Related(**link) for link in links]
            for entry_id, links in data["answers"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None  # missing, stale or damaged: asked again


def _write(place: Path, key: str, found: dict[str, list[Related]]) -> None:
    data = {"key": key, "answers": {i: [asdict(r) for r in links] for i, links in found.items()}}
    try:
        handle, temporary = tempfile.mkstemp(prefix=".answers-", dir=place.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(temporary, place)  # a reader sees the old answers or the new ones
    except OSError:
        return  # a cache that cannot be written is only slower
