"""What the site's pages are made from: the tree read once (entries, the live session, the
persona, file sizes), where each entry lives in the site, and the related links the search
index finds for each decision and learning.

``pages`` turns a ``Material`` into pages; this module decides what is published and how
entries link to each other, and builds no page.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import UnsafePath
from ..store.format import PERSONA
from ..store.markup import slugify
from ..store.model import Entry, HotContext
from ..store.session.hot import CONTEXT, BrokenContext
from ..store.session.hot import load as load_context
from ..store.tree import check_root, read_persona, read_tree
from .render import anchor


@dataclass(frozen=True)
class Link:
    """Where an entry lives in the site."""

    title: str
    uri: str
    anchor: str = ""
    date: dt.date | None = None


def is_excluded(path: str, patterns: Iterable[str]) -> bool:
    """Whether a root-relative path falls under an ``exclude`` item: a tier (``hot``), a
    folder (``cold/private/``), a file (``persona.md``) or a glob (``notes/*-draft.md``)."""
    for pattern in patterns:
        item = pattern.strip().strip("/")
        if item and (path == item or path.startswith(item + "/") or fnmatch(path, item)):
            return True
    return False


def note_uri(path: str) -> str:
    """The page of the note at ``path`` (relative to the tree): ``notes/runbook.md`` is
    ``notes/runbook.md`` on the site (issue 39.6: it was ``notes/notes/runbook.md``); a note
    elsewhere in the tree (``cold/glossary.md``, ``README.md``) goes under ``notes/_/``, a
    folder no note of ``notes/`` is expected to hold, so the two never take one page."""
    page = PurePosixPath(path).with_suffix(".md")
    if page.stem.lower() in ("index", "readme"):
        # MkDocs makes either a folder's index page: notes/index.md would take the notes
        # list's page (notes.md is notes/index.html)
        page = page.with_name(page.stem + "_.md")
    if page.parts[:1] == ("notes",) and len(page.parts) > 1:
        return page.as_posix()
    return "notes/_/" + page.as_posix()


# Page names the site's own index pages hold in the folders where names from memory go.
RESERVED = {"index"}


def page_slug(name: str) -> str:
    """The page name of a tag or category: its slug, and a reserved one with an ``_`` that
    no slug holds, so no name from memory can replace an index page (issue 15.12)."""
    slug = slugify(name)
    return slug + "_" if slug in RESERVED else slug


def tag_uri(tag: str) -> str:
    return f"tags/{page_slug(tag)}.md"


def category_uri(category: str) -> str:
    return f"learnings/{page_slug(category)}.md"


def day_uri(day: dt.date) -> str:
    return f"activity/{day.isoformat()}.md"


def category_of(entry: Entry) -> str:
    return (entry.category or "").strip() or "uncategorised"


def permalink(entry: Entry) -> Link:
    if entry.kind == "decision":
        uri = "decisions/index.md"
    elif entry.kind == "learning":
        uri = category_uri(category_of(entry))
    elif entry.kind == "activity":
        uri = day_uri(entry.date)
    else:
        return Link(entry.title, note_uri(entry.path), "", entry.date)
    return Link(entry.title, uri, anchor(entry.id), entry.date)


Lookup = Callable[[str, int], Iterable[Any]]


def index_lookup(
    root: Path, ids: list[str], parsed: Mapping[str, tuple[str, Sequence[Entry]]] | None = None
) -> tuple[Lookup | None, Callable[[], None]]:
    """The related-entries lookup, opened once for the whole build (a year of memory asks
    it a thousand times), and how to close it.

    It asks an index of the records a related link can name (decisions, learnings, notes),
    kept in the cache beside the search index: a fresh clone's build indexes ~1,000
    records rather than the ~20,000 chunks of a year, most of them day-log activities
    (issue 12); a warm build asks the same index, so related links never depend on which
    caches a machine holds. ``parsed`` (text and entries by path, as the build read them)
    spares the index parsing the same files again.
    """
    from ..search.index.cache import SearchIndex
    from ..search.index.related import RELATED_INDEX, chunker_of
    from .related_cache import answers

    # a batch API (ids -> hits) refreshes once and shares one filter across queries
    index = SearchIndex(root, name=RELATED_INDEX, chunker=chunker_of(parsed or {}))
    batch: dict[str, list[Any]] = {}

    def lookup(entry_id: str, limit: int) -> list[Any]:
        if not batch:
            batch.update(answers(index, ids, limit))  # kept between builds while current
        return batch.get(entry_id, [])

    return lookup, index.close


def related_hits(lookup: Lookup, ids: list[str], limit: int = 5) -> dict[str, list[Any]]:
    """Related entries per id. An entry the index doesn't know is skipped; an index that
    keeps failing leaves the site without related links rather than failing the build."""
    found: dict[str, list[Any]] = {}
    failures = 0
    for entry_id in ids:
        try:
            found[entry_id] = list(lookup(entry_id, limit))
        except Exception:  # noqa: BLE001 -- related links are optional decoration
            failures += 1
            if failures >= 3 and not found:
                break
    return found


@dataclass
class Material:
    """What the pages are made from, read once."""

    entries: list[Entry]
    context: HotContext | None
    persona: str | None
    sizes: dict[str, int]
    by_id: dict[str, Entry]
    links: dict[str, Link]
    superseded_by: dict[str, list[str]]
    related: dict[str, list[Link]]


def read_material(root: Path, exclude: tuple[str, ...], related: bool | Lookup) -> Material:
    """The tree at ``root`` without what ``exclude`` names, with related links from the
    index (``related=True``), from a stand-in lookup, or none (``False``)."""
    check_root(root)
    read = read_tree(root)
    entries = [e for e in read.parsed.entries if not is_excluded(e.path, exclude)]
    sizes = {rel: len(text.encode("utf-8")) for rel, text in read.texts.items()}
    sizes = {rel: size for rel, size in sizes.items() if not is_excluded(rel, exclude)}
    context = None
    if not is_excluded(CONTEXT, exclude) and (root / CONTEXT).is_file():
        sizes[CONTEXT] = (root / CONTEXT).stat().st_size
        try:
            context = load_context(root)
        except (BrokenContext, UnsafePath):
            context = None  # never published: damaged, or a link out of the tree
    persona = None if is_excluded(PERSONA, exclude) else read_persona(root)
    if persona is not None:
        sizes[PERSONA] = len(persona.encode("utf-8"))
    by_id: dict[str, Entry] = {}
    for entry in entries:
        by_id.setdefault(entry.id, entry)
    links = {entry_id: permalink(entry) for entry_id, entry in by_id.items()}
    superseded_by: dict[str, list[str]] = defaultdict(list)
    for entry in entries:
        if entry.kind == "decision" and entry.supersedes:
            superseded_by[entry.supersedes.strip()].append(entry.id)
    wanted = [e.id for e in entries if e.kind in ("decision", "learning")]
    if related is True:
        by_path: dict[str, list[Entry]] = defaultdict(list)
        for entry in read.parsed.entries:
            by_path[entry.path].append(entry)
        parsed = {rel: (text, by_path.get(rel, [])) for rel, text in read.texts.items()}
        lookup, close = index_lookup(root, wanted, parsed)
    else:
        lookup, close = related or None, lambda: None
    related_links: dict[str, list[Link]] = {}
    if lookup is not None:
        try:
            related_links = _related_links(lookup, entries, links)
        finally:
            close()
    return Material(
        entries, context, persona, sizes, by_id, links, dict(superseded_by), related_links
    )


def _related_links(
    lookup: Lookup, entries: list[Entry], links: dict[str, Link]
) -> dict[str, list[Link]]:
    """Site links to the entries related to each decision and learning."""
    wanted = [e.id for e in entries if e.kind in ("decision", "learning")]
    notes = {e.path: e for e in entries if e.kind == "note"}
    result = {}
    for entry_id, hits in related_hits(lookup, wanted).items():
        chosen = []
        for hit in hits:
            record = getattr(hit, "record", "") or getattr(hit, "id", "")
            path = getattr(hit, "path", "")
            if record == entry_id:
                continue
            if path in notes:  # a note links to the page, at the section that matched
                note = notes[path]
                title = getattr(hit, "heading", "") or note.title
                chosen.append(Link(title, note_uri(path), getattr(hit, "anchor", ""), note.date))
            elif record in links:
                chosen.append(links[record])
        result[entry_id] = list({(k.uri, k.anchor): k for k in chosen}.values())
    return result
