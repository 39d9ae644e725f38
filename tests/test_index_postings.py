"""Posting lists read a block at a time give what Whoosh's own search gives: the same
documents, the same order, the same scores, also over several segments with deletions."""

from __future__ import annotations

from pathlib import Path

import pytest
from whoosh.query import And, ConstantScoreQuery, Query
from whoosh.scoring import TF_IDF

from memsite import Memory
from memsite.search.index import asking
from memsite.search.index import postings as index_postings
from memsite.search.index import search as index_search
from memsite.search.index.cache import SearchIndex
from memsite.search.query import parse_query

QUESTIONS = [
    "why did we stop keeping user sessions in mongo",
    "session store postgres migration",
    "rate limit login attempts",
    "what broke in the deploy",
    "cache",
    "decision about retries and timeouts",
]
FILTERS = [
    "",
    " kind:decision",
    " tier:warm",
    " since:2026-11-10",
    " since:2026-11-01 until:2026-11-15 kind:activity",
    " tag:database",
    " date:2026-11",
    " kind:decision kind:learning",
]


def whoosh_answer(searcher, query: str, limit: int) -> list[tuple[int, float]]:  # type: ignore[no-untyped-def]
    parsed = parse_query(query)
    wanted = asking.whoosh_query(parsed, searcher.reader())
    narrow = asking.filter_query(parsed.filters)
    if narrow is not None:
        wanted = And([wanted, ConstantScoreQuery(narrow, 0.0)])
    # every match, then the best: with a filter, Whoosh's top-N collection drops documents
    # that belong in it (its ConstantScoreQuery scores 1.0 but tells the pruning 0.0)
    found = searcher.search(wanted, limit=None)
    return [(hit.docnum, hit.score) for hit in found][:limit]


def bulk_answer(searcher, query: str, limit: int) -> list[tuple[int, float]]:  # type: ignore[no-untyped-def]
    parsed = parse_query(query)
    wanted = asking.whoosh_query(parsed, searcher.reader())
    narrow = asking.filter_query(parsed.filters)
    allowed = None
    if narrow is not None:
        parts: list[Query] = narrow.subqueries if type(narrow) is And else [narrow]
        terms = [part.existing_terms(searcher.reader(), expand=True) for part in parts]
        allowed = index_postings.documents_with(searcher, terms)
    terms = index_search._weighted(wanted)
    assert terms is not None
    found = index_postings.best_documents(searcher, terms, limit, allowed)
    shift = 0.0 if narrow is None else 1.0  # what Whoosh's ConstantScoreQuery adds
    return [(number, score + shift) for number, score in found]


def same(left: list[tuple[int, float]], right: list[tuple[int, float]]) -> bool:
    return [n for n, _ in left] == [n for n, _ in right] and all(
        abs(a - b) < 1e-9 for (_, a), (_, b) in zip(left, right, strict=True)
    )


@pytest.mark.parametrize("limit", [1, 10, 70])
def test_block_reading_scores_as_whoosh_does(sample: Path, limit: int) -> None:
    with SearchIndex(sample) as index:
        searcher = index._fresh_searcher()
        for question in QUESTIONS:
            for narrow in FILTERS:
                query = question + narrow
                assert same(
                    bulk_answer(searcher, query, limit), whoosh_answer(searcher, query, limit)
                ), query


def test_block_reading_spans_segments_and_skips_deleted_documents(sample: Path) -> None:
    with Memory(sample, author="") as memory:
        memory.index()
        memory.decide(
            "Keep the session cache in Postgres",
            why="The login service deploy lost every cached session.",
            tags=["database"],
            at="2026-11-27T10:00:00",
        )
        decisions = sample / "cold" / "decisions.md"
        text = decisions.read_text("utf-8")
        decisions.write_text(text.replace("MongoDB", "Mongo DB", 3), "utf-8")
        memory.index()
    with SearchIndex(sample) as index:
        searcher = index._fresh_searcher()
        assert not searcher.is_atomic()  # several segments
        assert any(sub.reader().has_deletions() for sub, _ in searcher.leaf_searchers())
        for question in [*QUESTIONS, "mongo db session cache"]:
            for narrow in FILTERS:
                query = question + narrow
                assert same(bulk_answer(searcher, query, 20), whoosh_answer(searcher, query, 20)), (
                    query
                )


def test_documents_with_is_the_filter_whoosh_applies(sample: Path) -> None:
    with SearchIndex(sample) as index:
        searcher = index._fresh_searcher()
        reader = searcher.reader()
        for narrow in FILTERS[1:]:
            query = asking.filter_query(parse_query("x" + narrow).filters)
            assert query is not None
            parts = query.subqueries if type(query) is And else [query]
            found = index_postings.documents_with(
                searcher, [part.existing_terms(reader, expand=True) for part in parts]
            )
            assert found == set(searcher.docs_for_query(query)), narrow


def test_another_weighting_model_is_left_to_whoosh(sample: Path) -> None:
    with SearchIndex(sample) as index:
        index.refresh()
        assert index._ix is not None
        other = index._ix.searcher(weighting=TF_IDF())
        with other, pytest.raises(index_postings.Unreadable):
            index_postings.best_documents(other, [("body", "session", 1.0)], 10)
