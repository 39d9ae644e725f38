"""The warm processes running for a tree (issue 34), as ``memsite check`` lists them: each
server writes its pid, when it started and how long it waits for a question into the lock
it holds for its whole life (``warm.serve``); a lock nobody holds is a server that has left."""

from __future__ import annotations

import fcntl
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from . import warm


@dataclass(frozen=True)
class Running:
    """A warm process of a tree, as ``memsite check`` lists it."""

    pid: int
    lexical: bool
    age: float  # seconds since it started
    idle: float  # seconds without a question before it leaves
    resident: int | None  # bytes of memory it holds, where the system says (Linux)

    def __str__(self) -> str:
        ranking = "lexical" if self.lexical else "hybrid"
        held = "" if self.resident is None else f", {self.resident / 1e6:.0f} MB resident"
        return (
            f"warm process {self.pid} ({ranking} ranking) answers this tree's prompts: up "
            f"{_span(self.age)}{held}; it leaves after {_span(self.idle)} without one "
            "(MEMSITE_WARM=off: none are started)"
        )


def warm_processes(root: Path, cache_dir: Path | None, now: float) -> list[Running]:
    """The warm processes serving the tree at ``root`` at ``now`` (seconds since the epoch):
    those whose lock is held, with what the holder wrote in it."""
    found = []
    for lexical in (False, True):
        path = warm.where(root, cache_dir, lexical)
        if path is None:  # no place for a socket: no server either
            continue
        try:
            fd = os.open(f"{path}.lock", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:  # no lock: no server was ever started here
            continue
        try:
            said = _holder(fd)
        finally:
            os.close(fd)
        try:
            pid, started, idle = int(said[0]), float(said[1]), float(said[2])
        except (IndexError, ValueError):
            continue  # no server, or one of an older memsite, which wrote nothing
        found.append(Running(pid, lexical, max(0.0, now - started), idle, _resident(pid)))
    return found


def _holder(fd: int) -> list[str]:
    """What the server holding the lock at ``fd`` wrote in it; nothing when nobody holds
    it (or it is no lock file)."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:  # held: a server is alive
        return os.read(fd, 200).decode("ascii", "replace").split()
    except OSError:
        return []
    return []


def _resident(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            line = next(line for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return None
    return int(line.split()[1]) * 1024


def _span(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
