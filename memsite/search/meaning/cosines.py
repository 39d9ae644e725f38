"""Query-time meaning (issue 6): how close a query, or a record, is to every stored section
and record, and the ranking signal made from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..ranking import Signal

if TYPE_CHECKING:
    import numpy as np

    from ..chunks import Chunk
    from .vectors import Store

# Meaning alone brings a section or record into the results only above this cosine
# similarity; below it, it only re-ranks what the words found. See docs/search.md.
FLOOR = 0.3


class Meaning:
    """How close one query is to every stored section and record (cosine similarity).

    ``sections`` and ``records`` are the query's cosines when already computed (by
    :func:`meanings`, for many queries at once); otherwise they are computed here.
    """

    def __init__(
        self,
        store: Store,
        query: np.ndarray,
        sections: np.ndarray | None = None,
        records: np.ndarray | None = None,
    ) -> None:
        self.store = store
        self.sections = _dot(store.matrix, query) if sections is None else sections
        self._query = query
        self._records = records
        self._record_scores: np.ndarray | None = None

    @property
    def query(self) -> np.ndarray:
        """The query's unit vector."""
        return self._query

    @property
    def record_scores(self) -> np.ndarray:
        """Each record's cosine: its mean vector's (its section's for a one-section record),
        or its closest section's after :meth:`by_best_section`. Computed when first asked,
        so a search, which scores records by their closest section, never multiplies the
        record matrix (3 ms a question at three years of memory)."""
        if self._record_scores is None:
            store = self.store
            scores = self.sections[store.single]
            scores[store.multi] = (
                _dot(store.record_matrix, self._query) if self._records is None else self._records
            )
            self._record_scores = scores
        return self._record_scores

    def by_best_section(self) -> Meaning:
        """Score each record by its closest section instead of its mean vector (in place).

        A record's vector is the mean of its sections', so a long record about several
        things sits between them and close to none: scored by its best section, a record is
        as close to a question as the part of it that answers (the way a window is). For a
        question, not for ``related``, which compares whole records. Measured on the
        development set of real decision records (``docs/benchmarks.md``): hybrid MRR@10
        0.826 → 0.837 at the same recall@5; the sample's paraphrased questions 0.740 /
        0.542 → 0.731 / 0.558.
        """
        import numpy as np

        store = self.store
        if not len(store.uids):
            return self
        best = np.full(len(store.record_ids), -1.0, dtype=self.sections.dtype)
        np.maximum.at(best, store.record_index, self.sections)
        self._record_scores = best
        return self

    def best_sections(self, count: int, floor: float | None = None) -> list[tuple[str, str]]:
        """``(path, uid)`` of up to ``count`` sections closest to the query, best first,
        leaving out those less similar than ``floor`` (default :data:`FLOOR`)."""
        floor = FLOOR if floor is None else floor
        return [
            (self.store.paths[i], self.store.uids[i])
            for i in _top(self.sections, count)
            if self.sections[i] >= floor
        ]

    def best_records(self, count: int, floor: float | None = None) -> list[tuple[str, str]]:
        """``(path, record)`` of up to ``count`` records closest to the query, best first,
        leaving out those less similar than ``floor`` (default :data:`FLOOR`)."""
        floor = FLOOR if floor is None else floor
        return [
            (self.store.record_paths[i], self.store.record_ids[i])
            for i in _top(self.record_scores, count)
            if self.record_scores[i] >= floor
        ]

    def signal(self, candidates: Iterable[Chunk], weight: float = 1.0) -> Signal:
        """The semantic ranking signal over ``candidates``: cosines min-max scaled to 0..1
        among the candidates, per section and per record (issue 6, ``docs/search.md``)."""
        uids = list(dict.fromkeys(c.id for c in candidates if c.id in self.store.rows))
        section = minmax(self.sections[[self.store.rows[u] for u in uids]])
        records = [self.store.records[self.store.rows[u]] for u in uids]
        return Signal(
            "semantic",
            dict(zip(uids, section.tolist(), strict=True)),
            self.scaled_records(records),
            weight,
        )

    def scaled_records(self, records: Iterable[str]) -> dict[str, float]:
        """Cosines of ``records`` min-max scaled to 0..1 among them (unknown ones left out)."""
        known = [r for r in dict.fromkeys(records) if r in self.store.record_rows]
        scaled = minmax(self.record_scores[[self.store.record_rows[r] for r in known]])
        return dict(zip(known, scaled.tolist(), strict=True))


BLOCK = 256  # queries per product in ``meanings``: 20,000 sections x 256 is 20 MB


def meanings(store: Store, queries: np.ndarray) -> list[Meaning]:
    """``Meaning(store, q)`` for each row ``q`` of ``queries``, with one product per block of
    queries instead of one per query. The cosines are bit for bit those of ``Meaning``: the
    same einsum reduction, batched (a BLAS product would differ in the last bits and could
    reorder near-ties)."""
    import numpy as np

    found: list[Meaning] = []
    for start in range(0, len(queries), BLOCK):
        block = queries[start : start + BLOCK]
        sections = np.einsum("ij,kj->ki", store.matrix, block)
        records = np.einsum("ij,kj->ki", store.record_matrix, block)
        found += [Meaning(store, query, sections[i], records[i]) for i, query in enumerate(block)]
    return found


def record_meanings(store: Store, records: Iterable[str]) -> dict[str, Meaning]:
    """How close each of ``records`` is to every other (``Meaning`` of its vector), for the
    records the store holds, batched by :func:`meanings`."""
    import numpy as np

    vectors = {r: v for r in records if (v := store.record_vector(r)) is not None}
    if not vectors:
        return {}
    return dict(zip(vectors, meanings(store, np.stack(list(vectors.values()))), strict=True))


def _dot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` without BLAS: multi-threaded BLAS is 3-6x slower on a small box."""
    import numpy as np

    return np.einsum("ij,j->i", matrix, vector)


def _top(scores: np.ndarray, count: int) -> list[int]:
    import numpy as np

    if count <= 0 or scores.size == 0:
        return []
    count = min(count, scores.size)
    part = np.argpartition(-scores, count - 1)[:count]
    return part[np.argsort(-scores[part], kind="stable")].tolist()


def cosine(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine similarity of one unit vector with each unit row of ``matrix``."""
    return _dot(matrix, query)


def minmax(scores: np.ndarray) -> np.ndarray:
    """Scores rescaled to 0..1 (all equal → all 0, so a flat signal adds nothing)."""
    import numpy as np

    if scores.size == 0:
        return scores.astype(np.float32)
    low, high = float(scores.min()), float(scores.max())
    if high <= low:
        return np.zeros_like(scores, dtype=np.float32)
    return ((scores - low) / (high - low)).astype(np.float32)
