"""Processes that outlive the hook that starts them: the background build of the index that
a SessionStart on a fresh clone starts (:func:`build_index`, issue 24), and the double fork
that starts it and the warm process of :mod:`.warm` (:func:`detached`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..search.index.place import builder_lock, is_held


def detached(command: list[str], cache_dir: Path | None, log: str | None = None) -> None:
    """Run ``command`` in a process of its own that outlives the caller: a double fork, so
    nothing waits for it or is held by it; its output goes nowhere, or its stderr to
    ``log``. It has the caller's environment, with the index cache ``cache_dir`` when one
    was given."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["MEMSITE_CACHE"] = str(cache_dir)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                quiet = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(quiet, fd)
                if log:
                    os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 2)
                os.execve(command[0], command, env)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


# the index, then the vectors of the semantic extra (a hybrid search brings them up to date);
# first the tree's builder lock, before memsite is imported: a second builder leaves at once
_BUILD = (
    "import fcntl, os, sys\n"
    "try:\n"
    "    lock = os.open(sys.argv[2], os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)\n"
    "    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
    "except BlockingIOError:\n"
    "    sys.exit(0)\n"
    "except OSError:\n"
    "    pass\n"
    "from memsite import Memory\n"
    "with Memory(sys.argv[1]) as memory:\n"
    "    memory.index(); memory.search('memory', limit=1)\n"
)


def build_index(root: Path, cache_dir: Path | None) -> None:
    """Start ``memsite index`` for the tree in a process of its own, which outlives the hook
    (issue 24: at a year the first build takes longer than the hook may). A double fork:
    the builder belongs to no one, so nothing waits for it or is held by it. One at a time:
    none is started while the tree's builder lock is held (issue 34)."""
    lock = builder_lock(root, cache_dir)
    if is_held(lock):
        return
    detached([sys.executable, "-c", _BUILD, str(root), str(lock)], cache_dir)
