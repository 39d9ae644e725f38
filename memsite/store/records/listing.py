"""Which files the ``[records]`` table names (issues 26 and 34): the walk of :mod:`.walk`,
remembered.

Its result is remembered with the modification time of every folder it looked in and the stamp
of ``memsite.toml``, and walked again only when one of them changed (issue 34: a glob over
100,000 files took 7 s, before every search).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import code, config
from ..format import Problem
from .walk import Listing, Walk

# the longest record of the devset is 27 KB; a megabyte is a file put in the wrong place
MAX_BYTES = 1024 * 1024
# a folder changed this close to the walk may change again within its mtime's tick
RACY_NS = 2_000_000_000

_REMEMBERED: dict[str, Listing] = {}


def listing(root: Path, remembered: Callable[[], Listing | None] | None = None) -> Listing:
    """The walk of the tree's ``[records]`` paths: remembered while no folder it looked in
    and not ``memsite.toml`` changed, else walked again. ``remembered`` gives the walk an
    earlier process kept (the index keeps it beside ``state.json``), asked only when this
    process has none that holds."""
    key = os.path.abspath(root)
    stamp = _stamp(root)
    known = _REMEMBERED.get(key)
    if known is None or known.stamp != stamp or not _unchanged(known):
        known = remembered() if remembered is not None else None
    if known is not None and known.stamp == stamp and _unchanged(known):
        _REMEMBERED[key] = known
        return known
    found = Walk(root, stamp).listing()
    _REMEMBERED[key] = found
    return found


def to_data(found: Listing) -> dict[str, Any]:
    """``found`` as JSON data (:func:`from_data` reads it back)."""
    return {
        "files": [list(item) for item in found.files],
        "linked": sorted(found.linked),
        "problems": [[p.path, p.line, p.message, p.severity] for p in found.problems],
        "folders": [list(item) for item in found.folders],
        "stamp": [found.stamp[0], list(found.stamp[1])],  # type: ignore[call-overload]
        "walked_ns": found.walked_ns,
    }


def from_data(data: Any) -> Listing | None:
    """The ``Listing`` :func:`to_data` made, or None for anything else."""
    try:
        return Listing(
            tuple((str(rel), str(path)) for rel, path in data["files"]),
            frozenset(str(rel) for rel in data["linked"]),
            tuple(Problem(str(p), int(n), str(m), str(s)) for p, n, m, s in data["problems"]),
            tuple((str(folder), int(mtime)) for folder, mtime in data["folders"]),
            (str(data["stamp"][0]), tuple(int(n) for n in data["stamp"][1])),
            int(data["walked_ns"]),
        )
    except (TypeError, ValueError, KeyError, IndexError):
        return None


def checked_files(root: Path) -> tuple[dict[str, tuple[int, int]], list[Problem]]:
    """``(mtime_ns, size)`` of every record file, by its path relative to the tree, each a
    regular file of at most ``MAX_BYTES``; what is left out is a problem (one gone since the
    walk is left out quietly)."""
    found = listing(root)
    problems = list(found.problems)
    stats: dict[str, tuple[int, int]] = {}
    for rel, path in found.files:
        try:
            info = os.stat(path)
        except FileNotFoundError:
            continue
        except OSError as err:
            problems.append(Problem(rel, 1, f"cannot read: {err.strerror}"))
            continue
        if not stat.S_ISREG(info.st_mode):
            problems.append(Problem(rel, 1, "not a regular file; not read"))
        elif info.st_size > MAX_BYTES:
            problems.append(Problem(rel, 1, too_large(info.st_size)))
        else:
            stats[rel] = (info.st_mtime_ns, info.st_size)
    return stats, problems


def too_large(size: int) -> str:
    return f"{size:,} bytes, over the {MAX_BYTES:,}-byte limit of a record; not read"


def _stamp(root: Path) -> tuple[object, ...]:
    try:
        info = os.stat(config.path(root))
        own: tuple[int, ...] = (info.st_mtime_ns, info.st_size, info.st_ino)
    except OSError:
        own = ()
    return (str(code.repository_root(root)), own)


def _unchanged(known: Listing) -> bool:
    racy = known.walked_ns - RACY_NS
    for folder, mtime in known.folders:
        try:
            now = os.stat(folder).st_mtime_ns
        except OSError:
            return False
        if now != mtime or now >= racy:
            return False
    return True
