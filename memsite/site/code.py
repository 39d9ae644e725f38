"""The site's "Code" page (issue 14): every path that decisions govern, each with its
decisions, newest first, current and superseded marked; and the commit links the entry
templates show (``commit_url``, from the ``repo_url`` MkDocs knows)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..store.code import commit_url, pattern_problem
from ..store.model import Entry

CODE_URI = "code/index.md"

__all__ = ["CODE_URI", "code_page", "commit_url"]


def code_page(builder: Any, decisions: Sequence[Entry]) -> str | None:
    """Add the Code page for ``decisions`` (newest first) to ``builder``; its URI, or None
    when no decision names a path (then there is no page)."""
    by_path: dict[str, list[Entry]] = defaultdict(list)
    for entry in decisions:
        for path in dict.fromkeys(entry.paths):
            if pattern_problem(path) is None:  # a glob that cannot compile governs nothing
                by_path[path].append(entry)
    if not by_path:
        return None
    paths = sorted(by_path.items(), key=lambda item: (item[0].rstrip("/").casefold(), item[0]))
    builder.add(CODE_URI, "code.md.j2", title="Code", paths=paths, count=len(paths))
    return CODE_URI
