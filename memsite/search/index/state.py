"""The index's record of the tree: which markdown files it holds and which changed since the
last check, and ``state.json``, which stores per file its mtime, size and content hash with
the versions of the schema, the chunker and Whoosh that built the index.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import whoosh

from ...errors import MemsiteError
from ...store import tree
from ...store.format import DECISIONS, LEARNINGS, PERSONA
from ...store.inputs import is_utf8
from ...store.records import (
    Listing,
    from_data,
    is_record_path,
    listing,
    record_stats,
    renamed_ids,
    to_data,
)
from ..chunks import CHUNK_VERSION, Chunk
from .documents import SCHEMA_VERSION

RACY_NS = 2_000_000_000  # files touched this close to the last check are re-hashed

Stamp = tuple[int, int, int]  # a file's (mtime_ns, size, inode)


@dataclass(frozen=True)
class Refresh:
    """What bringing the index up to date did."""

    files: int  # files re-chunked
    removed: int  # files that left the index
    chunks: int  # chunks written
    rebuilt: bool
    seconds: float


class IndexBroken(MemsiteError):
    """The index cannot be used as it is (missing, corrupt, another version)."""


def stat_tree(root: Path, walk: Path | None = None) -> dict[str, tuple[int, int]]:
    """``(mtime_ns, size)`` of every markdown file, as ``tree.markdown_files`` finds them.

    This runs before every query, so it walks with ``os.scandir`` and plain strings; a
    tree with symbolic links takes the slower, checked walk of ``tree.markdown_files``. The
    decision records of the ``[records]`` folders (issue 26) are files of the index too,
    their folders' walk kept in the file ``walk`` for the next process (issue 34).
    """
    stats: dict[str, tuple[int, int]] = {}
    pending = [("", str(root))]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                # a link, or a name that is not UTF-8 (which no index can hold): the checked
                # walk, which skips what it must and says why in `check`
                if entry.is_symlink() or not is_utf8(entry.name):
                    return {**_stat_checked(root), **_record_stats(root, walk)}
                rel = prefix + entry.name
                if entry.is_dir():
                    pending.append((rel + "/", entry.path))
                elif entry.name.endswith(".md") and rel != PERSONA and entry.is_file():
                    with contextlib.suppress(OSError):
                        info = entry.stat()
                        stats[rel] = (info.st_mtime_ns, info.st_size)
    return {**stats, **_record_stats(root, walk)}


def _record_stats(root: Path, walk: Path | None) -> dict[str, tuple[int, int]]:
    """``record_stats``, the walk of the records' folders read from ``walk`` when this
    process has none that holds, and kept there when it was walked again."""
    if walk is not None:
        read: list[Listing | None] = []

        def remembered() -> Listing | None:
            read.append(_read_walk(walk))
            return read[-1]

        found = listing(root, remembered)
        if read and found is not read[-1]:
            with contextlib.suppress(OSError):
                write_state(walk, to_data(found))
    return record_stats(root)


def _read_walk(path: Path) -> Listing | None:
    try:
        return from_data(json.loads(path.read_bytes()))
    except (OSError, ValueError, RecursionError):  # nested past Python's limit too
        return None


def _stat_checked(root: Path) -> dict[str, tuple[int, int]]:
    paths, _ = tree.markdown_files(root)
    stats = {}
    for rel in paths:
        if rel == PERSONA:
            continue
        with contextlib.suppress(OSError):
            info = (root / rel).stat()
            stats[rel] = (info.st_mtime_ns, info.st_size)
    return stats


def changed_files(state: dict, stats: dict[str, tuple[int, int]]) -> list[str]:
    """Files to look at again: gone, new, with another mtime or size, or touched so close to
    the last check that a change within the same mtime tick could have been missed."""
    known = state["files"]
    racy = state.get("checked_ns", 0) - RACY_NS
    paths = [p for p in known if p not in stats]
    for path, (mtime, size) in stats.items():
        old = known.get(path)
        if old is None or old[0] != mtime or old[1] != size or mtime >= racy:
            paths.append(path)
    return paths


def new_state(root: Path, files: dict, checked: int, renamed: dict[str, str]) -> dict:
    """The ``state.json`` of an index holding ``files``, checked at ``checked`` (ns), its
    records whose id is not their file's name in ``renamed`` (``{path: id}``)."""
    return {
        "schema": SCHEMA_VERSION,
        "chunks": CHUNK_VERSION,
        "whoosh": whoosh.versionstring(),
        "root": str(root.resolve()),
        "checked_ns": checked,
        "files": files,
        "renamed": renamed,
    }


def renamed_records(root: Path, state: dict, changed: Iterable[str]) -> dict[str, str]:
    """The ids of the tree's records that are not their file's name (``{path: id}``, issue
    34): as ``state`` has them unless a cold file or a record is among ``changed`` (only
    those decide them), else asked again."""
    known = state.get("renamed")
    if isinstance(known, dict) and not any(
        rel in (DECISIONS, LEARNINGS) or is_record_path(rel) for rel in changed
    ):
        return known
    return renamed_ids(root)


def moved_records(state: dict, renamed: dict[str, str]) -> set[str]:
    """The records whose id changed since ``state``: their chunks are read again."""
    known = state.get("renamed")
    known = known if isinstance(known, dict) else {}
    return {rel for rel in {*known, *renamed} if known.get(rel) != renamed.get(rel)}


def as_record(chunks: list[Chunk], record_id: str | None) -> list[Chunk]:
    """A record's chunks under the id the tree gives it (``None``: its file's name)."""
    if record_id is None:
        return chunks
    return [
        dataclasses.replace(c, id=record_id + c.id[len(c.record) :], record=record_id)
        for c in chunks
    ]


def read_state(
    state_path: Path, folder: Path, root: Path, cached: tuple[Stamp, dict] | None
) -> tuple[Stamp, dict]:
    """The stamp of ``state_path`` and the state it holds, checked against this memsite,
    this Whoosh and this tree; ``cached`` as it is when the file has not changed since."""
    try:
        info = state_path.stat()
        key = (info.st_mtime_ns, info.st_size, info.st_ino)
        if cached is not None and cached[0] == key:
            return cached  # checked when it was read; not changed since
        state = json.loads(state_path.read_text("utf-8"))
    except FileNotFoundError:
        raise IndexBroken(f"{folder} is missing") from None
    except (OSError, ValueError) as err:
        raise IndexBroken(f"{state_path} is unreadable ({err})") from None
    except RecursionError:
        raise IndexBroken(f"{state_path} is unreadable (nested too deeply)") from None
    if not isinstance(state, dict) or not isinstance(state.get("files"), dict):
        raise IndexBroken(f"{state_path} is corrupt")
    if (
        state.get("schema") != SCHEMA_VERSION
        or state.get("chunks") != CHUNK_VERSION
        or state.get("whoosh") != whoosh.versionstring()
    ):
        raise IndexBroken(
            f"{folder} was built by another version of memsite or Whoosh "
            f"(schema {state.get('schema')}.{state.get('chunks')}, "
            f"Whoosh {state.get('whoosh')})"
        )
    if state.get("root") != str(root.resolve()):
        raise IndexBroken(f"{folder} belongs to another tree ({state.get('root')})")
    return key, state


def write_state(path: Path, data: dict) -> None:
    """Write ``state.json`` atomically: a reader sees the old state or the new one."""
    fd, temp = tempfile.mkstemp(prefix=".state-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
