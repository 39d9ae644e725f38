"""Heading chunks: what search ranks and recall returns (pure, no Whoosh)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memsite import Memory
from memsite.search.chunks import SPLIT_OVER, chunk_file
from memsite.search.headings import HEADING_PARSED, toc_slug, unique_anchor

ADR = """\
---
status: accepted
date: 2026-03-02
tags: [database, sessions]
---

# ADR 7: Store sessions in Postgres

We replace the MongoDB session collection with a Postgres table.

## Context

MongoDB lost sessions in the October failover.

```bash
# this comment is not a heading
mongo --eval 'db.sessions.count()'
```

## Consequences

### Positive

One database to back up.

## Consequences

Date: 2026-03-09

Reviewed again a week later.
"""


def test_a_note_splits_at_its_headings_with_breadcrumbs_and_a_record() -> None:
    chunks = chunk_file("notes/adr-7.md", ADR, fallback_date=dt.date(2020, 1, 1))
    assert [(c.heading, c.breadcrumb, c.line, c.end_line) for c in chunks] == [
        ("ADR 7: Store sessions in Postgres", ("ADR 7: Store sessions in Postgres",), 7, 9),
        ("Context", ("ADR 7: Store sessions in Postgres", "Context"), 11, 18),
        ("Consequences", ("ADR 7: Store sessions in Postgres", "Consequences"), 20, 24),
        ("Consequences", ("ADR 7: Store sessions in Postgres", "Consequences"), 26, 30),
    ]
    # every section belongs to the file's record, in order, so it can be ranked with it
    assert {c.record for c in chunks} == {"note-notes-adr-7"}
    assert [c.position for c in chunks] == [0, 1, 2, 3]
    assert [c.id for c in chunks] == [
        "note-notes-adr-7",
        "note-notes-adr-7#context",
        "note-notes-adr-7#consequences",
        "note-notes-adr-7#consequences_1",
    ]
    # later sections carry the record's opening prose (searched at half weight)
    assert chunks[2].lead.startswith("ADR 7: Store sessions in Postgres. We replace the MongoDB")
    assert chunks[0].lead == ""
    # date: front matter for the file, a Date: line for its own section
    assert [c.date for c in chunks] == [dt.date(2026, 3, 2)] * 3 + [dt.date(2026, 3, 9)]
    assert chunks[0].tags == ("database", "sessions")
    assert {(c.kind, c.tier) for c in chunks} == {("note", "cold")}


def test_headings_inside_code_fences_do_not_split() -> None:
    chunks = chunk_file("notes/adr-7.md", ADR)
    context = chunks[1]
    assert "# this comment is not a heading" in context.text
    assert not any("this comment" in c.heading for c in chunks)


def test_a_bare_parent_heading_joins_its_first_subsection() -> None:
    consequences = chunk_file("notes/adr-7.md", ADR)[2]
    assert consequences.text == "## Consequences\n\n### Positive\n\nOne database to back up."


def test_anchors_are_the_ones_mkdocs_gives_headings() -> None:
    markdown = pytest.importorskip("markdown")
    from markdown.extensions.toc import slugify

    for heading in ["Décision Outcome", "Use `PyJWT` (not jose)!", "a  --  b", "Ünïcode_x 2"]:
        assert toc_slug(heading) == slugify(heading, "-")
    html = markdown.markdown("# Same\n\n# Same\n\n# Same_1", extensions=["toc"])
    taken: set[str] = set()
    ours = [unique_anchor(toc_slug(t), taken) for t in ("Same", "Same", "Same_1")]
    for anchor in ours:
        assert f'id="{anchor}"' in html


def test_a_heading_of_900_kb_is_read_by_its_start_and_its_section_kept() -> None:
    """markdown-it took 13 s to read a 900 KB heading of ``[``, at every index build."""
    text = "# Queue notes " + "[" * 900_000 + "\n\nThe zebrafish broker never drops a message.\n"
    (chunk,) = chunk_file("notes/queue.md", text)
    assert chunk.heading.startswith("Queue notes [[[") and len(chunk.heading) <= HEADING_PARSED
    assert "zebrafish broker" in chunk.body and chunk.end_line == 3


def test_a_memsite_entry_is_one_chunk_carrying_its_metadata(root: Path) -> None:
    memory = Memory(root, author="")
    entry_id = memory.learn(
        "Whoosh needs a writer timeout",
        category="search",
        why="A second writer raises LockError at once.",
        tags=["whoosh", "locking"],
        body="# looks like a heading but is escaped\n\nText.",
        at="2026-06-08T10:00:00",
    )
    text = (root / "cold/learnings.md").read_text()
    (chunk,) = chunk_file("cold/learnings.md", text)
    assert (chunk.id, chunk.record, chunk.anchor) == (entry_id, entry_id, entry_id)
    assert (chunk.kind, chunk.tier, chunk.date) == ("learning", "cold", dt.date(2026, 6, 8))
    assert (chunk.category, chunk.tags) == ("search", ("whoosh", "locking"))
    assert chunk.breadcrumb == ("Learnings", "Whoosh needs a writer timeout")
    assert text.split("\n")[chunk.line - 1].startswith("## 2026-06-08")
    assert chunk.end_line == len(text.rstrip("\n").split("\n"))
    assert "Id:" not in chunk.body and "LockError" in chunk.body


def test_day_log_entries_are_chunks_and_pointer_lines_are_not_searched(root: Path) -> None:
    memory = Memory(root, author="")
    memory.decide("Use Postgres", why="One database.", at="2026-06-08T09:00:00")
    memory.log("ran tests", {"command": "pytest"}, "12 passed", at="2026-06-08T09:05:00")
    chunks = chunk_file("warm/2026-06-08.md", (root / "warm/2026-06-08.md").read_text())
    assert [(c.kind, c.tier, c.time, c.breadcrumb) for c in chunks] == [
        ("activity", "warm", dt.time(9, 0), ("2026-06-08", "09:00:00 — decision")),
        ("activity", "warm", dt.time(9, 5), ("2026-06-08", "09:05:00 — ran tests")),
    ]
    # the line decide() writes only repeats the decision's title: the decision answers
    assert chunks[0].body == ""
    assert "12 passed" in chunks[1].body


def test_a_long_entry_splits_at_its_own_subheadings() -> None:
    filler = "word " * (SPLIT_OVER // 5)
    text = (
        "# Decisions\n\n## 2026-01-05 — Move sessions to Postgres\n"
        "- **Id:** 2026-01-05-move-sessions\n- **Why:** Fewer clusters.\n\n"
        f"### Context\n\n{filler}\n\n### Consequences\n\nSlower writes.\n"
    )
    chunks = chunk_file("cold/decisions.md", text)
    assert [(c.id, c.anchor, c.position) for c in chunks] == [
        ("2026-01-05-move-sessions", "2026-01-05-move-sessions", 0),
        ("2026-01-05-move-sessions#context", "context", 1),
        ("2026-01-05-move-sessions#consequences", "consequences", 2),
    ]
    assert {c.record for c in chunks} == {"2026-01-05-move-sessions"}
    assert chunks[2].breadcrumb == ("Decisions", "Move sessions to Postgres", "Consequences")
    assert chunks[2].lead.startswith("Move sessions to Postgres. Fewer clusters.")
    short = text.replace(filler, "short")
    assert len(chunk_file("cold/decisions.md", short)) == 1


def test_a_hand_written_log_note_makes_each_dated_section_a_record() -> None:
    text = "# Meetings\n\n## 2026-02-01 Planning\n\nA.\n\n### Actions\n\nB.\n\n## 2026-02-08 Retro\n\nC.\n"
    chunks = chunk_file("notes/meetings.md", text, fallback_date=dt.date(2026, 1, 1))
    assert [(c.record, c.position, c.date, c.breadcrumb[-1]) for c in chunks] == [
        ("note-notes-meetings#2026-02-01-planning", 0, dt.date(2026, 2, 1), "2026-02-01 Planning"),
        ("note-notes-meetings#2026-02-01-planning", 1, dt.date(2026, 2, 1), "Actions"),
        ("note-notes-meetings#2026-02-08-retro", 0, dt.date(2026, 2, 8), "2026-02-08 Retro"),
    ]
    assert chunks[1].lead == "2026-02-01 Planning. A."


def test_persona_is_never_a_chunk() -> None:
    assert chunk_file("persona.md", "# Persona\n\n## Identity\n\nI am an agent.\n") == []


def test_text_outside_entries_of_an_entry_file_is_still_searchable() -> None:
    text = "# Decisions\n\nSome preamble about how we decide.\n\n## not an entry heading\n\nstray\n"
    chunks = chunk_file("cold/decisions.md", text)
    assert len(chunks) == 1
    assert "preamble" in chunks[0].text and "stray" in chunks[0].text
    assert chunks[0].kind == "note"
