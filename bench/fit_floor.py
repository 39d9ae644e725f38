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
standardised measures.

With the semantic extra it fits the meaning floor too (``MEANING_WEIGHTS``,
``MEANING_BIAS``): the same prompts searched with meaning, their hits' measures and
``apart``, with on-topic prompts weighed 1 to 4 times in the fit, keeping the weight whose
worst tuning-half rate (sample and devset, off-topic given nothing and on-topic kept, the
coverage rule applied) is highest. About 55 seconds.
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
MEANING_NAMES = list(floor.MEANING_WEIGHTS)  # ...with ``apart``, ranked with meaning
ON_WEIGHTS = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0)  # on-topic weights tried for the meaning floor


def signals(hits) -> list[float] | None:  # type: ignore[no-untyped-def]
    """The floor's measures of a prompt's hits, in signals()' order (None for no hits)."""
    return list(floor.signals(hits).values()) if hits else None


def rows_of(root: Path, cache_dir: Path, on, off: list[str], group: str, lexical: bool):  # type: ignore[no-untyped-def]
    """``(group, label, measures, gated)`` of each prompt: ``gated`` when the floor's
    coverage rule (not fitted) refuses it whatever the weights."""

    @cache
    def chunks_of(rel: str) -> list[Chunk]:
        path = root / rel
        return chunk_file(rel, path.read_text("utf-8")) if path.is_file() else []

    def row(label: int, prompt: str):  # type: ignore[no-untyped-def]
        hits = memory.search(prompt, limit=asked, lexical=lexical)
        gated = not hits or not floor.covers(hits[0])
        return group, label, signals(hits), gated

    with Memory(root, cache_dir=cache_dir, notify=lambda _: None) as memory:
        asked = RECALL_LIMIT + ROOM  # what recall asks the search for
        for q in off:
            yield row(0, q)
        for q in on:
            found = memory.search(q.query, limit=8, lexical=not meaning.available())
            if judge(q, found, len(found), chunks_of).found:
                yield row(1, q.query)


def fit(rows, on_weight: float = 1.0, l2: float = 0.01, steps: int = 3000, rate: float = 0.5):  # type: ignore[no-untyped-def]
    rows = [r for r in rows if r[2] is not None]
    x = np.array([r[2] for r in rows], float)
    y = np.array([r[1] for r in rows], float)
    count = Counter((g, label) for g, label, _, _ in rows)
    w = np.array([(on_weight if label else 1.0) / count[(g, label)] for g, label, _, _ in rows])
    mean, std = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mean) / std, np.ones((len(x), 1))])
    b = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ b))
        b -= rate * (z.T @ (w * (p - y)) / w.sum() + l2 * np.r_[b[:-1], 0])
    coef = b[:-1] / std
    return coef, b[-1] - float((coef * mean).sum())


def rates(rows, coef, bias) -> list[float]:  # type: ignore[no-untyped-def]
    """Off-topic prompts given nothing and on-topic ones kept, of the sample and the devset."""
    out = []
    for group in ("sample", "devset"):
        for label in (0, 1):
            mine = [r for r in rows if r[0] == group and r[1] == label]
            kept = [
                not gated and m is not None and bias + float(np.dot(coef, m)) >= 0
                for _, _, m, gated in mine
            ]
            out.append(sum(kept) / len(kept) if label else 1 - sum(kept) / len(kept))
    return out


def printed(names: list[str], coef, bias) -> str:  # type: ignore[no-untyped-def]
    weights = ", ".join(f'"{n}": {c:.2f}' for n, c in zip(names, coef, strict=True))
    return f"{{{weights}}}", f"{bias:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devset", type=Path, default=REPO.parent / "shared" / "devset")
    args = parser.parse_args()
    import corpus

    settings = [("FLOOR", True)] + ([("MEANING", False)] if meaning.available() else [])
    rows: dict[str, list] = {name: [] for name, _ in settings}
    with tempfile.TemporaryDirectory() as tmp:
        for name, root, on in memories(args.devset):
            on = [q for q in on if tuning(q.query)]
            off = [q for q in off_topic(name) if tuning(q)]
            group = "sample" if name == "sample" else "devset"
            for setting, lexical in settings:
                cache_dir = Path(tmp) / name
                rows[setting] += rows_of(root, cache_dir, on, off, group, lexical)
        year = Path(tmp) / "year"
        questions = corpus.build(year, 20_000, 365, 1)
        random.Random(1).shuffle(questions)  # bench_floor.py --year reports on the first 150
        (Path(tmp) / "year.jsonl").write_text("\n".join(map(json.dumps, questions[150:300])))
        on = read_queries(Path(tmp) / "year.jsonl")
        off = [q for q in off_topic("*") if tuning(q)]
        for setting, lexical in settings:
            rows[setting] += rows_of(year, Path(tmp) / "year-cache", on, off, "year", lexical)
    coef, bias = fit(rows["FLOOR"])
    weights, constant = printed(NAMES, coef, bias)
    print(f"FLOOR_WEIGHTS = {weights}\nFLOOR_BIAS = {constant}")
    if "MEANING" in rows:
        # the on-topic weight whose fit keeps the worst of the four tuning rates highest
        tried = []
        for on_weight in ON_WEIGHTS:
            coef, bias = fit(rows["MEANING"], on_weight)
            found = rates(rows["MEANING"], coef, bias)
            print(
                f"# on-topic weight {on_weight}: tuning half "
                + " / ".join(f"{r:.2f}" for r in found)
            )
            tried.append((min(found), -on_weight, coef, bias))
        _, _, coef, bias = max(tried, key=lambda t: t[:2])
        weights, constant = printed(MEANING_NAMES, coef, bias)
        print(f"MEANING_WEIGHTS = {weights}\nMEANING_BIAS = {constant}")


if __name__ == "__main__":
    main()
