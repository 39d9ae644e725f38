"""Posting lists read a block at a time: the exact BM25F scores of an ``Or`` of terms, and the
documents a filter allows, without walking Whoosh's matcher tree one document at a time.

Why (issue 16, point 4): when a question's words are everyday words, each is in thousands of
chunks, and Whoosh's collector visits every matching document through its tree of union
matchers (``id``, ``next``, ``score`` and a field-length read per document and per level).
Its block-quality skipping cannot cut: the 70th best score is a sum over several common
words, and every block of a common word holds a document that could reach it (where it does
skip, as under a filter, it drops documents that belong in the answer). Here each term's
postings are read a block at a time (document numbers and weights, the segment's field
lengths as one byte string) and scored with BM25F's formula and Whoosh's parameters, in the
same floating-point operations: the scores and order of Whoosh's exhaustive search, 5-6
times sooner (``docs/search.md``, ``docs/benchmarks.md``).

This reads Whoosh's segment format (``whoosh.codec.whoosh3``), which the pinned
whoosh-reloaded 2.7.5 will not change; an index in any other form raises
:class:`Unreadable`, and the caller asks Whoosh instead.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, repeat

from whoosh.codec.whoosh3 import LENGTHS_COLUMN, W3LeafMatcher, W3PerDocReader, _lenfield
from whoosh.matching import ListMatcher
from whoosh.matching.wrappers import FilterMatcher
from whoosh.reading import SegmentReader, TermNotFound
from whoosh.scoring import BM25F
from whoosh.util.numeric import byte_to_length

Weighted = tuple[str, str, float]  # field, word, boost: one Term of the query's Or

_LENGTHS = [byte_to_length(code) for code in range(256)]  # what a stored length byte means


class Unreadable(Exception):
    """The index is not in the form read here: ask Whoosh instead."""


def best_documents(  # type: ignore[no-untyped-def]
    searcher,
    terms: Sequence[Weighted],
    limit: int,
    allowed: frozenset[int] | None = None,
) -> list[tuple[int, float]]:
    """The ``limit`` best ``(document number, score)`` pairs for ``Or([Term(field, word,
    boost=boost), ...])``, best first, ties by document number, as Whoosh scores and orders
    them. ``allowed`` (document numbers) keeps only those documents."""
    if type(searcher.weighting) is not BM25F:
        raise Unreadable("another weighting model")
    scores: dict[int, float] = {}
    for sub, offset in searcher.leaf_searchers():
        reader = _segment(sub.reader())
        admitted = _admitted(reader, offset, allowed)
        lengths: dict[str, bytes] = {}
        # by the segment's own numbers, which index its field lengths (the first is at 0)
        found = scores if not offset else {}
        for field, word, boost in terms:
            try:
                postings = reader.postings(field, word)
            except TermNotFound:
                continue
            if field not in lengths:
                lengths[field] = _field_lengths(reader, field)
            blocks = _only(_blocks(postings), admitted)
            _add_scores(found, _bm25f(searcher, field, word), boost, lengths[field], blocks)
        for number in reader.deleted_docs_set:  # few: left out here, not tested per posting
            found.pop(number, None)
        if offset:
            scores.update({number + offset: score for number, score in found.items()})
    return _top(scores, limit)


def documents_with(searcher, parts: Sequence[Iterable[tuple[str, bytes]]]) -> frozenset[int]:  # type: ignore[no-untyped-def]
    """The live documents that hold, for every part, at least one of its terms (as a filter
    of ``And([Or(terms), ...])`` would keep)."""
    found: set[int] | None = None
    for terms in parts:
        having: set[int] = set()
        for sub, offset in searcher.leaf_searchers():
            reader = _segment(sub.reader())
            for field, word in terms:
                try:
                    postings = reader.postings(field, word)
                except TermNotFound:
                    continue
                for numbers, _ in _blocks(postings):
                    having.update(n + offset for n in numbers)
            having.difference_update(n + offset for n in reader.deleted_docs_set)
        found = having if found is None else found & having
        if not found:
            break
    return frozenset(found or ())


def _bm25f(searcher, field: str, word: str) -> tuple[float, float, float, float]:  # type: ignore[no-untyped-def]
    """``idf, avgfl, B, K1`` as ``BM25FScorer`` takes them: statistics of the whole index
    (the top searcher's, its idf cached), without the scorer's own look-up of the term."""
    weighting = searcher.weighting
    if not searcher.schema[field].scorable:
        raise Unreadable(f"{field} is not scored by BM25F")
    idf = searcher.idf(field, word)
    avgfl = searcher.avg_field_length(field) or 1
    return idf, avgfl, weighting._field_B.get(field, weighting.B), weighting.K1


def _add_scores(
    scores: dict[int, float],
    bm25f: tuple[float, float, float, float],
    boost: float,
    lengths: bytes,
    blocks: Iterator[tuple[Iterable[int], Iterable[float]]],
) -> None:
    """Add one term's BM25F score of every document it is in (``whoosh.scoring.bm25``, the
    same operations in the same order, so the same floats; ``x * 1.0 == x``, so the boost of
    a plain term changes nothing)."""
    idf, avgfl, b, k1 = bm25f
    k1_plus_1 = k1 + 1
    norms = [k1 * ((1 - b) + b * length / avgfl) for length in _LENGTHS]
    # most postings hold their word once: that score is read by length byte from a table
    once = [idf * ((1.0 * k1_plus_1) / (1.0 + norm)) * boost for norm in norms]
    get = scores.get
    for numbers, weights in blocks:
        for number, tf in zip(numbers, weights, strict=False):  # weights may repeat
            if tf == 1.0:
                scores[number] = get(number, 0.0) + once[lengths[number]]
            else:
                score = idf * ((tf * k1_plus_1) / (tf + norms[lengths[number]])) * boost
                scores[number] = get(number, 0.0) + score


def _admitted(
    reader: SegmentReader, offset: int, allowed: frozenset[int] | None
) -> set[int] | None:
    """The segment's own numbers of the ``allowed`` documents (None: every document)."""
    if allowed is None:
        return None
    end = offset + reader.doc_count_all()
    return {number - offset for number in allowed if offset <= number < end}


def _only(
    blocks: Iterator[tuple[Iterable[int], Iterable[float]]], admitted: set[int] | None
) -> Iterator[tuple[Iterable[int], Iterable[float]]]:
    """The postings of ``admitted`` documents only (None: all)."""
    if admitted is None:
        yield from blocks
        return
    for numbers, weights in blocks:
        kept = [(n, w) for n, w in zip(numbers, weights, strict=False) if n in admitted]
        if kept:
            yield [n for n, _ in kept], [w for _, w in kept]


def _top(scores: dict[int, float], limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best, ties by document number, as Whoosh's top collector keeps them."""
    if limit <= 0 or not scores:
        return []
    if len(scores) > limit:
        cut = heapq.nlargest(limit, scores.values())[-1]
        kept = [(number, score) for number, score in scores.items() if score >= cut]
    else:
        kept = list(scores.items())
    kept.sort(key=lambda item: (-item[1], item[0]))
    return kept[:limit]


def _segment(reader) -> SegmentReader:  # type: ignore[no-untyped-def]
    if type(reader) is not SegmentReader or type(reader._perdoc) is not W3PerDocReader:
        raise Unreadable(f"a {type(reader).__name__}")
    return reader


def _field_lengths(reader: SegmentReader, field: str) -> bytes:
    """Every document's length byte for ``field``, one read (absent: 0, as Whoosh reads it)."""
    column = reader._perdoc._cached_reader(_lenfield(field), LENGTHS_COLUMN)
    count = reader.doc_count_all()
    if column is None:
        return bytes(count)
    if column._fixedlen != 1:
        raise Unreadable("field lengths of another width")
    stored = column._dbfile.get(column._basepos, column._count)
    return stored + bytes(count - len(stored))


def _blocks(matcher) -> Iterator[tuple[Iterable[int], Iterable[float]]]:  # type: ignore[no-untyped-def]
    """(document numbers, weights) of one term's postings (``reader.postings``), a block at a
    time, deleted ones included."""
    if type(matcher) is FilterMatcher:  # the reader hides deleted documents this way
        matcher = matcher.child
    if type(matcher) is ListMatcher:  # a short posting list, inlined in the term's entry
        ids = matcher._ids
        if matcher._all_weights:
            yield ids, repeat(matcher._all_weights)
        else:
            yield ids, matcher._weights or repeat(1.0)
        return
    if type(matcher) is not W3LeafMatcher:
        raise Unreadable(f"postings in a {type(matcher).__name__}")
    while matcher.is_active():
        if matcher._data is None:
            matcher._read_data()
        ids, weights = matcher._data[0], matcher._data[1]
        if not matcher._byteids:
            ids = accumulate(ids)  # stored as gaps
        if weights is None:
            weights = repeat(1.0)
        elif isinstance(weights, float):
            weights = repeat(weights)
        yield ids, weights
        matcher._next_block()
