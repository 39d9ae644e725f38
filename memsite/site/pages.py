"""Every page of the memory site, built as data from the tree: plain code, no MkDocs.

``build_site(root, now, ...)`` reads the tree once and returns ``Page`` values (a URI, a
title, markdown, whether it belongs in the nav) plus the nav itself. The plugin only hands
them to MkDocs; ``memsite build --docs-only`` writes them to disk. What the pages are made
from (the tree read once, permalinks, related links) is ``material``.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..search.notices import recurring
from ..search.supersession import supersession
from ..store.format import classify
from ..store.model import Entry
from ..store.session import hot
from ..store.session.checkpoints import is_checkpoint
from . import charts, indexes, sessions
from .code import code_page
from .material import (
    Lookup,
    Material,
    day_uri,
    read_material,
)
from .page import Page, PageBuilder
from .render import Renderer, anchor, counted


@dataclass(frozen=True)
class Site:
    """The generated pages, the nav that orders them, the tree files they publish, and for
    the search: the anchor of each superseded entry and of the entry that now holds."""

    pages: list[Page]
    nav: list[Any]
    sources: list[str] = field(default_factory=list)
    successors: dict[str, str] = field(default_factory=dict)

    def page(self, uri: str) -> Page:
        return next(page for page in self.pages if page.uri == uri)


def build_site(
    root: Path,
    now: dt.datetime,
    *,
    renderer: Renderer | None = None,
    exclude: Iterable[str] = (),
    related: bool | Lookup = True,
    latest: int = 5,
    notes_in_nav: int = indexes.NOTES_IN_NAV,
    repo_url: str | None = None,
) -> Site:
    """Build every page of the site for the tree at ``root`` as it is at ``now``.

    ``related=True`` lists related entries from the search index; a callable
    ``(entry_id, limit) -> hits`` stands in for the index; ``False`` leaves them out.
    ``notes_in_nav``: how many notes (the newest) the nav lists; all are on the notes page.
    ``repo_url`` (MkDocs' own) links each commit an entry names to its page (issue 14).
    """
    tree = read_material(Path(root), tuple(exclude), related)
    builder = PageBuilder(tree, renderer or Renderer(), now, repo_url)
    kinds: dict[str, list[Entry]] = defaultdict(list)
    for entry in tree.entries:
        kinds[entry.kind].append(entry)
    decisions = sorted(kinds["decision"], key=lambda e: (e.date, e.line), reverse=True)
    learnings = sorted(kinds["learning"], key=lambda e: (e.date, e.line), reverse=True)
    activities = sorted(kinds["activity"], key=lambda e: (e.when, e.line))
    notes = sorted(kinds["note"], key=lambda e: e.title.casefold())

    _home(builder, decisions, learnings, activities, latest)
    builder.add(
        "decisions/index.md",
        "timeline.md.j2",
        title="Decision timeline",
        months=indexes.by_month(decisions),
        count=len(decisions),
        records=any(e.fields.get("record") for e in decisions),
        current=sum(1 for e in decisions if builder.view(e)["status"] == "current"),
        by_status=_by_status(builder.view(e)["status"] for e in decisions),
    )
    indexes.tags(builder, decisions, learnings)
    categories = indexes.learnings(builder, learnings, recurring(learnings))
    _activity(builder, activities, decisions, learnings)
    nav: list[Any] = [
        {"Home": "index.md"},
        {"Decisions": [{"Timeline": "decisions/index.md"}, {"Tags": "tags/index.md"}]},
        {"Learnings": [{"All categories": "learnings/index.md"}, *categories]},
        {"Activity": "activity/index.md"},
    ]
    code = code_page(builder, decisions)
    if code:
        nav.append({"Code": code})
    if notes:
        nav.append({"Notes": indexes.notes(builder, notes, notes_in_nav)})
    if tree.persona is not None:
        builder.add("persona.md", "persona.md.j2", body=indexes.page_body(tree.persona, "Persona"))
        nav.append({"Persona": "persona.md"})
    holders = supersession(tree.entries).successor
    successors = {
        anchor(old): anchor(new.id)
        for old, new in holders.items()
        if old in tree.links and new.id in tree.links
    }
    return Site(builder.pages, nav, sorted(tree.sizes), successors)


def _sessions(activities: list[Entry]) -> list[Entry]:
    return [e for e in activities if e.title in sessions.ENDED and e.details.get("session_id")]


def _home(
    builder: PageBuilder,
    decisions: list[Entry],
    learnings: list[Entry],
    activities: list[Entry],
    latest: int,
) -> None:
    tree, now = builder.tree, builder.now
    context = tree.context
    stale = None
    updated = hot.last_touched(context) if context is not None else None
    if updated is not None and now - updated > hot.STALE:
        stale = max((now.date() - updated.date()).days, 1)
    archives = _sessions(activities)
    last_session = archives[-1] if archives else None
    marks = sessions.by_session(activities)
    if context is not None:
        session: sessions.SessionView | None = sessions.live(tree, context, marks)
    elif last_session is not None:
        session = sessions.archived(tree, last_session, marks)
    else:
        session = None
    all_days = [e.date for e in tree.entries if e.kind != "note"]
    weeks = charts.weekly_counts(all_days, now.date())
    builder.add(
        "index.md",
        "home.md.j2",
        title="Where were we?",
        context=context,
        stale_days=stale,
        last_session=last_session,
        session=session,
        decisions=decisions[:latest],
        learnings=learnings[:latest],
        chart=charts.week_chart(weeks),
        tiers=_tiers(tree, now),
        counts=Counter(e.kind for e in tree.entries),
    )


def _tiers(tree: Material, now: dt.datetime) -> list[dict[str, Any]]:
    rows = []
    for tier in ("hot", "warm", "cold"):
        files = [rel for rel in tree.sizes if classify(rel).tier == tier]
        entries = [e for e in tree.entries if e.tier == tier]
        newest: dt.date | None = max((e.date for e in entries), default=None)
        if tier == "hot" and tree.context is not None:
            newest = _day(tree.context.updated) or newest
        rows.append(
            {
                "tier": tier,
                "files": len(files),
                "entries": len(entries),
                "holds": _live_items(tree) if tier == "hot" else f"{len(entries):,}",
                "size": sum(tree.sizes[rel] for rel in files),
                "newest": newest,
                "age": (now.date() - newest).days if newest else None,
            }
        )
    return rows


def _live_items(tree: Material) -> str:
    """What the hot tier holds: its live session (it holds no entries), said as it is."""
    context = tree.context
    if context is None:
        return "no live session"
    items = [
        counted(len(context.files_modified), "file"),
        counted(len(context.decisions), "decision"),
        counted(len(context.pending_actions), "pending action"),
        counted(len(context.checkpoints), "checkpoint"),
    ]
    kept = [item for item in items if not item.startswith("0 ")]
    return "live session" + (": " + ", ".join(kept) if kept else "")


def _day(stamp: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(stamp[:10])
    except ValueError:
        return None


def _activity(
    builder: PageBuilder, activities: list[Entry], decisions: list[Entry], learnings: list[Entry]
) -> list[dt.date]:
    by_day: dict[dt.date, list[Entry]] = defaultdict(list)
    for entry in activities:
        by_day[entry.date].append(entry)
    cold_by_day: dict[dt.date, list[Entry]] = defaultdict(list)
    for entry in sorted([*decisions, *learnings], key=lambda e: (e.date, e.line)):
        cold_by_day[entry.date].append(entry)
    days = sorted(set(by_day) | set(cold_by_day), reverse=True)
    today, tree = builder.now.date(), builder.tree
    marks = sessions.by_session(activities)
    end = today if days and (today - days[0]).days < 365 else (days[0] if days else today)
    counts = {day: len(by_day[day]) + len(cold_by_day[day]) for day in days}
    months = [
        (f"{month:%B %Y}", [(day, counts[day], len(sessions.of_day(by_day[day]))) for day in group])
        for month, group in itertools.groupby(days, key=lambda d: d.replace(day=1))
    ]
    builder.add(
        "activity/index.md",
        "activity.md.j2",
        title="Activity",
        heatmap=charts.heatmap(counts, end),
        months=months,
        total=sum(counts.values()),
    )
    for position, day in enumerate(days):
        shown = {e.id: sessions.archived(tree, e, marks) for e in _sessions(by_day[day])}
        # a checkpoint's log entry is its session at that moment, shown as a session is
        shown.update(
            {e.id: sessions.at_checkpoint(tree, e) for e in by_day[day] if is_checkpoint(e)}
        )
        builder.add(
            day_uri(day),
            "day.md.j2",
            in_nav=False,
            title=f"{day:%a} {day.day} {day:%B %Y}",
            day=day,
            sessions=sessions.of_day(by_day[day]),
            archives=shown,
            entries=by_day[day],
            cold=cold_by_day[day],
            newer=days[position - 1] if position > 0 else None,
            older=days[position + 1] if position + 1 < len(days) else None,
        )
    return days


STATUS_ORDER = ("current", "superseded", "accepted", "proposed", "rejected", "deprecated")


def _by_status(statuses: Iterable[object]) -> str:
    """``12 current, 3 superseded, 1 proposed``: each status that some decision has, with its
    count (issue 39.6: the timeline said "1 superseded, proposed, rejected or deprecated")."""
    counted = Counter(str(status) for status in statuses if status)
    order = [*STATUS_ORDER, *sorted(set(counted) - set(STATUS_ORDER))]
    return ", ".join(f"{counted[name]} {name}" for name in order if counted[name])
