"""The pages that group entries by a name: notes by folder.

Notes go into the nav by folder, at most ``notes_in_nav`` of them (Material renders the
whole nav into every page: a nav of 1,000 notes made the build quadratic, issue 15.11);
every note is reached from the notes index page.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..store.format import front_matter
from ..store.markup import heading_level, outside_fences, split_lines
from ..store.model import Entry
from .escaping import title_text
from .material import note_uri

if TYPE_CHECKING:
    from .pages import _Builder

NOTES_URI = "notes.md"  # outside notes/, where every note's own page is
NOTES_IN_NAV = 100  # the plugin's notes_in_nav default


def page_body(text: str, fallback_title: str) -> dict[str, str]:
    """A hand-written file as a page: front matter dropped, a title added if it has none."""
    lines = split_lines(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    meta, after = front_matter(lines)
    lines = lines[after:]
    has_title = any(
        outside and heading_level(lines[index]) == 1 for index, outside in outside_fences(lines)
    )
    return {
        "title": "" if has_title else meta.get("title") or fallback_title,
        "text": "\n".join(lines).strip("\n"),
    }


def folder_of(note: Entry) -> str:
    return PurePosixPath(note.path).parent.as_posix()


def notes(builder: _Builder, notes: list[Entry], in_nav: int = NOTES_IN_NAV) -> list[Any]:
    """A page per note, the notes index, and the nav: the index, then the ``in_nav`` newest
    notes grouped by folder (the others are reached from the index only)."""
    newest = sorted(notes, key=lambda note: (note.date, note.title.casefold()), reverse=True)
    listed = {note.path for note in newest[: max(in_nav, 0)]}
    for note in notes:
        builder.add(
            note_uri(note.path),
            "note.md.j2",
            in_nav=note.path in listed,
            title=note.title,
            note=note,
            body=page_body(note.body, note.title),
        )
    folders: dict[str, list[Entry]] = defaultdict(list)
    for note in notes:
        folders[folder_of(note)].append(note)
    builder.add(
        NOTES_URI,
        "notes.md.j2",
        title="Notes",
        folders=sorted(folders.items()),
        count=len(notes),
        note_uri=note_uri,
    )
    nav: list[Any] = [{"All notes": NOTES_URI}]
    for folder, members in sorted(folders.items()):
        items = [{title_text(n.title): note_uri(n.path)} for n in members if n.path in listed]
        if len(folders) == 1 or folder == ".":
            nav.extend(items)
        elif items:
            nav.append({title_text(folder + "/"): items})
    return nav
