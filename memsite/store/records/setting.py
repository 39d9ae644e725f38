"""``memsite init --records DIR`` (issue 26): the folder checked, and its ``[records]`` table
added to ``memsite.toml`` by an append, never by rewriting the file."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from ...errors import InvalidInput
from .. import code, config, storage
from .walk import TABLE


def folder_setting(tree: Path, folder: Path) -> str:
    """``folder`` as ``[records] paths`` holds it: relative to the tree ``tree`` (which may
    not exist yet). ``InvalidInput`` for a folder that is missing, outside the repository
    that holds the tree, or inside the tree."""
    real = folder.resolve()
    if not real.is_dir():
        raise InvalidInput(f"--records {folder}: no such folder")
    repo = code.repository_root(tree).resolve()
    if real != repo and repo not in real.parents:
        raise InvalidInput(f"--records {folder}: outside the repository {repo}; not read")
    real_tree = tree.resolve()
    if real == real_tree or real_tree in real.parents:
        raise InvalidInput(
            f"--records {folder}: inside the memory tree, whose files are notes already"
        )
    return posixpath.normpath(Path(os.path.relpath(real, real_tree)).as_posix())


def add_folders(tree: Path, paths: list[str]) -> list[str]:
    """Append a ``[records]`` table naming ``paths`` to the tree's ``memsite.toml``; the paths
    it names now. One that the file sets already is kept as it is (``InvalidInput`` when its
    ``[records]`` table names other folders: add them to it by hand)."""
    have = config.read(tree, TABLE)
    given = list(have.get("paths", ())) if isinstance(have.get("paths"), tuple) else []
    wanted = [p for p in dict.fromkeys(paths) if p not in given]
    if not wanted:
        return []
    if have:
        raise InvalidInput(
            f"{config.path(tree)} has a [records] table already; add "
            + ", ".join(repr(p) for p in wanted)
            + " to its paths by hand"
        )
    listed = ", ".join(_quoted(p) for p in wanted)
    storage.append(
        tree,
        config.path(tree),
        lambda current: (
            f"[records]\n# decision records read in place as decisions\npaths = [{listed}]\n"
        ),
    )
    return wanted


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
