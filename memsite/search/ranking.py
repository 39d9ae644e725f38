"""From scored chunks to hits: score fusion, span merging and the near-tie order.

Measured on real decision records (``shared/FIELD-NOTES.md``): a section under a generic
heading is found when it is scored together with its record, and a record's top sections are
better returned as one span of consecutive sections than as separate siblings. The index
module produces raw scores (:class:`Signal`); everything here is pure and knows nothing of
Whoosh, so another signal (embedding similarities, issue 6) is one more ``Signal``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .chunks import Chunk
from .supersession import Successor

SPAN_CHARS = 2_000  # a merged span of sections stays under this many characters
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


def fuse_scores(chunks: Iterable[Chunk], signals: Sequence[Signal]) -> dict[str, float]:
    """The fused score of each chunk: for every signal, its section score and its record's
    score, each divided by that signal's best, weighted and summed.

    ``score(c) = Σ_signal weight · (section(c) / max section + record(c) / max record)``.
    With the lexical signal alone a chunk scores between 0 and 2.
    """
    parts = [
        (s.weight, _normalised(s.sections), _normalised(s.records)) for s in signals if s.weight
    ]
    return {
        chunk.id: sum(
            weight * (sections.get(chunk.id, 0.0) + records.get(chunk.record, 0.0))
            for weight, sections, records in parts
        )
        for chunk in chunks
    }


@dataclass(frozen=True)
class Span:
    """Consecutive sections of one record returned as one hit; ``seed`` scored best."""

    chunks: tuple[Chunk, ...]
    seed: Chunk
    score: float


def merge_spans(
    records: Mapping[str, Sequence[Chunk]],
    scores: Mapping[str, float],
    matched: set[str],
    max_chars: int = SPAN_CHARS,
) -> list[Span]:
    """Group each record's matching sections into non-overlapping spans, best first.

    The best matching section seeds a span; the record's next-best matching sections join it
    when the span (with every section between them) stays within ``max_chars``. Sections left
    over seed further spans of their own. A record that matched only as a whole returns its
    opening section.
    """
    spans = []
    for sections in records.values():
        ordered = sorted(sections, key=lambda c: c.position)
        index = {c.id: i for i, c in enumerate(ordered)}
        pool = (
            sorted(
                (c for c in ordered if c.id in matched),
                key=lambda c: (-scores.get(c.id, 0), c.position),
            )
            or ordered[:1]
        )
        used: set[int] = set()
        while pool:
            seed = pool.pop(0)
            low = high = index[seed.id]
            for other in list(pool):
                where = index[other.id]
                lo, hi = min(low, where), max(high, where)
                if any(i in used for i in range(lo, hi + 1)):
                    continue
                if sum(len(c.text) for c in ordered[lo : hi + 1]) <= max_chars:
                    low, high = lo, hi
            used.update(range(low, high + 1))
            pool = [c for c in pool if index[c.id] not in used]
            spans.append(Span(tuple(ordered[low : high + 1]), seed, scores.get(seed.id, 0.0)))
    spans.sort(key=lambda s: (-s.score, s.seed.path, s.seed.line))
    return spans


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
    )


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
