"""Whether a file of the tree can take one more entry: an append to a file that does not
parse cleanly would be swallowed (after a code fence that never closes, the new entry is
code) or would hide behind a broken heading, so writes refuse such a file (issue 15.13).

The check runs on every append, under the file's lock, and cold files grow to megabytes: it
looks only at the lines that can be structure (fences and headings, found by one regular
expression) and follows fences the way ``format.parse_entries`` does, with the same
``markup`` functions, so it reports exactly the unclosed fences and the bad entry headings
that ``memsite check`` reports for the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import CHECK_TREE, InvalidInput, WriteFailed
from . import markup
from .format import Problem, classify, parse_entries, parse_heading

_STRUCTURE_LINE = re.compile(r"^ {0,3}(?:`{3,}|~{3,}|#{1,6}(?:[ \t]|$)).*$", re.MULTILINE)


def first_problem(text: str, rel: str) -> Problem | None:
    """The first unclosed code fence or unreadable entry heading of ``text``, or None."""
    kind = classify(rel)
    if kind.level == 0:
        return None
    text = markup.normalize_newlines(text.removeprefix("\ufeff"))
    fence: tuple[str, int] | None = None
    opened_at = line = 1
    last = 0
    for match in _STRUCTURE_LINE.finditer(text):
        line += text.count("\n", last, match.start())
        last = match.start()
        candidate = match.group(0)
        if fence is not None:
            if markup.fence_closes(candidate, fence):
                fence = None
            continue
        opened = markup.fence_open(candidate)
        if opened:
            fence, opened_at = opened, line
        elif markup.heading_level(candidate) == kind.level:
            try:
                parse_heading(candidate, kind)
            except InvalidInput as err:
                return Problem(rel, line, str(err))
    if fence is not None:
        return Problem(rel, opened_at, "code fence is never closed; it hides the rest of the file")
    return None


def refuse_damaged(path: Path, text: str, rel: str) -> None:
    """Raise ``WriteFailed`` (one line: file, line, problem, what to do) when ``text``, the
    current content of ``path``, would swallow or misread an entry appended to it."""
    problem = first_problem(text, rel)
    if problem is not None:
        raise WriteFailed(
            f"{path}:{problem.line}: {problem.message}; nothing was written: fix the file "
            f"by hand ({CHECK_TREE} lists its problems), then write again"
        )


def entry_ids(text: str, rel: str) -> set[str]:
    """The ids of the entries ``format.parse_entries`` reads in ``text`` (not ids merely
    mentioned in a body or shown in a code block)."""
    return {entry.id for entry in parse_entries(text, rel).entries}
