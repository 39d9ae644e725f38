"""A generated page, and the builder that renders each page of one site from its template
with the links, entry views and values every template is given."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from ..errors import MemsiteError
from ..store.markup import LONG_BODY_CHARS
from ..store.model import Entry
from . import sessions
from .code import commit_url
from .material import Link, Material, day_uri, tag_uri
from .render import Renderer, relative


@dataclass(frozen=True)
class Page:
    """One generated page: ``uri`` is its path in the docs (``decisions/index.md``)."""

    uri: str
    title: str
    markdown: str
    in_nav: bool = True


class PageBuilder:
    """Renders the pages of one site, each through a template, with what they link to."""

    def __init__(
        self, tree: Material, renderer: Renderer, now: dt.datetime, repo_url: str | None = None
    ) -> None:
        self.tree = tree
        self.renderer = renderer
        self.now = now
        self.repo_url = repo_url
        self.pages: list[Page] = []
        self.uris: set[str] = set()

    def add(self, uri: str, template: str, in_nav: bool = True, **values: Any) -> Page:
        def href(target: str | Link, anchor: str = "") -> str:
            if isinstance(target, Link):
                return relative(uri, target.uri, target.anchor)
            link = self.tree.links.get(target)
            if link is not None:
                return relative(uri, link.uri, link.anchor)
            return relative(uri, target, anchor)

        markdown = self.renderer.render(
            template,
            href=href,
            view=self.view,
            linked=self.tree.links.get,
            referenced=self.referenced,
            long_body=LONG_BODY_CHARS,
            day_uri=day_uri,
            now=self.now,
            page_uri=uri,
            commit_url=lambda commit: commit_url(self.repo_url, commit),
            **values,
        )
        title = values.get("title") or _first_heading(markdown) or uri
        if uri in self.uris:  # a page never replaces another (issue 15.12)
            raise MemsiteError(f"two generated pages at {uri}; please report this as a bug")
        self.uris.add(uri)
        page = Page(uri, title, markdown, in_nav)
        self.pages.append(page)
        return page

    def referenced(self, value: str) -> sessions.Named | None:
        """The decision or learning a day-log value names by its id, if the site has it."""
        entry = self.tree.by_id.get(value.strip())
        if entry is None or entry.kind not in ("decision", "learning"):
            return None
        return sessions.named(self.tree, [entry.id])[0]

    def view(self, entry: Entry) -> dict[str, Any]:
        """An entry with what the templates show around it."""
        tree = self.tree
        newer = tree.superseded_by.get(entry.id, [])
        older = entry.supersedes
        return {
            "entry": entry,
            "status": "superseded" if newer else _own_status(entry),
            "superseded_by": [tree.links[i] for i in newer if i in tree.links],
            "supersedes": tree.links.get(older) if older else None,
            "supersedes_missing": older if older and older not in tree.links else None,
            "tags": [(tag, tag_uri(tag)) for tag in entry.tags],
            "related": tree.related.get(entry.id, []),
            "link": tree.links.get(entry.id),
        }


def _own_status(entry: Entry) -> str:
    """``current``, or what a decision record read in place says it is (issue 26):
    ``proposed``, ``rejected``, ``deprecated``, or ``superseded`` with no successor named."""
    state = entry.fields.get("status", "") if entry.fields.get("record") else ""
    return state if state in ("proposed", "rejected", "deprecated", "superseded") else "current"


def _first_heading(markdown: str) -> str:
    for line in markdown.splitlines():
        if line.startswith("# "):
            return line[2:].split(" {#")[0].strip()
    return ""
