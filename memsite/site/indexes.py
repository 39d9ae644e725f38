"""The pages that group entries by a name: tags, learning categories, notes by folder.

Names come from memory, so two of them may fold to the same page name (``API`` and
``api``, ``Index`` and the tags index itself): each group gets one page listing every
spelling, at a URI no other page can have (``material.page_slug``), never a silent
overwrite (issue 15.12). Notes go into the nav by folder, at most ``notes_in_nav`` of them
(Material renders the whole nav into every page: a nav of 1,000 notes made the build
quadratic, issue 15.11); every note is reached from the notes index page.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..store.format import front_matter
from ..store.markup import heading_level, outside_fences, split_lines
from ..store.model import Entry
from .escaping import title_text
from .material import category_of, category_uri, note_uri, page_slug

if TYPE_CHECKING:
    from .page import PageBuilder

NOTES_URI = "notes.md"  # outside notes/, where every note's own page is
NOTES_IN_NAV = 100  # the plugin's notes_in_nav default


def spellings(names: list[str]) -> list[str]:
    """The distinct spellings of names that fold together, the most used first."""
    counts = Counter(names)
    return sorted(counts, key=lambda name: (-counts[name], name))


def by_month(entries: list[Entry]) -> list[tuple[str, list[Entry]]]:
    return [
        (f"{month:%B %Y}", list(group))
        for month, group in itertools.groupby(entries, key=lambda e: e.date.replace(day=1))
    ]


def _grouped(
    entries: list[Entry], names: Callable[[Entry], list[str]]
) -> dict[str, tuple[list[str], list[Entry]]]:
    """Entries by the page their names fold to: ``slug -> (spellings, entries)``."""
    seen: dict[str, list[str]] = defaultdict(list)
    grouped: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        for slug in dict.fromkeys(page_slug(name) for name in names(entry)):
            grouped[slug].append(entry)
        for name in names(entry):
            seen[page_slug(name)].append(name)
    return {slug: (spellings(seen[slug]), grouped[slug]) for slug in grouped}


def tags(builder: PageBuilder, decisions: list[Entry], learnings: list[Entry]) -> None:
    tagged = _grouped([*decisions, *learnings], lambda entry: entry.tags)
    ordered = sorted(tagged, key=lambda slug: (-len(tagged[slug][1]), slug))
    builder.add(
        "tags/index.md",
        "tags.md.j2",
        title="Tags",
        tags=[(", ".join(tagged[s][0]), f"tags/{s}.md", len(tagged[s][1])) for s in ordered],
    )
    for slug in ordered:
        names, entries = tagged[slug]
        builder.add(
            f"tags/{slug}.md",
            "tag.md.j2",
            in_nav=False,
            title=f"Tag: {', '.join(names)}",
            tag=", ".join(names),
            entries=entries,
        )


def learnings(
    builder: PageBuilder, learnings: list[Entry], recurring: Sequence[object] = ()
) -> list[dict[str, str]]:
    """The learnings page (opening with the ``recurring`` lessons, issue 27) and a page per
    category; returns the categories' nav."""
    grouped = _grouped(learnings, lambda entry: [category_of(entry)])
    shown = {slug: ", ".join(names) for slug, (names, _) in grouped.items()}
    ordered = sorted(grouped, key=lambda s: (-len(grouped[s][1]), shown[s].casefold()))
    builder.add(
        "learnings/index.md",
        "learnings.md.j2",
        title="Learnings",
        categories=[
            (shown[s], category_uri(grouped[s][0][0]), len(grouped[s][1])) for s in ordered
        ],
        recent=learnings[:10],
        count=len(learnings),
        recurring=list(recurring),
    )
    nav = []
    for slug in ordered:
        uri = category_uri(grouped[slug][0][0])
        title = shown[slug][:1].upper() + shown[slug][1:]
        builder.add(
            uri,
            "category.md.j2",
            title=title,
            category=shown[slug],
            months=by_month(grouped[slug][1]),
        )
        nav.append({title_text(title): uri})
    return nav


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


def notes(builder: PageBuilder, notes: list[Entry], in_nav: int = NOTES_IN_NAV) -> list[Any]:
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
