"""Fit recall's relevance floor (``FLOOR_WEIGHTS``, ``FLOOR_BIAS`` in
``memsite/search/payloads/floor.py``) on the tuning half of ``bench/bench_floor.py``'s
labelled prompts, and print the weights to paste there::

    python bench/fit_floor.py [--devset ../shared/devset]

Prompts are the same as ``bench_floor.py``'s, in its tuning half (the first byte of each
prompt's SHA-1 even), plus 150 questions of a generated year (``bench/corpus.py``) that
``bench_floor.py --year`` does not report on. On-topic prompts count only when the hybrid
search (lexical without the semantic extra) holds their answer in its first 8 hits: the floor
decides whether to recall, not what. The measures are the fields every hit carries
(``matched``, ``unknown``, ``rarest``, ``second`` as :func:`floor.relevance` reads them),
of every prompt with a hit (the coverage rule, which refuses some of them, is not fitted).
A logistic regression, each (memory group, label) pair weighed alike, L2 0.01 on
standardised measures; about 40 seconds.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
from bench_floor import REPO, memories, off_topic, tuning

from memsite import Memory
from memsite.search import meaning
from memsite.search.chunks import Chunk, chunk_file
from memsite.search.evaluation.metrics import judge, read_queries
from memsite.search.payloads import floor
from memsite.search.payloads.recall import RECALL_LIMIT
from memsite.search.payloads.standing import ROOM

NAMES = list(floor.FLOOR_WEIGHTS)  # the order of signals()


def signals(hits) -> list[float] | None:  # type: ignore[no-untyped-def]
    """The floor's measures of a prompt's hits, in FLOOR_WEIGHTS' order (None for no hits)."""
    return list(floor.signals(hits).values()) if hits else None


def rows_of(root: Path, cache_dir: Path, on, off: list[str], group: str):  # type: ignore[no-untyped-def]
    @cache
    def chunks_of(rel: str) -> list[Chunk]:
        path = root / rel
        return chunk_file(rel, path.read_text("utf-8")) if path.is_file() else []

    lexical = not meaning.available()
    with Memory(root, cache_dir=cache_dir, notify=lambda _: None) as memory:
        asked = RECALL_LIMIT + ROOM  # what recall asks the search for
        for q in off:
            yield group, 0, signals(memory.search(q, limit=asked, lexical=True))
        for q in on:
            found = memory.search(q.query, limit=8, lexical=lexical)
            if judge(q, found, len(found), chunks_of).found:
                yield group, 1, signals(memory.search(q.query, limit=asked, lexical=True))


def fit(rows, l2: float = 0.01, steps: int = 3000, rate: float = 0.5):  # type: ignore[no-untyped-def]
    rows = [r for r in rows if r[2] is not None]
    x = np.array([r[2] for r in rows], float)
    y = np.array([r[1] for r in rows], float)
    count = Counter((g, label) for g, label, _ in rows)
    w = np.array([1.0 / count[(g, label)] for g, label, _ in rows])
    mean, std = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mean) / std, np.ones((len(x), 1))])
    b = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ b))
        b -= rate * (z.T @ (w * (p - y)) / w.sum() + l2 * np.r_[b[:-1], 0])
    coef = b[:-1] / std
    return coef, b[-1] - float((coef * mean).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devset", type=Path, default=REPO.parent / "shared" / "devset")
    args = parser.parse_args()
    import corpus

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, root, on in memories(args.devset):
            on = [q for q in on if tuning(q.query)]
            off = [q for q in off_topic(name) if tuning(q)]
            group = "sample" if name == "sample" else "devset"
            rows += rows_of(root, Path(tmp) / name, on, off, group)
        year = Path(tmp) / "year"
        questions = corpus.build(year, 20_000, 365, 1)
        random.Random(1).shuffle(questions)  # bench_floor.py --year reports on the first 150
        (Path(tmp) / "year.jsonl").write_text("\n".join(map(json.dumps, questions[150:300])))
        on = read_queries(Path(tmp) / "year.jsonl")
        off = [q for q in off_topic("*") if tuning(q)]
        rows += rows_of(year, Path(tmp) / "year-cache", on, off, "year")
    coef, bias = fit(rows)
    weights = ", ".join(f'"{n}": {c:.2f}' for n, c in zip(NAMES, coef, strict=True))
    print(f"FLOOR_WEIGHTS = {{{weights}}}\nFLOOR_BIAS = {bias:.2f}")


if __name__ == "__main__":
    main()
