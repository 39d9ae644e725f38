"""Where a tree's index lives, found without importing Whoosh: so a hook can tell in a
millisecond whether the index was ever built (issue 24: at a year, building it outlasts the
SessionStart hook's limit)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from pathlib import Path

from ...store.markup import slugify
from ...store.reading import real_path


def default_cache_dir(root: Path) -> Path:
    """``$MEMSITE_CACHE``, else a ``.memsite`` folder beside the tree."""
    env = os.environ.get("MEMSITE_CACHE")
    return Path(env) if env else real_path(root).parent / ".memsite"


def content_hash(data: bytes) -> str:
    """The hash ``state.json`` records of a file's bytes."""
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def index_key(root: Path) -> str:
    """The name of the tree's folder in the cache: its name and a hash of its real path."""
    real = real_path(root)  # a --root that is a link loop: no tree, later
    return f"{slugify(real.name, 40)}-{content_hash(str(real).encode())[:8]}"


def is_built(root: Path, cache_dir: Path | None = None, name: str = "index") -> bool:
    """Whether an index of the tree was ever built in the cache (its ``state.json``)."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(Path(root))
    return (cache / name / index_key(root) / "state.json").is_file()


def builder_lock(root: Path, cache_dir: Path | None = None, name: str = "index") -> Path:
    """The lock the tree's background builder holds while it runs (issue 34: one builder
    per tree, however many sessions start on an unbuilt index)."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(Path(root))
    return cache / name / f"{index_key(root)}.builder.lock"


def is_held(lock: Path) -> bool:
    """Whether a process holds ``lock`` (its folder is made when missing)."""
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return False
