"""How the index is written: stock Whoosh reads it, and a build cut into segments finds
exactly what a build of one segment finds."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from whoosh.codec.whoosh3 import W3Codec, W3LeafMatcher

from memsite.search.index import codec as index_codec
from memsite.search.index.cache import SearchIndex
from memsite.search.payloads.hits import build_hits
from memsite.search.query import parse_query

QUESTIONS = [
    "why did we stop keeping user sessions in mongo",
    "rate limit login attempts kind:decision",
    '"session store" postgres',
    "cache tier:warm",
]


def answers(index: SearchIndex) -> dict[str, list[tuple[str, float]]]:
    return {
        question: [
            (hit.id, hit.score)
            for hit in build_hits(index.search(parse_query(question), lexical=True))
        ]
        for question in QUESTIONS
    }


def test_a_build_in_segments_finds_what_one_segment_finds(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SearchIndex(sample, tmp_path / "one") as index:
        index.refresh(rebuild=True)
        assert len(index._ix._read_toc().segments) == 1  # type: ignore[union-attr]
        whole = answers(index)
    monkeypatch.setattr(index_codec, "SEGMENT_SHARE", 0.002)  # ~0.5 MB of postings
    with SearchIndex(sample, tmp_path / "cut") as index:
        index.refresh(rebuild=True)
        assert len(index._ix._read_toc().segments) > 3  # type: ignore[union-attr]
        assert answers(index) == whole


def test_stock_whoosh_reads_the_segments_and_their_blocks_are_current_pickles(
    sample: Path,
) -> None:
    with SearchIndex(sample) as index:
        index.refresh(rebuild=True)
        assert index._ix is not None
        assert all(type(s.codec()) is W3Codec for s in index._ix._read_toc().segments)
        with index._ix.searcher() as searcher:
            matcher = searcher.reader().postings("body", "session")
            assert type(matcher) is W3LeafMatcher
            start = matcher._dataoffset
            block = matcher._postfile.get(start, matcher._nextoffset - start)
            assert block[:2] == bytes([pickle.PROTO[0], index_codec.PROTOCOL])  # uncompressed
            assert matcher.supports("positions") and matcher.value_as("positions")
