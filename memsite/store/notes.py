"""Notes: any markdown file of the tree that is not an entry file, one entry per file.

Reading a note's front matter, date, title and id (``docs/format.md#notes``), and writing a
new note (``memsite note``) in the shape these read back.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path, PurePosixPath

from ..errors import InvalidInput
from . import markup, storage
from .dates import parse_date

NOTES = "notes"
_PAIR = re.compile(r"^([^:\n]+?):(?: (.*)|)$")
_DATE_LINE = re.compile(r"^\s*(?:\*\*)?Date:?(?:\*\*)?:?\s*(\d{4}-\d{2}-\d{2})", re.IGNORECASE)


def front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    """Simple ``key: value`` pairs of a leading ``---`` block, and the index after it."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    pairs: dict[str, str] = {}
    for index in range(1, min(len(lines), 200)):
        line = lines[index]
        if line.strip() in ("---", "..."):
            return pairs, index + 1
        found = _PAIR.match(line)
        if found and not line.startswith((" ", "\t", "-")):
            pairs[found.group(1).strip().lower()] = (found.group(2) or "").strip().strip("'\"")
    return {}, 0


def note_date(lines: list[str], fallback: dt.date | None) -> dt.date | None:
    meta, after = front_matter(lines)
    candidates = [meta.get("date", "")[:10]]
    candidates += [
        m.group(1) for line in lines[after : after + 40] if (m := _DATE_LINE.match(line))
    ]
    for candidate in candidates:
        try:
            return parse_date(candidate)
        except InvalidInput:
            continue
    return fallback


def note_title(lines: list[str], path: str) -> str:
    meta, after = front_matter(lines)
    if meta.get("title"):
        return meta["title"]
    for index, outside in markup.outside_fences(lines):
        if index >= after and outside and markup.heading_level(lines[index]) == 1:
            return markup.heading_text(lines[index])
    return PurePosixPath(path).stem.replace("-", " ").replace("_", " ")


def note_id(path: str) -> str:
    return "note-" + markup.slugify(str(PurePosixPath(path).with_suffix("")), limit=120)


def render_note(title: str, day: dt.date, body: str = "", author: str | None = None) -> str:
    """The markdown of a new note: its title as the ``#`` heading, a ``Date:`` line (and an
    ``Author:`` line), then the body as given; ``note_title`` and ``note_date`` read it back."""
    out = [f"# {markup.escape_heading_text(title)}", "", f"Date: {day.isoformat()}"]
    if author:
        out.append(f"Author: {author}")
    if body:
        out += ["", body]
    return "\n".join(out) + "\n"


def write_note(root: Path, rel: str, text: str) -> None:
    """Create the note ``rel`` of the tree at ``root``, never over an existing file."""
    try:
        storage.create(root, root / rel, text)
    except FileExistsError:
        raise InvalidInput(
            f"{root / rel} already exists; give the note another title, or edit it"
        ) from None


def note_path(title: str) -> str:
    """Where the note titled ``title`` goes: ``notes/<slug>.md``."""
    return f"{NOTES}/{markup.slugify(title)}.md"
