"""Activity hits bring their neighbours (issue 36.7) and are shown compactly (issue 39.5): a
day-log hit carries the entries of its session before and after it, within its share of the
budget; its time heading and id line are not repeated in its text; a huge entry recalled
returns its content; a snippet starts where its sentence does when that fits."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memsite import Memory
from memsite.search.payloads import neighbours
from memsite.search.payloads.tokens import estimate_tokens
from memsite.search.ranking import TOP_CHARS, TOP_HITS

DAY = dt.date(2026, 6, 8)


def at(clock: str) -> dt.datetime:
    return dt.datetime.combine(DAY, dt.time.fromisoformat(clock))


# claude's run (ran tests → failed → edited file → ran tests → passed) with maria's entries
# between them, and a later claude session after a session end: (time, author, action,
# details, result)
DAY_LOG = [
    ("10:00:00", "claude", "ran tests", {"command": "pytest tests/cart"}, "started the cart suite"),
    ("10:01:00", "maria", "reviewed invoice layout", {"page": "invoice.html"}, "margins fixed"),
    ("10:02:00", "claude", "test failed", {"test": "test_refund_rounds"}, "refund total off by one cent"),
    ("10:03:00", "maria", "answered support ticket", {"ticket": "4471"}, "customer sent the receipt"),
    ("10:05:00", "claude", "edited file", {"file": "shop/refunds.py"}, "rounded half-even before summing"),
    ("10:07:00", "claude", "ran tests", {"command": "pytest -k refund"}, "ran the refund tests again"),
    ("10:08:00", "claude", "tests passed", {"passed": "42"}, "all cart tests green"),
    ("10:09:00", "claude", "session end", {"task": "fix refunds"}, "refunds fixed"),
    ("10:10:00", "claude", "started the export", {"job": "export"}, "nightly export kicked off"),
]  # fmt: skip


def a_day_of_two_sessions(memory: Memory) -> None:
    for clock, author, action, details, result in DAY_LOG:
        memory.log(action, details, result, at=at(clock), author=author)


def test_a_recalled_failure_brings_its_sessions_neighbours_not_the_other_sessions(
    memory: Memory,
) -> None:
    a_day_of_two_sessions(memory)
    recalled = memory.recall("test_refund_rounds refund total off by one cent", lexical=True)
    first = recalled.hits[0]
    assert first.kind == "activity" and "test_refund_rounds" in first.text
    text = first.text
    # what was run before and what came of it, in the order it happened
    run = ["started the cart suite", "refund total off by one cent", "rounded half-even",
           "ran the refund tests again", "all cart tests green"]  # fmt: skip
    places = [text.index(step) for step in run]
    assert places == sorted(places)
    # maria's entries in between, and claude's next session, are not this session's
    for other in ("margins fixed", "customer sent the receipt", "nightly export"):
        assert other not in text
    assert "rounded half-even before summing" in recalled.markdown


def test_the_hits_with_neighbours_keep_within_the_budget(memory: Memory) -> None:
    a_day_of_two_sessions(memory)
    hits = memory.search("refund cent test tests cart", lexical=True)
    assert sum(len(h.text) for h in hits[:TOP_HITS]) <= TOP_CHARS
    assert any("all cart tests green" in h.text and "test_refund_rounds" in h.text for h in hits)
    for budget in (60, 120, 400):
        recalled = memory.recall("test_refund_rounds refund total", budget=budget, lexical=True)
        assert recalled.tokens <= budget
        assert estimate_tokens(recalled.markdown) == recalled.tokens
    # too small a budget for the run: the failure alone, as before neighbours
    small = memory.recall("test_refund_rounds refund total", budget=120, lexical=True).markdown
    assert "refund total off by one cent" in small and "started the cart suite" not in small
    # an entry is shown once, though two hits of one session are recalled
    both = memory.recall("test_refund_rounds refund total", budget=1500, lexical=True)
    assert len(both.hits) >= 2
    assert both.markdown.count("all cart tests green") == 1


def test_an_activity_hit_does_not_repeat_its_time_heading_or_id_line(memory: Memory) -> None:
    a_day_of_two_sessions(memory)
    hits = memory.search("nightly export", lexical=True)
    hit = next(h for h in hits if "nightly export" in h.text)
    assert "<!-- id:" not in hit.text
    assert "### 10:10:00" not in hit.text
    assert hit.breadcrumb.endswith("10:10:00 — started the export")  # said once, here
    recalled = memory.recall("nightly export kicked off", lexical=True).markdown
    assert recalled.count("10:10:00") == 1 and "<!-- id:" not in recalled


def test_a_huge_entry_recalled_returns_its_content_cut(root: Path) -> None:
    words = " ".join(f"zebra{i} output of migration step {i} copied rows" for i in range(16_000))
    assert len(words) > 800_000
    (root / "warm" / "2026-06-08.md").write_text(
        "# 2026-06-08\n\n### 10:00:00 — ran migration\n- **Author:** x\n\n"
        f"{words}\n\n<!-- id: 2026-06-08-ran-migration -->\n",
        "utf-8",
    )
    recalled = Memory(root).recall("zebra migration output copied", lexical=True)
    assert recalled.hits, "the entry is recalled"
    assert "zebra0 output of migration step 0" in recalled.markdown
    assert len(recalled.markdown) < 10_000


def test_a_snippet_starts_at_its_field_when_that_fits(memory: Memory) -> None:
    memory.learn(
        "Money math needs exact types",
        why="floats lose cents when multiplied by a quantity, because binary fractions "
        "cannot hold a tenth exactly, and the checkout total drifted",
        category="money",
    )
    hits = memory.search("checkout", lexical=True)
    assert hits[0].snippet.startswith("**Why:** floats lose cents")


def test_neighbours_never_push_an_answer_out_of_recall(memory: Memory) -> None:
    a_day_of_two_sessions(memory)
    memory.learn(
        "Refund totals round per line",
        why="test_refund_rounds showed the refund total off by one cent when summed first",
        category="money",
    )
    prompt = "test_refund_rounds refund total off by one cent"
    whole = memory.recall(prompt, budget=1500, lexical=True)
    assert {h.kind for h in whole.hits} >= {"activity", "learning"}
    # a budget that holds every hit bare but not the run around the failure: the hits first,
    # neighbours only in the room they leave (taken first, they left out three of five)
    small = memory.recall(prompt, budget=260, lexical=True)
    assert small.tokens <= 260 and not small.left_out
    assert [h.id for h in small.hits] == [h.id for h in whole.hits]
    assert "refund total off by one cent" in small.markdown


def test_a_day_log_past_the_neighbours_limit_still_gives_its_hits(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ordinary writes grow a day log past what is read for neighbours (8 MiB: ten entries
    # of 880 KB do): its hits come alone, search and recall never fail over it
    a_day_of_two_sessions(memory)
    log = memory.root / "warm" / f"{DAY.isoformat()}.md"
    monkeypatch.setattr(neighbours, "MAX_LOG", log.stat().st_size - 1)
    neighbours._PARSED.clear()
    recalled = memory.recall("test_refund_rounds refund total off by one cent", lexical=True)
    assert recalled.hits and "test_refund_rounds" in recalled.hits[0].text
    assert "all cart tests green" not in recalled.hits[0].text  # no neighbours read
    found = memory.search("test_refund_rounds", lexical=True)
    assert found and found[0].id.endswith("test-failed")
