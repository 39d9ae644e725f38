"""The span rules of ``memsite.search.ranking`` on hand-made sections (no index, no files)."""

from __future__ import annotations

import dataclasses
import datetime as dt

from memsite.search.chunks import Chunk
from memsite.search.ranking import Signal, fuse_scores
from memsite.search.spans import Span, assemble_spans


def section(record: str, position: int, size: int) -> Chunk:
    return Chunk(
        id=f"{record}#{position}",
        record=record,
        position=position,
        path=f"notes/{record}.md",
        anchor=f"s{position}",
        heading=f"Section {position}",
        breadcrumb=(record,),
        kind="note",
        tier="cold",
        date=dt.date(2026, 1, 1),
        line=10 * position + 1,
        end_line=10 * position + 9,
        text="x" * size,
        heading_lines=0,
    )


def build(sizes: dict[str, list[int]]) -> dict[str, list[Chunk]]:
    """Records of sections of the given sizes, keyed by record id."""
    return {
        record: [section(record, i, size) for i, size in enumerate(sizes)]
        for record, sizes in sizes.items()
    }


def spans(found: list[Span]) -> list[tuple[str, ...]]:
    return [tuple(c.id for c in span.chunks) for span in found]


def test_a_section_that_scores_only_through_its_record_never_joins_or_opens_a_hit() -> None:
    records = build({"a": [300], "b": [300, 300, 300]})
    # b#1 and b#2 score high through their record, but no query word or meaning matched them
    scores = {"a#0": 3.0, "b#0": 2.0, "b#1": 2.5, "b#2": 2.4}
    found = assemble_spans(records, scores, {"a#0", "b#0"}, 10)
    assert spans(found) == [("a#0",), ("b#0",)]


def test_a_record_matched_only_as_a_whole_gives_its_opening_section() -> None:
    records = build({"a": [300], "b": [300, 300]})
    found = assemble_spans(records, {"a#0": 2.0, "b#0": 1.0, "b#1": 1.5}, {"a#0"}, 10)
    assert spans(found) == [("a#0",), ("b#0",)]


def test_a_matching_section_joins_its_records_earlier_hit_when_the_span_fits() -> None:
    records = build({"a": [300], "b": [500, 500, 500]})
    scores = {"a#0": 3.0, "b#0": 2.0, "b#2": 1.5}
    found = assemble_spans(records, scores, set(scores), 10)
    # the section between the two joins with them: a hit is consecutive sections
    assert spans(found) == [("a#0",), ("b#0", "b#1", "b#2")]
    assert found[1].seed.id == "b#0" and found[1].score == 2.0


def test_a_section_opens_its_own_hit_when_the_span_would_pass_span_chars() -> None:
    records = build({"a": [300], "b": [500, 1_200, 500]})
    scores = {"a#0": 3.0, "b#0": 2.0, "b#2": 1.5}
    found = assemble_spans(records, scores, set(scores), 10)
    assert spans(found) == [("a#0",), ("b#0",), ("b#2",)]


def test_joins_are_bounded_by_the_span_alone_not_by_the_top_hits_budget() -> None:
    records = build({"a": [1_000], "b": [1_000], "c": [1_000], "d": [1_000], "e": [500, 600]})
    scores = {"a#0": 5.0, "b#0": 4.0, "c#0": 3.0, "d#0": 2.0, "e#0": 1.0, "e#1": 0.9}
    found = spans(assemble_spans(records, scores, set(scores), 10))
    # the top 5 then hold 5,100 characters: the cut keeps them within 5,000 afterwards
    # (passages.fit), so the answering e#1 still joins its record's hit
    assert found[4:] == [("e#0", "e#1")]


def test_hits_after_the_top_ones_join_freely_and_later_sections_only_join() -> None:
    sizes = {"a": [1_000], "b": [1_000], "c": [1_000], "d": [1_000], "e": [1_000]}
    records = build({**sizes, "f": [1_000, 900], "g": [100]})
    scores = {"a#0": 5, "b#0": 4, "c#0": 3, "d#0": 2, "e#0": 1, "f#0": 0.8, "f#1": 0.7, "g#0": 0.6}
    found = spans(assemble_spans(records, scores, set(scores), 6))
    # with six hits out, g#0 opens none
    assert found == [("a#0",), ("b#0",), ("c#0",), ("d#0",), ("e#0",), ("f#0", "f#1")]


def test_the_first_hit_reads_on_into_its_record_best_neighbour_first() -> None:
    records = build({"a": [100, 800, 1_500, 2_000], "b": [300]})
    # a#0 (the title) and a#3 tie: the earlier one, towards the title, comes first
    scores = {"a#0": 1.0, "a#1": 3.0, "a#2": 1.2, "a#3": 1.0, "b#0": 2.0}
    found = assemble_spans(records, scores, {"a#1", "b#0"}, 10, lead_chars=4_000)
    assert spans(found) == [("a#0", "a#1", "a#2"), ("b#0",)]
    assert found[0].seed.id == "a#1"
    # later hits do not read on: b's second section scores only through its record
    records = build({"a": [300], "b": [300, 300]})
    found = assemble_spans(records, {"a#0": 3.0, "b#0": 2.0, "b#1": 1.9}, {"a#0", "b#0"}, 10)
    assert spans(found) == [("a#0",), ("b#0",)]


def test_hits_never_overlap() -> None:
    records = build({"a": [300], "b": [200, 1_900, 200]})
    scores = {"a#0": 3.0, "b#1": 2.0, "b#0": 1.9, "b#2": 1.8}
    found = spans(assemble_spans(records, scores, set(scores), 10))
    # b#2 could reach b#0's hit only across b#1, which has a hit of its own
    assert found == [("a#0",), ("b#1",), ("b#0",), ("b#2",)]


def test_the_limit_bounds_the_hits() -> None:
    records = build({r: [100] for r in "abcdef"})
    scores = {f"{r}#0": float(i) for i, r in enumerate("abcdef")}
    assert spans(assemble_spans(records, scores, set(scores), 2)) == [("f#0",), ("e#0",)]


def test_a_record_counts_half_as_much_as_its_section() -> None:
    a, b = section("r", 0, 10), section("r", 1, 10)
    lexical = Signal("lexical", {a.id: 2.0, b.id: 1.0}, {"r": 4.0})
    assert fuse_scores([a, b], [lexical]) == {a.id: 1.5, b.id: 1.0}
    assert fuse_scores([a, b], [lexical], record_weight=1.0) == {a.id: 2.0, b.id: 1.5}


def test_a_hit_found_by_its_options_takes_in_what_its_record_decided() -> None:
    """An ADR found by its "Options" (not the first hit) used to leave out its "Decision":
    the answer to the question its options weigh (issue 36)."""
    records = build({"a": [1_000], "adr": [200, 300, 400, 300, 250]})
    records["adr"][3] = dataclasses.replace(records["adr"][3], heading="Decision")
    scores = {"a#0": 3.0, "adr#1": 2.0}
    found = assemble_spans(records, scores, set(scores), 10)
    assert spans(found) == [("a#0",), ("adr#1", "adr#2", "adr#3")]
    assert found[1].seed.id == "adr#1"
    # ...but only while the span stays within its cap, and never across another hit
    records["adr"][2] = dataclasses.replace(records["adr"][2], text="x" * 1_800)
    assert spans(assemble_spans(records, scores, set(scores), 10))[1] == ("adr#1",)
    scores = {"a#0": 3.0, "adr#1": 2.0, "adr#2": 1.9}
    records = build({"a": [1_000], "adr": [200, 300, 1_750, 200]})
    records["adr"][3] = dataclasses.replace(records["adr"][3], heading="Decision")
    assert spans(assemble_spans(records, scores, set(scores), 10))[1:] == [
        ("adr#1",),
        ("adr#2", "adr#3"),
    ]
