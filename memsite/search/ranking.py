"""From scored chunks to hits: score fusion, the hit a span becomes, and the near-tie order
(the spans themselves are assembled in :mod:`.spans`).

Measured on real decision records (``shared/FIELD-NOTES.md``, ``docs/benchmarks.md``): a
section under a generic heading is found when it is scored together with its record, a
record's answering sections are better returned as one span of consecutive sections than as
separate siblings, and the first hit is worth more text than the others. The index module
produces raw scores (:class:`Signal`); everything here is pure and knows nothing of Whoosh,
so another signal (embedding similarities, issue 6) is one more ``Signal``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..store.model import Successor
from .spans import Span

if TYPE_CHECKING:  # a value type of its annotations only: decide and learn load no chunker
    from .chunks import Chunk

RECORD_WEIGHT = 0.5  # a record's score counts half as much as its section's own
TOP_HITS = 5  # the hits a reader sees first: their text together is bounded by TOP_CHARS
TOP_CHARS = 4_800  # the top hits' text together never exceeds this (``passages.fit``)
NEAR_TIE = 0.05  # hits within 5% of the top score of each other count as tied: newest first


@dataclass(frozen=True)
class Signal:
    """Raw scores of one ranking signal, higher is better: per chunk id and per record id.

    Scores of different signals need not share a scale: :func:`fuse_scores` divides each
    level of each signal by its best score before adding them up.
    """

    name: str
    sections: Mapping[str, float]
    records: Mapping[str, float]
    weight: float = 1.0


def _normalised(scores: Mapping[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {key: value / top for key, value in scores.items()} if top > 0 else {}


def fuse_scores(
    chunks: Iterable[Chunk], signals: Sequence[Signal], record_weight: float = RECORD_WEIGHT
) -> dict[str, float]:
    """The fused score of each chunk: for every signal, its section score and its record's
    score, each divided by that signal's best, the record's weighed by ``record_weight``.

    ``score(c) = Σ_signal weight · (section(c) / max section + ½ · record(c) / max record)``.
    With the lexical signal alone a chunk scores between 0 and 1.5.

    The record term lets a section under a generic heading ("Consequences") score with what
    its record is about. At full weight it also lifts every section of a strongly matching
    record above the answering sections of other records. At half weight, with the span rules
    of :func:`.spans.assemble_spans`, the development set of real decision records
    (``docs/benchmarks.md``) went from recall@5 / MRR@10 0.919 / 0.806 to 0.912 / 0.826
    hybrid and from 0.926 / 0.810 to 0.948 / 0.851 lexical (0.3 and 0.7 measure alike); the
    bundled sample's questions gained (lexical 0.750 / 0.643 → 0.780 / 0.657, paraphrased
    ones hybrid 0.722 → 0.740 recall) and the generated year did not move.
    """
    parts = [
        (s.weight, _normalised(s.sections), _normalised(s.records)) for s in signals if s.weight
    ]
    return {
        chunk.id: sum(
            weight * (sections.get(chunk.id, 0.0) + record_weight * records.get(chunk.record, 0.0))
            for weight, sections, records in parts
        )
        for chunk in chunks
    }


@dataclass(frozen=True)
class Found:
    """What the index found for a query, before anything is cut or measured for an agent
    (``payloads/hits.py`` makes the hits of it): the spans best first, each with its snippet,
    and the plain figures that cutting them and recall's floor need.

    ``scores`` are the sections' fused scores, ``words`` their raw BM25F for the query's
    words; None when a filter alone was asked (spans newest first, nothing ranked). ``terms``
    are the query's words as the index analyses them (a word the memory abbreviates, as the
    memory spells it: issue 36), ``frequencies`` how many of the
    index's ``documents`` hold each, ``analyze`` a text's words as the index analyses them,
    and ``apart`` how much closer the query is to the memory than to everyday requests
    (ranked with meaning; else None)."""

    spans: tuple[Span, ...]
    snippets: tuple[str, ...]
    scores: Mapping[str, float] | None = None
    words: Mapping[str, float] = field(default_factory=dict)
    terms: tuple[str, ...] = ()
    frequencies: Mapping[str, int] = field(default_factory=dict)
    documents: int = 0
    analyze: Callable[[str], set[str]] = lambda text: set()
    apart: float | None = None


@dataclass(frozen=True)
class Hit:
    """One search result: a chunk, or consecutive chunks of one record merged into a span.

    The attributes are the fields of ``memsite search --json``. ``breadcrumb`` is joined with
    " › "; ``text`` is the whole span; ``snippet`` highlights query words with ``**``.
    """

    id: str
    path: str
    anchor: str
    heading: str
    breadcrumb: str
    kind: str
    tier: str
    date: dt.date
    category: str
    tags: tuple[str, ...]
    score: float
    line: int
    end_line: int
    snippet: str
    text: str
    record: str = ""
    time: dt.time | None = None
    # decisions and learnings: "current" or "superseded" (issue 16); None for other kinds
    status: str | None = None
    superseded_by: Successor | None = None
    # cut to its best passage so that the top hits fit TOP_CHARS together (issue 16)
    trimmed: bool = False
    # the raw BM25F score of its best section for the query's words, before fusion divides
    # it by the best of the query (0 when meaning alone found it), and the number of
    # documents of the index that scored it and how many of the query's words that index
    # holds at all: recall's floor (issue 24)
    words: float = 0.0
    documents: int = 0
    terms: int = 0
    # ...and how many words the query has, and the idf of its rarest word the index holds,
    # as a share of ln N (1: a word of one document)
    asked: int = 0
    rarest: float = 0.0
    # ...and the largest share of the query's words (by idf) that one of the first hits holds,
    # and the idf (as a share of ln N) of the second rarest query word that hit holds
    covered: float = 0.0
    second: float = 0.0
    # ...and the same share over the query's words the index holds (issue 36: a word the
    # memory spells otherwise is left to meaning)
    spelled: float = 0.0
    # ...and, ranked with meaning, how much closer the query is to the memory's closest
    # sections than to the closest everyday requests (``meaning.apart``; None without meaning)
    apart: float | None = None
    # the quoted phrases of a search that no entry held: the hit was found by their words
    # instead (issue 36: quotes are words; ``search`` says so on stderr)
    phrase_fallback: tuple[str, ...] = ()

    @property
    def citation(self) -> str:
        """``path#anchor`` (just ``path`` for text before a file's first heading)."""
        return f"{self.path}#{self.anchor}" if self.anchor else self.path

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "path": self.path,
            "anchor": self.anchor,
            "heading": self.heading,
            "breadcrumb": self.breadcrumb,
            "kind": self.kind,
            "tier": self.tier,
            "date": self.date.isoformat(),
            "time": self.time.isoformat() if self.time else None,
            "category": self.category,
            "tags": list(self.tags),
            "score": round(self.score, 4),
            "line": self.line,
            "end_line": self.end_line,
            "snippet": self.snippet,
            "text": self.text,
            "record": self.record,
            "status": self.status,
            "superseded_by": self.superseded_by.to_dict() if self.superseded_by else None,
            "trimmed": self.trimmed,
            "phrase_fallback": list(self.phrase_fallback),
        }


def span_hit(span: Span, snippet: str = "") -> Hit:
    """The hit for a span: cited at its first section, dated by its best section."""
    first, last = span.chunks[0], span.chunks[-1]
    return Hit(
        id=first.id,
        path=first.path,
        anchor=first.anchor,
        heading=first.heading,
        breadcrumb=" › ".join(first.breadcrumb),
        kind=first.kind,
        tier=first.tier,
        date=span.seed.date,
        category=first.category,
        tags=first.tags,
        score=span.score,
        line=first.line,
        end_line=last.end_line,
        snippet=snippet,
        text="\n\n".join(c.text for c in span.chunks),
        record=first.record,
        time=first.time,
        trimmed=span.trimmed,
    )


def record_hit(sections: Iterable[Chunk]) -> Hit:
    """A hit holding a whole record: its sections in file order, cited at the first."""
    ordered = tuple(sorted(sections, key=lambda c: c.position))
    return span_hit(Span(ordered, ordered[0], 0.0))


def those_first(hits: Sequence[Hit], wanted: Iterable[str]) -> list[Hit]:
    """``hits`` with those whose id is ``wanted`` first, each group in its order, the scores
    handed on in the new order (so that no later tie rule undoes it): recall weighs a quoted
    phrase this way, the entries holding it before those holding only its words (issue 36)."""
    keep = set(wanted)
    ordered = [h for h in hits if h.id in keep] + [h for h in hits if h.id not in keep]
    scores = sorted((h.score for h in hits), reverse=True)
    return [replace(h, score=score) for h, score in zip(ordered, scores, strict=True)]


def newest_first_among_ties(hits: Sequence[Hit], tolerance: float = NEAR_TIE) -> list[Hit]:
    """Keep score order, but put the newest first within each run of near-tied scores.

    A run starts at the best remaining hit and takes every hit scoring within ``tolerance``
    times the top score of it.
    """
    ordered = sorted(hits, key=lambda h: -h.score)
    if not ordered:
        return []
    margin = tolerance * max(ordered[0].score, 1e-9)
    out: list[Hit] = []
    start = 0
    while start < len(ordered):
        end = start + 1
        while end < len(ordered) and ordered[start].score - ordered[end].score <= margin:
            end += 1
        run = ordered[start:end]
        out += sorted(run, key=lambda h: (h.date, h.time or dt.time()), reverse=True)
        start = end
    return out
