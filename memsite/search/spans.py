"""Spans: the consecutive sections of one record that a hit returns (issue 16), and how
the best of them are assembled from scored sections (:func:`assemble_spans`).

Measured on real decision records (``docs/benchmarks.md``): a record's answering sections
are better returned as one span of consecutive sections than as separate siblings, the
first hit is worth more text than the others, and a hit found before its record's decision
carries it. Pure: sections and scores in, spans out; :mod:`.ranking` makes hits of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a value type of its annotations only: decide and learn load no chunker
    from .chunks import Chunk

SPAN_CHARS = 2_000  # a hit's span of consecutive sections stays within this many characters
LEAD_CHARS = 4_000  # ...except the first hit's, which reads on into its record this far
DECISION_HEADINGS = ("decision", "decisions", "decision outcome")  # an ADR's answer


@dataclass(frozen=True)
class Span:
    """Consecutive sections of one record returned as one hit; ``seed`` scored best."""

    chunks: tuple[Chunk, ...]
    seed: Chunk
    score: float
    trimmed: bool = False  # cut to a passage to fit the top hits' budget (``passages``)


def assemble_spans(
    records: Mapping[str, Sequence[Chunk]],
    scores: Mapping[str, float],
    matched: set[str],
    limit: int,
    *,
    span_chars: int = SPAN_CHARS,
    lead_chars: int = LEAD_CHARS,
) -> list[Span]:
    """The best ``limit`` hits, best first: spans of consecutive sections that never overlap.

    ``records`` holds each candidate record's sections; ``matched`` the sections that scored
    on their own (a query word, or meaning). The matched sections are walked best first (a
    record with none gives its opening section); any other section scores only through its
    record and never joins or opens a hit on its own.

    1. A section joins an earlier hit of its record when the span covering both (every
       section between included) stays within ``span_chars`` (``lead_chars`` for the first
       hit). Otherwise it opens a hit of its own, while fewer than ``limit`` exist.
    2. The first hit reads on: once opened, it takes in its record's neighbouring sections,
       the better scored first (the earlier on ties, towards the title), while it stays
       within ``lead_chars``. Here a section may score only through its record: the generic
       "Decision" beside the matching "Context", the title line that carries the date.
    3. A hit takes in its record's decision section (:data:`DECISION_HEADINGS`) when one
       comes after it and the span covering both stays within its cap: a record found by
       its "Options" carries what it decided, which :func:`~memsite.search.payloads.passages.trim`
       then cuts it to (issue 36: devset hybrid recall@5 0.923 -> 0.932, the ADRs read in
       place as records 0.958 -> 0.972; no corpus lost an answer).

    Measured on the development set (``docs/benchmarks.md``, hybrid recall@5 / MRR@10 /
    characters in the top 5, record weight 1): when every answering section joined its hit
    up to 2,000 characters, 0.914 / 0.733 / 6,429, the top 5 as long as five windows; the
    ``top_chars`` budget alone 0.879 / 0.727 / 5,490; a first hit joining up to 4,000
    characters 0.905 / 0.784 / 5,975; reading on as well 0.919 / 0.806 / 6,025 (to 3,000
    characters: 0.898 / 0.781 / 5,819): whoever finds the right record first gets the
    answering section with it. Without the budget the final rules give 0.948 / 0.832 at
    7,410 characters, what windows find at 7,778; a budget of 4,000 costs the bundled
    sample's paraphrased questions recall (0.740 → 0.717), whose top 5 hold 2,600 characters
    on average: at 5,000 the budget binds only where hits are long.

    The top hits' budget is no longer checked here but kept by cutting them afterwards
    (:func:`memsite.search.payloads.passages.fit`): bounding joins by it let a long first hit use
    the budget up before an answering section could join a later hit of its record. With
    joins bounded by the span alone and the cut after, hybrid recall@5 / MRR@10 went from
    0.912 / 0.837 to 0.940 / 0.843 at 4,646 characters (lexical 0.948 / 0.851 → 0.948 /
    0.854), and the project's own sets did not move.
    """
    ordered = {key: sorted(sections, key=lambda c: c.position) for key, sections in records.items()}
    ends = {
        key: [0, *accumulate(len(c.text) for c in sections)] for key, sections in ordered.items()
    }
    where = {c.id: (key, i) for key, sections in ordered.items() for i, c in enumerate(sections)}
    seeds = [
        c
        for sections in ordered.values()
        for c in ([c for c in sections if c.id in matched] or sections[:1])
    ]
    seeds.sort(key=lambda c: (-scores.get(c.id, 0.0), c.path, c.line))
    hits: list[_Growing] = []
    owner: dict[tuple[str, int], int] = {}  # (record, section index) -> its hit's number
    for seed in seeds:
        key, at = where[seed.id]
        if (key, at) in owner or _join(hits, owner, key, at, ends[key]):
            continue
        if len(hits) < limit:
            cap = span_chars if hits else lead_chars
            hit = _Growing(key, at, at, ends[key][at + 1] - ends[key][at], cap, seed)
            hits.append(hit)
            if len(hits) == 1:
                _read_on(hit, ordered[key], ends[key], scores)
            owner.update(((key, i), len(hits) - 1) for i in range(hit.low, hit.high + 1))
    for number, hit in enumerate(hits):  # 3. what the record decided, when it fits
        at = decision_after(ordered[hit.key], hit.high)
        if at is not None:
            _widen(hit, number, owner, at, ends[hit.key])
    return [
        Span(tuple(ordered[h.key][h.low : h.high + 1]), h.seed, scores.get(h.seed.id, 0.0))
        for h in hits
    ]


def decision_after(sections: Sequence[Chunk], after: int) -> int | None:
    """The index of the record's decision section (:data:`DECISION_HEADINGS`) after section
    ``after``, if any (also where :func:`~memsite.search.payloads.passages.trim` cuts a hit
    found before it)."""
    for at in range(after + 1, len(sections)):
        if " ".join(sections[at].heading.casefold().split()) in DECISION_HEADINGS:
            return at
    return None


@dataclass
class _Growing:
    """A hit while :func:`assemble_spans` builds it: sections ``low..high`` of one record,
    ``chars`` long, allowed to grow to ``cap``."""

    key: str
    low: int
    high: int
    chars: int
    cap: int
    seed: Chunk


def _join(
    hits: list[_Growing],
    owner: dict[tuple[str, int], int],
    key: str,
    at: int,
    ends: Sequence[int],
) -> bool:
    """Widen the first hit of record ``key`` that can take section ``at``; False if none can."""
    return any(
        hit.key == key and _widen(hit, number, owner, at, ends) for number, hit in enumerate(hits)
    )


def _widen(
    hit: _Growing, number: int, owner: dict[tuple[str, int], int], at: int, ends: Sequence[int]
) -> bool:
    """Widen ``hit`` (hit ``number``) to take section ``at`` of its record, with every
    section between, when that stays within its cap and no other hit holds one of them."""
    low, high = min(hit.low, at), max(hit.high, at)
    size = ends[high + 1] - ends[low]
    if size > hit.cap:
        return False
    if any(owner.get((hit.key, i), number) != number for i in range(low, high + 1)):
        return False  # another hit holds a section in between: hits never overlap
    hit.low, hit.high, hit.chars = low, high, size
    owner.update(((hit.key, i), number) for i in range(low, high + 1))
    return True


def _read_on(
    hit: _Growing, sections: Sequence[Chunk], ends: Sequence[int], scores: Mapping[str, float]
) -> None:
    """Widen ``hit`` by its better scored neighbour (the earlier on ties) while it fits."""
    while True:
        fits = [
            i
            for i in (hit.low - 1, hit.high + 1)
            if 0 <= i < len(sections)
            and ends[max(hit.high, i) + 1] - ends[min(hit.low, i)] <= hit.cap
        ]
        if not fits:
            return
        best = max(fits, key=lambda i: (scores.get(sections[i].id, 0.0), -i))
        hit.low, hit.high = min(hit.low, best), max(hit.high, best)
        hit.chars = ends[hit.high + 1] - ends[hit.low]
