"""The hits a search hands over, made of what the index found (issue 35).

The index finds and scores spans and says, as plain figures, what it holds of the query
(:class:`~memsite.search.ranking.Found`); here the first
:data:`~memsite.search.ranking.TOP_HITS` spans are cut to their share of
:data:`~memsite.search.ranking.TOP_CHARS` (:mod:`.passages`) and each hit is given the
measures of recall's floor (:mod:`.floor`). Pure: no Whoosh, and the index never calls up
into this room.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

from ..ranking import TOP_CHARS, TOP_HITS, Found, Hit, span_hit
from ..spans import LEAD_CHARS
from . import floor, neighbours, passages

# an activity hit and its neighbours hold up to twice an equal share of TOP_CHARS (while the
# top hits together fit it): on the day-log tune split, 1, 1.5, 2, 5 shares gave hybrid
# recall@5 0.859, 0.874, 0.889, 0.874 and all@5 0.600, 0.667, 0.733, 0.667
SHARE = 2.0


def build_hits(found: Found, root: Path | None = None) -> list[Hit]:
    """The hits of what the index found, best first: the top spans cut to fit
    :data:`TOP_CHARS` together, each hit carrying the floor's measures of the query. An
    activity hit is compact; with the tree's ``root``, a top one carries its session's
    neighbours in what its share of :data:`TOP_CHARS` leaves (:mod:`.neighbours`)."""
    if found.scores is None:  # a filter alone: nothing was ranked, nothing is cut
        return [
            neighbours.compact(span_hit(s, snippet))
            for s, snippet in zip(found.spans, found.snippets, strict=True)
        ]
    spans = passages.fit(
        found.spans, _weigher(found), found.scores, TOP_HITS, TOP_CHARS, LEAD_CHARS
    )
    whole = [span_hit(s, snippet) for s, snippet in zip(spans, found.snippets, strict=True)]
    # the floor measures what the index found, as before activities were shown compactly or
    # with their neighbours (words a neighbour holds are not what the hit was found by)
    measured = floor.measure(
        found.documents, found.frequencies, (h.text for h in whole), found.analyze
    )
    hits = [neighbours.compact(hit) for hit in whole]
    if root is not None:
        hits = _with_neighbours(hits, root)
    shared = {**dataclasses.asdict(measured), "documents": found.documents, "apart": found.apart}
    return [
        dataclasses.replace(hit, words=found.words.get(span.seed.id, 0.0), **shared)
        for span, hit in zip(spans, hits, strict=True)
    ]


def _with_neighbours(hits: list[Hit], root: Path) -> list[Hit]:
    """The top activity hits with their neighbours, each in what is left of :data:`SHARE`
    equal shares of :data:`TOP_CHARS` beside its own text, while the top hits together
    still fit it."""
    share = int(TOP_CHARS / TOP_HITS * SHARE)
    spare = TOP_CHARS - sum(len(h.text) for h in hits[:TOP_HITS])
    read = neighbours.reader(root)
    out = list(hits)
    # an entry a better hit shows (as itself or as a neighbour) is not carried again
    shown: set[str] = set()
    for rank, hit in enumerate(hits[:TOP_HITS]):
        shown.add(hit.record)
        room = min(spare, share - len(hit.text))
        if hit.kind != "activity" or room <= 0:
            continue
        out[rank], taken = neighbours.with_neighbours(hit, read(hit.path), room, frozenset(shown))
        spare -= len(out[rank].text) - len(hit.text)
        shown |= taken
    return out


def _weigher(found: Found) -> Callable[[str], float]:
    """What a passage holds of the query: the idf of each query word in it, as a share of
    all the query words' (0 to 1). The idf is BM25's, as the index's searcher gives it
    (``log(N / (df + 1)) + 1``), worked out only if a passage is weighed."""
    idf: dict[str, float] = {}

    def weigh(text: str) -> float:
        if not idf:
            n = found.documents
            idf.update({t: math.log(n / (df + 1)) + 1 for t, df in found.frequencies.items()})
        held = found.analyze(text)
        total = sum(idf.values())
        return sum(v for term, v in idf.items() if term in held) / total if total else 0.0

    return weigh
