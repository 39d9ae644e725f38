"""The top hits' character budget (issue 16): how it is shared among the hits, which passage
a long hit keeps, and that search, recall and eval see the cut hits with honest line ranges."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest

from memsite import Memory
from memsite.search.chunks import Chunk, chunk_file
from memsite.search.evaluation.metrics import Labelled, judge
from memsite.search.payloads.passages import MARK, shares, trim
from memsite.search.ranking import TOP_CHARS

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]


def filler(seed: int, size: int) -> str:
    """A paragraph of about ``size`` characters of words no query below asks for."""
    words = [f"{WORDS[(seed + i) % len(WORDS)]}{i % 7}" for i in range(size // 7)]
    return " ".join(words)[:size]


def test_hits_that_fit_the_budget_keep_everything() -> None:
    assert shares([900, 800, 700], 5_000, 4_000) == [900, 800, 700]


def test_the_first_hit_keeps_its_span_and_the_others_share_what_it_leaves() -> None:
    kept = shares([3_000, 3_000, 3_000, 3_000, 3_000], 5_000, 4_000)
    assert kept == [3_000, 500, 500, 500, 500]


def test_a_short_hit_is_never_cut_to_pay_for_a_long_one() -> None:
    kept = shares([2_000, 200, 3_000, 300, 2_500], 5_000, 4_000)
    assert kept[1] == 200 and kept[3] == 300
    assert sum(kept) <= 5_000
    assert kept[2] == kept[4] == (5_000 - 2_000 - 200 - 300) // 2


def test_the_first_hit_is_cut_only_past_its_lead_and_the_others_keep_a_floor() -> None:
    kept = shares([9_000, 3_000, 3_000, 3_000, 3_000], 5_000, 4_000)
    assert kept == [4_000, 250, 250, 250, 250]
    # when the others are short, the first hit may keep more than its lead
    assert shares([9_000, 100, 100, 100, 100], 5_000, 4_000) == [4_600, 100, 100, 100, 100]


def section_of(text: str, line: int = 10) -> Chunk:
    return Chunk(
        id="adr#decision",
        record="adr",
        position=1,
        path="notes/adr.md",
        anchor="decision",
        heading="Decision",
        breadcrumb=("ADR",),
        kind="note",
        tier="cold",
        date=dt.date(2026, 1, 1),
        line=line,
        end_line=line + text.count("\n"),
        text=text,
    )


def test_a_long_section_keeps_the_paragraph_that_holds_the_query_under_its_heading() -> None:
    paragraphs = [filler(i, 600) for i in range(6)]
    paragraphs[3] = "We chose the zebrafish queue because it never drops a message."
    text = "## Decision\n\n" + "\n\n".join(paragraphs)
    chunk = section_of(text)
    cut = trim([chunk], chunk, 700, lambda t: 1.0 if "zebrafish" in t else 0.0)
    assert cut is not None
    assert cut.text.startswith(f"## Decision\n\n{MARK}\n\n")
    assert "zebrafish" in cut.text and len(cut.text) <= 700
    # the line range is the passage's: the heading above it is context, not claimed
    lines = text.split("\n")
    kept = lines[cut.line - chunk.line : cut.end_line - chunk.line + 1]
    assert "\n".join(kept) in cut.text and any("zebrafish" in line for line in kept)
    assert cut.line > chunk.line


def test_a_code_fence_is_one_block_and_is_not_split_at_its_blank_lines() -> None:
    code = "```\nzebrafish = 1\n\nqueue = 2\n```"
    text = "## Decision\n\n" + filler(1, 900) + "\n\n" + code + "\n\n" + filler(2, 900)
    chunk = section_of(text)
    cut = trim([chunk], chunk, 400, lambda t: 1.0 if "zebrafish" in t else 0.0)
    assert cut is not None and code in cut.text


def test_a_cut_span_keeps_a_passage_of_the_section_it_was_found_for() -> None:
    context = "## Context\n\n" + filler(1, 150)
    consequences = "## Consequences\n\nThe zebrafish queue is slower to start.\n\n" + filler(2, 150)
    seed = replace(section_of(context, line=10), id="adr#context", heading="Context")
    other = replace(
        section_of(consequences, line=14), id="adr#consequences", position=2, heading="Consequences"
    )
    found = trim([seed, other], seed, 200, lambda t: 1.0 if "zebrafish" in t else 0.0)
    # the neighbour holds the query's word, but the hit is the Context's: its passage stays
    assert found is not None and found.line < 14 and "zebrafish" not in found.text


def zebrafish(text: str) -> float:
    return 1.0 if "zebrafish" in text else 0.0


def seed_of(heading: str, line: int, position: int) -> Chunk:
    """A section holding the query's word, ``heading`` of a record."""
    text = "## " + heading + "\n\nThe zebrafish queue stalls.\n\n" + filler(1, 150)
    chunk = section_of(text, line=line)
    return replace(chunk, id=f"adr#{heading}", heading=heading, position=position)


def decision_record(decision: str) -> tuple[Chunk, Chunk]:
    """A record's "Context", holding the query's word, and its "Decision"."""
    chunk = replace(section_of("## Decision\n\n" + decision, line=16), id="adr#d", position=2)
    return seed_of("Context", 10, 1), chunk


def test_a_cut_record_found_by_its_context_shows_its_decision() -> None:
    seed, decision = decision_record("We move to the durable broker.")
    found = trim([seed, decision], seed, 120, zebrafish)
    # the Context asked the question the Decision answers: the passage is the answer
    assert found is not None and found.line >= 16 and "durable broker" in found.text
    # a section after the decision (its consequences) keeps its own passage
    consequences = seed_of("Consequences", 19, 3)
    found = trim([decision, consequences], consequences, 120, zebrafish)
    assert found is not None and found.end_line >= 19 and "zebrafish" in found.text


def test_a_decision_too_long_for_the_share_leaves_the_seeds_passage() -> None:
    seed, decision = decision_record("durable" * 40)
    found = trim([seed, decision], seed, 120, zebrafish)
    assert found is not None and found.line < 16 and "zebrafish" in found.text


def test_a_paragraph_longer_than_the_share_is_started_not_left_out() -> None:
    """One line longer than the share used to leave the heading alone: "## Context […]"."""
    text = "## Context\n\n" + filler(3, 900)
    chunk = replace(section_of(text), heading="Context")
    found = trim([chunk], chunk, 200, lambda t: 0.0)
    assert found is not None and found.text.startswith("## Context\n\n" + filler(3, 40)[:30])
    assert found.text.endswith(MARK) and len(found.text) <= 200
    assert (found.line, found.end_line) == (10, 12)


def test_a_span_that_fits_is_not_cut() -> None:
    chunk = section_of("## Decision\n\nShort.")
    assert trim([chunk], chunk, 5_000, lambda t: 0.0) is None


LONG_NOTE = """\
# ADR {n}: Queue choice {n}

## Context

{context}

## Decision

{decision}

We keep the zebrafish broker for queue {n} because it never drops a message.

{tail}
"""


@pytest.fixture
def long_notes(root: Path) -> Path:
    (root / "notes").mkdir()
    for n in range(8):
        text = LONG_NOTE.format(
            n=n,
            context=filler(n, 500),
            decision="\n\n".join(filler(n + i, 700) for i in range(3)),
            tail="\n\n".join(filler(n + i, 700) for i in range(3)),
        )
        (root / "notes" / f"adr-{n}.md").write_text(text)
    return root


def test_the_top_five_hits_of_search_and_recall_fit_their_budget(long_notes: Path) -> None:
    with Memory(long_notes, author="") as memory:
        for lexical in (True, False):
            hits = memory.search("zebrafish broker", limit=10, lexical=lexical)
            assert len(hits) >= 5
            assert sum(len(h.text) for h in hits[:5]) <= TOP_CHARS
            cut = [h for h in hits[:5] if h.trimmed]
            assert cut and all(h.to_dict()["trimmed"] for h in cut)
            # what was kept is the part that answers
            assert all("zebrafish broker" in h.text for h in hits[:5])
        recalled = memory.recall("zebrafish broker", budget=5_000, lexical=True)
        assert sum(len(h.text) for h in recalled.hits[:5]) <= 5_000


def test_a_cut_hit_claims_only_the_lines_it_returns(long_notes: Path) -> None:
    with Memory(long_notes, author="") as memory:
        hits = memory.search("zebrafish broker", limit=10, lexical=True)
    for hit in (h for h in hits[:5] if h.trimmed):
        lines = (long_notes / hit.path).read_text().split("\n")
        returned = "\n".join(lines[hit.line - 1 : hit.end_line])
        assert returned in hit.text
        # the labelled Context section above the kept passage is not found by this hit
        chunks = chunk_file(hit.path, (long_notes / hit.path).read_text())
        context = Labelled("q", (f"{hit.path}#Context",))
        assert judge(context, [hit], 5, lambda p, c=chunks: c).found == 0


def brute_force(chunk: Chunk, cap: int, weigh) -> str | None:  # type: ignore[no-untyped-def]
    """Every run of blocks measured by writing it out: what ``trim`` must choose."""
    from memsite.search.payloads.passages import _fitting, _passage, blocks

    pieces = [p for b in blocks([chunk]) for p in _fitting(b, cap)]
    worth = [weigh(p.text) for p in pieces]
    best = None
    for first in range(len(pieces)):
        for last in range(first, len(pieces)):
            if len(_passage([chunk], pieces, first, last)) > cap:
                break
            key = (round(sum(worth[first : last + 1]), 9), first == 0 or first <= 0 <= last, -first)
            if best is None or key > best[0]:
                best = (key, first, last)
    return None if best is None else _passage([chunk], pieces, best[1], best[2])


@pytest.mark.parametrize("cap", [120, 300, 500, 700])
def test_the_passage_kept_is_the_best_run_of_blocks_that_fits(cap: int) -> None:
    parts = ["## Decision", filler(1, 250), "one line\nnext line\nzebrafish line", filler(2, 90)]
    parts += ["```\nzebrafish = 1\n\nqueue = 2\n```", filler(3, 400), "zebrafish again", "end"]
    chunk = section_of("\n\n".join(parts))
    weigh = lambda t: t.count("zebrafish") / 3  # noqa: E731
    cut = trim([chunk], chunk, cap, weigh)
    assert cut is not None and len(cut.text) <= cap
    assert cut.text == brute_force(chunk, cap, weigh)


def test_a_body_of_thousands_of_short_lines_is_cut_and_keeps_the_query() -> None:
    # one block of 30,000 short lines: every line a piece; measuring every run by writing
    # it out took minutes (found by the hostile-text round trip)
    lines = [f"row {i} {WORDS[i % len(WORDS)]}" for i in range(30_000)]
    lines[21_000] = "row zebrafish"
    chunk = section_of("## Decision\n\n" + "\n".join(lines))
    cut = trim([chunk], chunk, 2_000, lambda t: 1.0 if "zebrafish" in t else 0.0)
    assert cut is not None and len(cut.text) <= 2_000 and "row zebrafish" in cut.text
