"""Codex's ``apply_patch`` text read without applying it (issue 37): the files a patch names
and the lines it adds and removes in each. Pure functions over the text.

The format (Codex 0.169.0's grammar, sent whole in ``tool_input.command``)::

    *** Begin Patch
    *** Update File: services/auth/passwords.py
    *** Move to: services/auth/hashing.py      (optional, after an Update header)
    @@ def hash_password
    -HASHER = "bcrypt"
    +HASHER = "argon2id"
    *** Add File: notes/new.txt
    +a new line
    *** Delete File: old.txt
    *** End Patch

Codex reads a header with its surrounding whitespace trimmed, so this does too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["add", "delete", "update"]
_HEADERS: dict[str, Kind] = {
    "*** Add File:": "add",
    "*** Delete File:": "delete",
    "*** Update File:": "update",
}
_MOVE = "*** Move to:"


@dataclass(frozen=True)
class Change:
    """One file of a patch: its path as the patch names it (relative to the CLI's working
    folder, or absolute), where an update moves it (``""`` for nowhere), and the patch's
    ``+``/``-`` lines for it (an added file's lines are all ``+``; a deleted file has none)."""

    path: str
    kind: Kind
    moved_to: str = ""
    lines: tuple[str, ...] = ()

    @property
    def target(self) -> str:
        """The file as it is after the patch: where it moved, else its own path."""
        return self.moved_to or self.path

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.startswith("-"))


def changes(patch: str) -> list[Change]:
    """The files ``patch`` changes, in its order; a header naming no file is skipped (the
    caller says so: ``nameless``)."""
    found: list[Change] = []
    header: tuple[Kind, str] | None = None
    moved = ""
    lines: list[str] = []
    for raw in [*patch.splitlines(), "*** End Patch"]:
        stripped = raw.strip()
        if stripped.startswith(("*** End Patch", *_HEADERS)):
            if header is not None and header[1]:
                found.append(Change(header[1], header[0], moved, tuple(lines)))
            header, moved, lines = _header(stripped), "", []
        elif header is None:
            continue
        elif stripped.startswith(_MOVE) and header[0] == "update":
            moved = stripped[len(_MOVE) :].strip()
        elif header[0] != "delete" and raw[:1] in ("+", "-"):
            lines.append(raw)
    return found


def nameless(patch: str) -> int:
    """How many of ``patch``'s file headers name no file."""
    return sum(1 for raw in patch.splitlines() if (_header(raw.strip()) or ("", "x"))[1] == "")


def _header(stripped: str) -> tuple[Kind, str] | None:
    for prefix, kind in _HEADERS.items():
        if stripped.startswith(prefix):
            return kind, stripped[len(prefix) :].strip()
    return None
