"""The site's pages as data: built from a small tree with a fixed clock, no MkDocs run."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from memsite import Memory
from memsite.site import charts
from memsite.site.material import is_excluded
from memsite.site.pages import build_site
from memsite.site.render import Renderer
from memsite.store.tree import init_tree

NOW = dt.datetime(2026, 3, 25, 9, 0)
HOSTILE = (
    '<script>alert("x")</script> and <img src=x onerror=alert(1)> [click](javascript:alert(2))'
)


def make_tree(root: Path, *, live: bool = True) -> dict[str, str]:
    init_tree(root)
    memory = Memory(root, author="ana")
    ids = {}
    memory.start_session("Move sessions to Postgres", at="2026-02-27T09:00:00")
    memory.progress("Draft the migration", at="2026-02-27T10:00:00")
    ids["mongo"] = memory.decide(
        "Keep sessions in MongoDB",
        why="Too much change at once.",
        risk="Two stores for longer.",
        tags=["sessions", "mongodb"],
        at="2026-02-27T11:00:00",
    )
    memory.end_session("Migration drafted", at="2026-02-27T18:00:00")
    ids["pg"] = memory.decide(
        "Move sessions to Postgres",
        why="One database to run.",
        supersedes=ids["mongo"],
        tags=["sessions", "postgres"],
        at="2026-03-20T11:00:00",
        body=HOSTILE,
    )
    ids["learn"] = memory.learn(
        "Bulk deletes bloat the table",
        category="database",
        why="Autovacuum falls behind.",
        tags=["postgres"],
        at="2026-03-21T12:00:00",
    )
    ids["learn2"] = memory.learn(
        "Run the race test 200 times", category="testing", at="2026-03-21T13:00:00"
    )
    ids["ran"] = memory.log(
        "ran tests",
        {"command": "pytest -q"},
        "all green",
        at="2026-03-21T14:05:00",
        body=HOSTILE,
    )
    if live:
        memory.start_session("Delete the legacy login", at="2026-03-22T08:00:00")
        memory.progress("Inventory legacy imports", at="2026-03-22T09:00:00")
        memory.pending_add("Open the removal PR", at="2026-03-22T09:30:00")
    (root / "notes").mkdir()
    (root / "notes" / "runbook.md").write_text(
        "# Runbook: auth incidents\n\nDate: 2026-03-01\n\n## Tokens rejected\n\nCheck the clock.\n",
        "utf-8",
    )
    (root / "persona.md").write_text("# Persona\n\nTerse and careful.\n", "utf-8")
    return ids


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "memory"
    return root, make_tree(root)


def test_home_shows_the_live_session_and_how_stale_it_is(tree):
    root, ids = tree
    home = build_site(root, NOW, related=False).page("index.md").markdown
    assert "Stale session: last updated 3 days ago" in home
    assert "**Task:** Delete the legacy login" in home
    assert "**Current step:** Inventory legacy imports" in home
    assert "Open the removal PR" in home
    assert "started 22 Mar 2026, 08:00, updated 22 Mar 2026, 09:30" in home
    assert f"(decisions/index.md#{ids['pg']})" in home  # latest decisions link to anchors
    assert f"(learnings/database.md#{ids['learn']})" in home
    assert '<svg class="ms-chart"' in home and "<desc" in home
    assert "| **warm** |" in home and "| **cold** |" in home


def test_home_falls_back_to_the_latest_archived_session(tmp_path):
    root = tmp_path / "memory"
    make_tree(root, live=False)
    home = build_site(root, NOW, related=False).page("index.md").markdown
    assert "Last session, archived Fri 27 February 2026" in home
    assert "**Task:** Move sessions to Postgres" in home
    assert "**Last step:** Draft the migration" in home
    assert "**Summary:** Migration drafted" in home


def test_timeline_is_newest_first_by_month_with_supersession_both_ways(tree):
    root, ids = tree
    timeline = build_site(root, NOW, related=False).page("decisions/index.md").markdown
    assert timeline.index("## March 2026") < timeline.index("## February 2026")
    new = timeline.index(f"{{#{ids['pg']}}}")
    old = timeline.index(f"{{#{ids['mongo']}}}")
    assert new < old
    assert f"Supersedes [Keep sessions in MongoDB](index.md#{ids['mongo']})" in timeline
    assert f"**Superseded** by [Move sessions to Postgres](index.md#{ids['pg']})" in timeline
    assert 'ms-badge--superseded">superseded' in timeline[old:]
    assert 'ms-badge--current">current' in timeline[new:old]
    assert "**Why:** One database to run." in timeline
    assert "**Risk:** Two stores for longer." in timeline
    assert "by ana" in timeline
    assert "[postgres](../tags/postgres.md){ .ms-tag }" in timeline
    assert "Fri 20 March 2026" in timeline  # readable dates


def test_tag_and_category_pages(tree):
    root, ids = tree
    site = build_site(root, NOW, related=False)
    sessions = site.page("tags/sessions.md")
    assert not sessions.in_nav
    assert f"../decisions/index.md#{ids['mongo']}" in sessions.markdown
    assert "| [sessions](sessions.md){ .ms-tag } | 2 |" in site.page("tags/index.md").markdown
    index = site.page("learnings/index.md").markdown
    assert "| [database](database.md) | 1 |" in index and "| [testing](testing.md) | 1 |" in index
    database = site.page("learnings/database.md")
    assert database.in_nav
    assert f"### Bulk deletes bloat the table {{#{ids['learn']}}}" in database.markdown


def test_day_pages_are_out_of_the_nav_and_linked_from_the_activity_index(tree):
    root, ids = tree
    site = build_site(root, NOW, related=False)
    day = site.page("activity/2026-03-21.md")
    assert not day.in_nav
    assert "activity/2026-03-21.md" not in str(site.nav)
    assert "[Sat 21 March 2026](2026-03-21.md)" in site.page("activity/index.md").markdown
    assert f"### 14:05:00 · ran tests {{#{ids['ran']}}}" in day.markdown
    assert "- **command:** `pytest -q`" in day.markdown
    assert "**Result:** all green" in day.markdown
    archived = site.page("activity/2026-02-27.md").markdown
    assert "## Sessions" in archived and "**Move sessions to Postgres**" in archived


def test_notes_and_persona_are_pages_in_the_nav(tree):
    root, _ = tree
    site = build_site(root, NOW, related=False)
    notes = [{"All notes": "notes.md"}, {"Runbook: auth incidents": "notes/runbook.md"}]
    assert {"Notes": notes} in site.nav
    assert {"Persona": "persona.md"} in site.nav
    assert "## Tokens rejected" in site.page("notes/runbook.md").markdown
    assert "Terse and careful." in site.page("persona.md").markdown


def test_exclude_keeps_files_folders_and_tiers_out(tree):
    root, ids = tree
    site = build_site(root, NOW, related=False, exclude=["persona.md", "notes/", "hot"])
    uris = {page.uri for page in site.pages}
    assert "persona.md" not in uris and "notes/runbook.md" not in uris
    assert not any("persona" in str(item) or "Notes" in str(item) for item in site.nav)
    assert "persona.md" not in site.sources and "hot/context.json" not in site.sources
    assert "Live session" not in site.page("index.md").markdown
    assert "Stale session" not in site.page("index.md").markdown
    assert is_excluded("warm/archive/2025/2025-01-01.md", ["warm/archive"])
    assert is_excluded("cold/private-x.md", ["cold/private-*.md"])
    assert not is_excluded("cold/decisions.md", ["cold/dec"])


def test_raw_html_and_script_links_from_memory_are_escaped(tree):
    root, _ = tree
    site = build_site(root, NOW, related=False)
    for page in (site.page("decisions/index.md"), site.page("activity/2026-03-21.md")):
        assert "<script>" not in page.markdown and "<img" not in page.markdown
        assert '&lt;script>alert("x")&lt;/script>' in page.markdown
        assert "[click]&#40;javascript:alert(2))" in page.markdown  # shown, not linked


def test_a_team_template_overrides_the_packaged_one(tree, tmp_path):
    root, _ = tree
    custom = tmp_path / "templates"
    custom.mkdir()
    (custom / "timeline.md.j2").write_text("# Our decisions\n\n{{ count }} in all.\n", "utf-8")
    site = build_site(root, NOW, related=False, renderer=Renderer(custom))
    assert site.page("decisions/index.md").markdown == "# Our decisions\n\n2 in all.\n"
    assert "# Where were we?" in site.page("index.md").markdown  # others still packaged


class Hit:
    def __init__(self, record: str, path: str = "", anchor: str = "", heading: str = "") -> None:
        self.id = self.record = record
        self.path, self.anchor, self.heading = path, anchor, heading


def test_related_entries_are_listed_under_decisions_and_learnings(tree):
    root, ids = tree

    def lookup(entry_id, limit):
        if entry_id == ids["pg"]:
            return [
                Hit(ids["pg"]),
                Hit(ids["learn"]),
                Hit("note", "notes/runbook.md", "tokens-rejected", "Tokens rejected"),
            ]
        return []

    timeline = build_site(root, NOW, related=lookup).page("decisions/index.md").markdown
    related = timeline[timeline.index(f"{{#{ids['pg']}}}") : timeline.index(f"{{#{ids['mongo']}}}")]
    assert f"[Bulk deletes bloat the table](../learnings/database.md#{ids['learn']})" in related
    assert "[Tokens rejected](../notes/runbook.md#tokens-rejected)" in related
    assert f"decisions/index.md#{ids['pg']})" not in related.split("Related:")[1]  # not itself


def test_related_entries_from_the_real_search_index(tree):
    pytest.importorskip("memsite.search.index.cache")
    root, ids = tree
    site = build_site(root, NOW)
    timeline = site.page("decisions/index.md").markdown
    # the superseded decision shares its topic with the one that replaced it (issue 13: only
    # records above the similarity floor are related, so a pair is asked for, not "any link")
    mongo = timeline[timeline.index(f"{{#{ids['mongo']}}}") :]
    related = mongo[mongo.index("Related:") : mongo.index("{: .ms-related }")]
    assert f"[Move sessions to Postgres](index.md#{ids['pg']})" in related


def test_a_failing_related_lookup_leaves_the_site_without_related_links(tree):
    root, _ = tree

    def lookup(entry_id, limit):
        raise RuntimeError("index is broken")

    assert (
        "Related:" not in build_site(root, NOW, related=lookup).page("decisions/index.md").markdown
    )


def test_charts_count_weeks_and_days_and_describe_themselves():
    days = [dt.date(2026, 3, 20), dt.date(2026, 3, 20), dt.date(2026, 3, 23), dt.date(2025, 1, 1)]
    weeks = charts.weekly_counts(days, dt.date(2026, 3, 25))
    assert len(weeks) == 12
    assert weeks[-1] == (dt.date(2026, 3, 23), 1) and weeks[-2] == (dt.date(2026, 3, 16), 2)
    svg = charts.week_chart(weeks)
    assert 'role="img"' in svg and "3 entries in the 12 weeks" in svg
    heat = charts.heatmap({dt.date(2026, 3, 20): 2}, dt.date(2026, 3, 25))
    assert "busiest day 20 Mar 2026 with 2" in heat
    assert "<title>Fri 20 Mar 2026: 2 entries</title>" in heat


def test_an_empty_tree_still_has_every_index_page(tmp_path):
    root = tmp_path / "memory"
    init_tree(root)
    site = build_site(root, NOW, related=False)
    uris = {page.uri for page in site.pages}
    assert {"index.md", "decisions/index.md", "tags/index.md", "learnings/index.md"} <= uris
    assert "No session yet" in site.page("index.md").markdown


# -- sessions, day-log ids and long bodies (issue 12) ----------------------------------------


def rendered(markdown_text: str) -> str:
    """A generated page as the site's markdown extensions render it."""
    import markdown

    from memsite.site.builder import MARKDOWN_EXTENSIONS

    names = [e if isinstance(e, str) else next(iter(e)) for e in MARKDOWN_EXTENSIONS]
    return markdown.markdown(markdown_text, extensions=names)


def archived_session(root: Path) -> dict[str, str]:
    """A session that touched files, decided, learned nothing, left work pending and took a
    checkpoint, then ended; a later decision supersedes the one it made."""
    init_tree(root)
    memory = Memory(root, author="ana")
    ids = {}
    memory.start_session("Move sessions to Postgres", at="2026-02-27T09:00:00")
    memory.progress(
        "Draft the migration", ["app/db.py", "migrations/0007.py"], at="2026-02-27T10:00"
    )
    ids["mongo"] = memory.decide(
        "Keep sessions in MongoDB", why="Less change.", at="2026-02-27T11:00"
    )
    ids["dump"] = memory.decide(
        "Dump sessions nightly", why="Backups first.", at="2026-02-27T11:30"
    )
    memory.pending_add("Write the backfill script", at="2026-02-27T12:00:00")
    memory.checkpoint(summary="Schema drafted; backfill next.", at="2026-02-27T13:00:00")
    ids["end"] = memory.end_session("Migration drafted", at="2026-02-27T18:00:00")
    ids["pg"] = memory.decide(
        "Move sessions to Postgres", why="One database.", supersedes=ids["mongo"], at="2026-03-20"
    )
    return ids


def assert_session_as_lists(html: str, uri: str, ids: dict[str, str]) -> None:
    assert "<li><code>app/db.py</code></li>" in html
    assert "<li><code>migrations/0007.py</code></li>" in html
    superseded = '<span class="ms-badge ms-badge--superseded">superseded</span>'
    decision = '<span class="ms-muted">decision</span>'
    assert (
        f'{superseded} {decision} <a href="{uri}#{ids["mongo"]}">Keep sessions in MongoDB</a>'
    ) in html
    current = '<span class="ms-badge ms-badge--current">current</span>'
    assert f'{current} {decision} <a href="{uri}#{ids["dump"]}">Dump sessions nightly</a>' in html
    assert '<li class="ms-todo">Write the backfill script</li>' in html
    assert "Schema drafted; backfill next." in html  # the checkpoint, with its summary
    assert f"<p>- {ids['mongo']}" not in html and "- `app/db.py` -" not in html


def test_the_last_archived_session_on_home_is_lists_and_linked_titles(tmp_path):
    ids = archived_session(tmp_path / "memory")
    home = build_site(tmp_path / "memory", NOW, related=False).page("index.md").markdown
    html = rendered(home)
    assert "Last session, archived Fri 27 February 2026" in html
    assert_session_as_lists(html, "decisions/index.md", ids)


def test_a_session_in_the_day_log_is_lists_and_linked_titles(tmp_path):
    ids = archived_session(tmp_path / "memory")
    day = build_site(tmp_path / "memory", NOW, related=False).page("activity/2026-02-27.md")
    html = rendered(day.markdown)
    end = html[html.index(f'id="{ids["end"]}"') :]
    assert_session_as_lists(end, "../decisions/index.md", ids)


def test_the_live_session_uses_the_same_lists(tmp_path):
    root = tmp_path / "memory"
    ids = archived_session(root)
    memory = Memory(root)
    memory.start_session("Finish the move", at="2026-03-20T12:00:00")
    memory.progress("Port the store", ["app/store.py"], at="2026-03-20T12:30:00")
    memory.pending_add("Delete the Mongo client", at="2026-03-20T12:40:00")
    ids["new"] = memory.decide("Drop the Mongo driver", why="Unused now.", at="2026-03-20T13:00")
    html = rendered(build_site(root, NOW, related=False).page("index.md").markdown)
    assert "<li><code>app/store.py</code></li>" in html
    assert '<li class="ms-todo">Delete the Mongo client</li>' in html
    assert (
        f'current</span> <a href="decisions/index.md#{ids["new"]}">Drop the Mongo driver</a>'
        in html
    )


def test_ids_in_the_day_log_link_to_their_entries(tmp_path):
    ids = archived_session(tmp_path / "memory")
    day = build_site(tmp_path / "memory", NOW, related=False).page("activity/2026-02-27.md")
    html = rendered(day.markdown)
    # the warm-log pointer a decision leaves: its id is a link to the decision, with its status
    link = f'<a href="../decisions/index.md#{ids["dump"]}"><code>{ids["dump"]}</code></a>'
    assert "<strong>decision:</strong> " in html and link in html
    assert (
        '<span class="ms-badge ms-badge--superseded">superseded</span> '
        '<span class="ms-muted">decision</span> <a href="../decisions'
    ) in html


def test_a_long_body_is_folded_on_its_day_page_and_kept_whole_on_disk(tmp_path):
    from memsite.site.safety import sanitize
    from memsite.store.markup import LONG_BODY_CHARS

    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root)
    long = "\n\n".join(f"Paragraph {n}: {HOSTILE}" for n in range(LONG_BODY_CHARS // 80))
    assert len(long) > LONG_BODY_CHARS
    folded = memory.log(
        "dumped the logs", {"lines": "9000"}, "done", body=long, at="2026-03-21T14:05"
    )
    memory.log("short one", None, "done", body="Short and shown.", at="2026-03-21T15:00")
    day = build_site(root, NOW, related=False).page("activity/2026-03-21.md")
    html = sanitize(rendered(day.markdown))
    fold = html[html.index(f'id="{folded}"') :]
    fold = fold[fold.index("<details") : fold.index("</details>")]
    assert f"Long text: {len(long):,} characters" in fold
    assert "Paragraph 0:" in fold and f"Paragraph {LONG_BODY_CHARS // 80 - 1}:" in fold
    # hostile text inside the fold is shown as text, as everywhere else (issue 15)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in fold or "&lt;script&gt;" in fold
    assert "<script" not in html and "<img" not in html
    assert not re.search(r"<[^>]*\son\w+=", html) and 'href="javascript:' not in html
    short = html[html.index("Short and shown.") - 200 :]
    assert "<details" not in short  # a short body is shown as it is
    assert long in (root / "warm" / "2026-03-21.md").read_text("utf-8")


def test_note_pages_sit_under_notes_once_and_take_no_index(tree):
    # Issue 39.6: a note's page was notes/notes/runbook.md; a note elsewhere in the tree and
    # one named index.md or README.md must not take another page
    root, _ = tree
    (root / "notes" / "index.md").write_text("# Index of runbooks\n\nsee below\n")
    (root / "notes" / "README.md").write_text("# Read me\n\nhello\n")
    (root / "cold" / "glossary.md").write_text("# Glossary\n\nterms\n")
    site = build_site(root, NOW, related=False)
    uris = [page.uri for page in site.pages]
    assert "notes/runbook.md" in uris
    assert not any(uri.startswith("notes/notes/") for uri in uris)
    assert {"notes/index_.md", "notes/README_.md", "notes/_/cold/glossary.md"} <= set(uris)
    assert "notes/index.md" not in uris and len(uris) == len(set(uris))


def test_day_and_tag_pages_give_every_entry_a_status_badge_and_its_kind_in_words(tree):
    # Issue 39.6: a day page mixed a kind badge (LEARNING) with status badges (CURRENT)
    root, _ = tree
    memory = Memory(root, author="", clock=lambda: NOW)
    memory.learn("Mock the clock", category="testing", why="patching broke", tags=["auth"])
    memory.decide("Use argon2id", why="memory-hard", tags=["auth"])
    site = build_site(root, NOW, related=False)
    for uri in (f"activity/{NOW.date().isoformat()}.md", "tags/auth.md"):
        page = site.page(uri).markdown
        assert "ms-badge--learning" not in page, uri
        assert re.search(r'ms-badge--current">current</span> <span class="ms-muted">learning', page)
        assert re.search(r'ms-badge--current">current</span> <span class="ms-muted">decision', page)


def test_related_links_each_take_a_line(tree):
    # Issue 39.6: "Related:" ran every link into one dense line, separated by dots
    root, ids = tree

    def lookup(entry_id: str, limit: int = 5) -> list:
        if entry_id != ids["pg"]:
            return []
        return [Hit(ids["learn"]), Hit("note", "notes/runbook.md", "tokens-rejected", "Tokens")]

    timeline = build_site(root, NOW, related=lookup).page("decisions/index.md").markdown
    html = rendered(timeline)
    related = html[html.index('<p class="ms-related">') :]
    related = related[: related.index("</p>")]
    assert related.count("<br") == 2 and " · " not in related
