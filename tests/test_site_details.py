"""Checkpoints as their structure and the site's details (issue 25, points 6 and 7): what a
reader of a day page, the home page and a search result sees, built from small trees with
a fixed clock."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from memsite import Memory
from memsite.site.pages import build_site
from memsite.store.tree import init_tree
from tests.test_site_pages import make_tree, rendered

NOW = dt.datetime(2026, 3, 25, 9, 0)
HASH = "0123456789abcdef0123456789abcdef01234567"
SUMMARY = (
    "Schema drafted.\n\nNext: the backfill.\n- copy live sessions\n- compare counts\nThen cut over."
)


@pytest.fixture
def checkpointed(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A session that decided, left work pending and took two checkpoints (one summary of
    the built-in kind, one written by the model), then ended the same day."""
    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="ana")
    ids = {}
    memory.start_session("Move sessions to Postgres", at="2026-02-27T09:00:00")
    memory.progress("Draft the migration", ["app/db.py"], at="2026-02-27T10:00:00")
    ids["dump"] = memory.decide("Dump sessions nightly", why="Backups.", at="2026-02-27T11:00")
    ids["keep"] = memory.decide("Keep the Mongo client", why="Reads.", at="2026-02-27T11:30")
    memory.pending_add("Write the backfill script", at="2026-02-27T12:00:00")
    ids["first"] = memory.checkpoint(at="2026-02-27T13:00:00").id
    ids["second"] = memory.checkpoint(
        "auto", SUMMARY, tokens_before=150_000, tokens_after=20_000, at="2026-02-27T15:00:00"
    ).id
    ids["third"] = memory.checkpoint(
        "auto", "Compacted again.", completes=True, at="2026-02-27T15:05:00"
    ).id
    ids["end"] = memory.end_session("Migration drafted", at="2026-02-27T18:00:00")
    return root, ids


def section(html: str, anchor: str) -> str:
    """The rendered log entry at ``anchor``, up to the next entry."""
    start = html.index(f'id="{anchor}"')
    end = html.find("<h3", start + 1)
    return html[start : end if end > 0 else None]


# -- point 6: a checkpoint is its structure ---------------------------------------------------


def test_a_checkpoint_in_the_day_log_shows_its_lists_as_lists(checkpointed):
    root, ids = checkpointed
    day = build_site(root, NOW, related=False).page("activity/2026-02-27.md").markdown
    html = section(rendered(day), ids["first"])
    current = '<span class="ms-badge ms-badge--current">current</span>'
    dump = (
        f'{current} <span class="ms-muted">decision</span> '
        f'<a href="../decisions/index.md#{ids["dump"]}">Dump sessions nightly</a>'
    )
    assert f"<li>{dump}</li>" in html
    assert '<li class="ms-todo">Write the backfill script</li>' in html
    assert "<li><code>app/db.py</code></li>" in html
    assert "Decisions: - " not in html and "<p>- " not in html
    assert "Checkpoint (manual) of session <code>" in html


def test_a_checkpoint_summary_keeps_its_lines_and_paragraphs(checkpointed):
    root, ids = checkpointed
    day = build_site(root, NOW, related=False).page("activity/2026-02-27.md").markdown
    built_in = section(rendered(day), ids["first"])
    # the built-in summary: one line a kind, each its own line on the page
    assert re.search(r"Task: Move sessions to Postgres<br />\s*Current step: Draft", built_in)
    assert re.search(r"Decisions: Dump sessions nightly; Keep the Mongo client<br />", built_in)
    written = section(rendered(day), ids["second"])
    assert "<p>Schema drafted.</p>" in written
    assert "<li>copy live sessions</li>\n<li>compare counts</li>" in written
    assert "<p>Then cut over.</p>" in written
    assert "Checkpoint (auto, 150,000 tokens before, 20,000 tokens after) of session" in written


def test_a_checkpoint_links_the_checkpoint_it_completes(checkpointed):
    root, ids = checkpointed
    day = build_site(root, NOW, related=False).page("activity/2026-02-27.md").markdown
    completing = section(rendered(day), ids["third"])
    assert f'It completes <a href="2026-02-27.md#{ids["second"]}">an earlier checkpoint</a>' in (
        completing
    )
    assert "150,000 tokens before" in completing  # carried over from the one it completes


def test_the_sessions_section_names_each_session_once_with_its_checkpoints(checkpointed):
    root, ids = checkpointed
    day = build_site(root, NOW, related=False).page("activity/2026-02-27.md").markdown
    sessions = day.split("## Sessions\n\n", 1)[1].split("\n## ", 1)[0]
    assert sessions.count("**Move sessions to Postgres**") == 1
    assert "session end at 18:00</span>: Migration drafted" in sessions
    html = rendered(sessions)
    checkpoints = re.findall(r'<a href="2026-02-27.md#([^"]+)">(\d\d:\d\d)</a>', html)
    assert checkpoints == [
        (ids["first"], "13:00"),
        (ids["second"], "15:00"),
        (ids["third"], "15:05"),
    ]
    assert "3 checkpoints:" in html
    assert "Schema drafted" not in sessions  # the summaries are in the log, once


def test_the_home_page_lists_a_checkpoint_by_its_first_line(checkpointed):
    root, ids = checkpointed
    home = build_site(root, NOW, related=False).page("index.md").markdown
    checkpoints = home.split("**Checkpoints:**", 1)[1]
    # the built-in summary's first line repeats the task: its next line stands for it
    assert f"({'activity/2026-02-27.md'}#{ids['first']}) Current step: Draft the migration …" in (
        checkpoints
    )
    assert f"#{ids['second']}) Schema drafted. …" in checkpoints
    assert f"#{ids['third']}) Compacted again.\n" in checkpoints
    assert "Decisions: Dump" not in checkpoints


# -- point 7: the site's details --------------------------------------------------------------


def test_the_day_pager_goes_back_in_time_to_the_left(tmp_path):
    root = tmp_path / "memory"
    make_tree(root)
    pager = build_site(root, NOW, related=False).page("activity/2026-03-21.md").markdown
    pager = next(line for line in pager.splitlines() if "All days" in line)
    assert pager == (
        "[← 20 Mar 2026](2026-03-20.md) · [All days](index.md) · [22 Mar 2026 →](2026-03-22.md)"
    )


def test_a_commit_shows_ten_characters_and_the_whole_hash_on_hover(tmp_path):
    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="ana")
    decided = memory.decide("Pin the driver", why="Bugs.", commit=HASH, at="2026-03-20T10:00")
    memory.log("ran the migration", commit="v1.2", at="2026-03-20T11:00:00")
    site = build_site(root, NOW, related=False)
    timeline = rendered(site.page("decisions/index.md").markdown)
    assert f'<code title="{HASH}">{HASH[:10]}</code>' in timeline
    assert HASH not in timeline.replace(f'title="{HASH}"', "")
    day = rendered(site.page("activity/2026-03-20.md").markdown)
    assert (
        f'<code title="{HASH}">{HASH[:10]}</code> <a href="../decisions/index.md#{decided}">' in day
    )
    assert "<code>v1.2</code>" in day  # a ref that is not a hash is shown as written
    linked = build_site(root, NOW, related=False, repo_url="https://github.com/example/shop")
    timeline = rendered(linked.page("decisions/index.md").markdown)
    url = f"https://github.com/example/shop/commit/{HASH}"
    assert f'<a href="{url}"><code title="{HASH}">{HASH[:10]}</code></a>' in timeline


def test_one_of_a_kind_is_singular_on_every_page(tmp_path):
    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="ana")
    memory.decide("Pin the driver", why="Bugs.", tags=["db"], at="2026-03-20T10:00")
    memory.learn("Vacuum lags", category="database", at="2026-03-20T11:00")
    (root / "notes").mkdir()
    (root / "notes" / "runbook.md").write_text("# Runbook\n\nRestart it.\n", "utf-8")
    site = build_site(root, NOW, related=False)
    home = site.page("index.md").markdown
    assert "1 decision, 1 learning, 2 activities and 1 note." in home
    assert "1 hand-written note of" in site.page("notes.md").markdown
    assert "1 learning in 1 category." in site.page("learnings/index.md").markdown
    assert "1 entry tagged" in site.page("tags/db.md").markdown
    assert "1 decision, newest first" in site.page("decisions/index.md").markdown
    activity = site.page("activity/index.md").markdown
    assert "4 entries." in activity and "4 entries</span>" in activity
    every = "\n".join(page.markdown for page in site.pages)
    assert not re.search(r"\b1 (notes|decisions|learnings|entries|activities|categories)\b", every)


def test_the_hot_row_says_what_the_live_session_holds(tmp_path):
    root = tmp_path / "memory"
    make_tree(root)  # a live session with one pending action
    home = build_site(root, NOW, related=False).page("index.md").markdown
    hot = next(line for line in home.splitlines() if line.startswith("| **hot** |"))
    assert hot.split(" | ")[2] == "live session: 1 pending action"
    ended = tmp_path / "ended"
    make_tree(ended, live=False)
    home = build_site(ended, NOW, related=False).page("index.md").markdown
    hot = next(line for line in home.splitlines() if line.startswith("| **hot** |"))
    assert hot.split(" | ")[2] == "no live session"


def test_a_day_log_hit_names_its_date_once(tmp_path):
    from memsite.search.payloads.listing import render_listing

    root = tmp_path / "memory"
    make_tree(root)
    memory = Memory(root)
    day_log = [h for h in memory.search("ran tests", limit=5) if h.kind == "activity"]
    assert day_log and day_log[0].breadcrumb.startswith("2026-03-21 ›")
    listing = render_listing(day_log[:1])
    assert "### 2026-03-21 › " in listing and "2026-03-21 · 2026-03-21" not in listing
    recalled = memory.recall("ran tests pytest").markdown
    assert "### 2026-03-21 › " in recalled and "2026-03-21 · 2026-03-21" not in recalled
    decisions = render_listing([h for h in memory.search("Postgres") if h.kind == "decision"])
    assert "### 2026-03-20 · Decisions › Move sessions to Postgres" in decisions
