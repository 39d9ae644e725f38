"""One entry by reference, for ``Memory.get`` (issue 10): its full markdown and whether it still
holds. A reference is an entry id, a hit's id (``note-x#section``: the entry that holds it) or
a citation (``path#anchor``, as search and recall print them; a bare note path is its note).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import NotFound
from ..store import inputs, tree
from ..store.format import DECISIONS, LEARNINGS
from ..store.model import Entry
from ..store.records import is_record_path, record_files
from .headings import headings
from .ranking import Successor
from .supersession import read_supersession

_DATED = re.compile(r"^(\d{4}-\d{2}-\d{2})-")


@dataclass(frozen=True)
class Found:
    """An entry with its markdown as written, its ``status`` (``current``/``superseded`` for
    decisions and learnings, else None) and, when superseded, the entry that now holds."""

    entry: Entry
    markdown: str
    status: str | None
    superseded_by: Successor | None

    @property
    def citation(self) -> str:
        return f"{self.entry.path}#{self.entry.id}"

    def to_dict(self) -> dict[str, object]:
        entry = self.entry
        return {
            "id": entry.id,
            "kind": entry.kind,
            "tier": entry.tier,
            "title": entry.title,
            "date": entry.date.isoformat(),
            "time": entry.time.isoformat() if entry.time else None,
            "path": entry.path,
            "line": entry.line,
            "end_line": entry.end_line,
            "citation": self.citation,
            "fields": dict(entry.fields),
            "tags": entry.tags,
            "supersedes": entry.supersedes,
            "status": self.status,
            "superseded_by": self.superseded_by.to_dict() if self.superseded_by else None,
            "markdown": self.markdown,
        }


def find(root: Path, ref: str) -> Found:
    """The entry ``ref`` names, or ``NotFound`` saying how to find ids."""
    ref = inputs.one_line(ref, "id")
    head, _, anchor = ref.partition("#")
    if head.endswith(".md"):
        entry, text = _by_citation(root, head, anchor, ref)
    else:
        entry, text = _by_id(root, head, ref)
    lines = text.split("\n")[entry.line - 1 : entry.end_line]
    known = read_supersession(root)
    return Found(
        entry,
        "\n".join(lines).strip("\n") + "\n",
        known.status(entry.id, entry.kind),
        known.successor_of(entry.id),
    )


def _missing(ref: str) -> NotFound:
    return NotFound(f"no entry {ref!r} (search or recall give ids and path#anchor citations)")


def _by_id(root: Path, entry_id: str, ref: str) -> tuple[Entry, str]:
    # the files a dated id can be in are read first; anything else means reading the tree
    for rel in _likely_files(root, entry_id):
        parsed, text = tree.read_file(root, rel)
        for entry in parsed.entries:
            if entry.id == entry_id and text is not None:
                return entry, text
    read = tree.read_tree(root)
    texts = {**read.texts, **read.records}  # a decision record is an entry too (issue 26)
    for entry in read.parsed.entries:
        if entry.id == entry_id and entry.path in texts:
            return entry, texts[entry.path]
    raise _missing(ref)


def _likely_files(root: Path, entry_id: str) -> list[str]:
    dated = _DATED.match(entry_id)
    try:
        day = dt.date.fromisoformat(dated.group(1)) if dated else None
    except ValueError:
        day = None
    if day is None:
        return []
    log = tree.day_log(root, day).relative_to(root).as_posix()
    return [rel for rel in (DECISIONS, LEARNINGS, log) if (root / rel).is_file()]


def _by_citation(root: Path, rel: str, anchor: str, ref: str) -> tuple[Entry, str]:
    if is_record_path(rel) and rel in record_files(root)[0]:  # a decision record (issue 26)
        read = tree.read_tree(root)
        for entry in read.parsed.entries:
            if entry.path == rel and rel in read.records:  # its id may not be its name
                return entry, read.records[rel]
        raise _missing(ref)
    # only a file the tree really holds (never ``..`` or a link out of it) is read
    if rel not in tree.markdown_files(root)[0]:
        raise NotFound(f"no memory file {rel!r} in {root} (citations are path#anchor)")
    parsed, text = tree.read_file(root, rel)
    if text is None or not parsed.entries:
        raise _missing(ref)
    if not anchor:
        if len(parsed.entries) == 1:
            return parsed.entries[0], text
        raise NotFound(f"{rel} holds {len(parsed.entries)} entries: add #anchor to name one")
    for entry in parsed.entries:
        if entry.id == anchor:
            return entry, text
    for heading in headings(text):
        if heading.anchor == anchor:
            line = heading.start + 1
            for entry in parsed.entries:
                if entry.line <= line <= entry.end_line:
                    return entry, text
    raise _missing(ref)
