"""Paths of the code typed on the command line: relative to the current folder, as in git
(issue 25.2).

The library and MCP take paths relative to the repository root; a command turns what was
typed in a subfolder into that (``cd src && memsite why ./cart.py`` asks about
``src/cart.py``) before its one ``Memory`` call. Typed at the root or outside the repository
(with ``--root``), a path stays as given: relative to the repository root.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import click

from ..errors import InvalidInput
from ..memory import Memory


@dataclass(frozen=True)
class Typed:
    """Paths typed in the current folder, made relative to the repository root, and the
    one-line warnings for those the working tree does not hold."""

    paths: list[str]
    missing: list[str]

    def warn(self) -> None:
        """Echo the warnings on stderr: after the write, so a refused write shows its error
        alone."""
        for line in self.missing:
            click.echo(line, err=True)


def from_here(memory: Memory, paths: Iterable[str], name: str) -> Typed:
    """``paths`` relative to the repository root of ``memory``."""
    paths = list(paths)
    if not paths:
        return Typed([], [])
    from ..store import code  # only for a --path: a plain write never loads the matcher

    repo, here = code.repository_root(memory.root), Path.cwd()
    out, missing = [], []
    for typed in paths:
        path = code.from_folder(typed, repo, here)
        out.append(path)
        line = _missing(typed, path, repo, name)
        if line is not None:
            missing.append(line)
    return Typed(out, missing)


def _missing(typed: str, path: str, repo: Path, name: str) -> str | None:
    from ..store import code

    try:
        stored = code.normalise(path, repo, name)
    except InvalidInput:
        return None  # the library refuses it with its own message
    if code.present(stored, repo):
        return None
    where = "" if stored == typed.strip() else f" ({stored} from the repository root)"
    return f"memsite: {name} {typed!r}{where} does not exist in {repo}; written anyway"
