"""Recall's relevance floor (issue 24): how often recall hands over nothing for a prompt about
nothing in memory, and how often it still holds the answer to a question about it::

    python bench/bench_floor.py [--devset ../shared/devset] [--half held-out|tuning]

On-topic prompts are the labelled questions: ``bench/queries-sample.jsonl`` and
``bench/semantic_queries.jsonl`` over the bundled sample memory, each devset corpus's
``queries.jsonl`` over it, and the day-log corpus of ``bench/devset/`` (its ``test``
split held out, ``tune`` in the tuning half; the meaning floor is fitted on it). Off-topic prompts are
``bench/floor_offtopic.jsonl``: chatter, everyday coding requests, requests sharing common
words with any memory (``corpus: "*"``, asked of every memory) and, per memory, requests
sharing its own words. Every prompt falls
in one half by the hash of its text; ``FLOOR_WEIGHTS`` and ``FLOOR_BIAS`` (the lexical
setting), ``MEANING_WEIGHTS`` and ``MEANING_BIAS`` (hybrid: recall ranked with meaning) were
fitted on the tuning half, and the figures to report are the held-out half's (the default).

Per memory set and setting, and for all of them together, it prints: off-topic prompts given
nothing; on-topic prompts whose recall holds an answer (of all, and of those whose recall
held one without the floor), and how many of those the floor refused.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from memsite import Memory
from memsite.search import meaning
from memsite.search.chunks import Chunk, chunk_file
from memsite.search.evaluation.metrics import Labelled, judge, read_queries
from memsite.search.payloads.floor import (
    FLOOR_BIAS,
    FLOOR_DOCS,
    FLOOR_WEIGHTS,
    MEANING_BIAS,
    MEANING_WEIGHTS,
)

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent


# the sample's questions written to share no word with their answers (``semantic_queries``)
PARAPHRASED = {q.query for q in read_queries(BENCH / "semantic_queries.jsonl")}


def tuning(prompt: str) -> bool:
    """The fixed split: a prompt is in the tuning half when its hash's first byte is even."""
    return hashlib.sha1(prompt.encode("utf-8")).digest()[0] % 2 == 0


def memories(devset: Path) -> Iterator[tuple[str, Path, list[Labelled]]]:
    """``(name, root, on-topic questions)`` of the sample memory and each devset corpus."""
    sample = [*read_queries(BENCH / "queries-sample.jsonl")]
    sample += read_queries(BENCH / "semantic_queries.jsonl")
    yield "sample", REPO / "memory", sample
    for corpus in sorted(p for p in devset.iterdir() if (p / "queries.jsonl").is_file()):
        yield corpus.name, corpus / "memory", read_queries(corpus / "queries.jsonl")


def daylogs(want: bool) -> Iterator[tuple[str, Path, list[Labelled]]]:
    """``(name, root, questions)`` of each day-log corpus of ``bench/devset/`` (issue 36), its
    ``tune`` split in the tuning half, ``test`` held out; ``fit_floor.py`` fits the meaning
    floor on its ``tune`` split."""
    for corpus in sorted(p for p in (BENCH / "devset").iterdir() if p.is_dir()):
        path = corpus / "queries.jsonl"
        splits = [json.loads(line).get("split") for line in path.read_text("utf-8").splitlines()]
        questions = read_queries(path)
        keep = [q for q, split in zip(questions, splits, strict=True) if (split == "tune") == want]
        yield corpus.name, corpus / "memory", keep


def off_topic(name: str) -> list[str]:
    lines = (BENCH / "floor_offtopic.jsonl").read_text("utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [row["q"] for row in rows if row["corpus"] in ("*", name)]


def measure(root: Path, cache_dir: Path, on: list[Labelled], off: list[str], lexical: bool):
    """``(off-topic given nothing, on-topic holding an answer, ... without the floor)``."""

    @cache
    def chunks_of(rel: str) -> list[Chunk]:
        path = root / rel
        return chunk_file(rel, path.read_text("utf-8")) if path.is_file() else []

    with Memory(root, cache_dir=cache_dir, notify=lambda _: None) as memory:
        empty = [not memory.recall(q, lexical=lexical).hits for q in off]
        held, unfloored = [], []
        for q in on:
            recalled = memory.recall(q.query, lexical=lexical).hits
            held.append(judge(q, recalled, len(recalled), chunks_of).found > 0)
            # what recall held before issue 24: the same hits, never withheld
            before = memory.search(q.query, limit=8, lexical=lexical)
            unfloored.append(judge(q, before, len(before), chunks_of).found > 0 or held[-1])
    return empty, held, unfloored


def measure_year(tmp: Path, lexical: bool) -> tuple[list[bool], list[bool], list[bool]]:
    """``measure`` over a generated year: its labelled questions are all of one kind (no
    half is held out of a memory nothing was tuned on)."""
    import random

    import corpus

    root = tmp / "year"
    if not (tmp / "year.jsonl").is_file():  # built once for both settings
        questions = corpus.build(root, 20_000, 365, 1)
        random.Random(1).shuffle(questions)
        lines = [json.dumps(q) for q in questions[:150]]
        (tmp / "year.jsonl").write_text("\n".join(lines), "utf-8")
    on = read_queries(tmp / "year.jsonl")
    return measure(root, tmp / "year-cache", on, off_topic("*"), lexical=lexical)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devset", type=Path, default=REPO.parent / "shared" / "devset")
    parser.add_argument("--half", choices=("held-out", "tuning"), default="held-out")
    parser.add_argument(
        "--year",
        action="store_true",
        help="also a generated year (bench/corpus.py, 20,000 entries): 150 of its questions,"
        " the shared off-topic prompts",
    )
    args = parser.parse_args()
    want = args.half == "tuning"
    settings = [("lexical", True)] + ([("hybrid", False)] if meaning.available() else [])
    totals: dict[tuple[str, str], list[list[bool]]] = {}
    for name, weights, bias in [
        ("lexical", FLOOR_WEIGHTS, FLOOR_BIAS),
        ("with meaning", MEANING_WEIGHTS, MEANING_BIAS),
    ]:
        weighed = ", ".join(f"{key} {weight:+}" for key, weight in weights.items())
        print(f"recall floor, {name}: {weighed}, bias {bias:+}")
    print(f"(no floor at {FLOOR_DOCS} documents or fewer), {args.half} half")
    with tempfile.TemporaryDirectory() as tmp:
        for name, root, on in memories(args.devset):
            on = [q for q in on if tuning(q.query) == want]
            off = [q for q in off_topic(name) if tuning(q) == want]
            group = "sample" if name == "sample" else "devset"
            for setting, lexical in settings:
                found = measure(root, Path(tmp) / name, on, off, lexical)
                into = totals.setdefault((group, setting), [[], [], []])
                for total, part in zip(into, found, strict=True):
                    total += part
                if name == "sample":  # the paraphrased questions apart from the others
                    for kind in ("questions", "paraphrased"):
                        keep = [(q.query in PARAPHRASED) == (kind == "paraphrased") for q in on]
                        into = totals.setdefault((f"  {kind}", setting), [[], [], []])
                        for total, part in zip(into[1:], found[1:], strict=True):
                            total += [x for x, k in zip(part, keep, strict=True) if k]
        for name, root, on in daylogs(want):
            off = [q for q in off_topic(name) if tuning(q) == want]
            for setting, lexical in settings:
                found = measure(root, Path(tmp) / name, on, off, lexical)
                into = totals.setdefault(("day logs", setting), [[], [], []])
                for total, part in zip(into, found, strict=True):
                    total += part
        if args.year:
            for setting, lexical in settings:
                totals[("year", setting)] = [*measure_year(Path(tmp), lexical)]
    # every labelled memory together (the generated year and the sample's parts apart)
    for setting, _ in settings:
        parts = [totals[(g, setting)] for g in ("sample", "devset", "day logs")]
        totals[("all", setting)] = [sum((part[i] for part in parts), []) for i in range(3)]
    print(f"  {'':22} {'off: nothing':>13} {'on: answer':>11} {'of found':>9} {'refused':>8}")
    for (group, setting), (empty, held, unfloored) in totals.items():
        kept = sum(held) / max(sum(unfloored), 1)
        off = f"{sum(empty) / len(empty):>8.2f} ({len(empty):>3})" if empty else " " * 14
        refused = f"{sum(unfloored) - sum(held)} of {sum(unfloored)}"
        print(
            f"  {group + ', ' + setting:22} {off}"
            f" {sum(held) / len(held):>6.2f} ({len(held):>2}) {kept:>9.2f} {refused:>9}"
        )


if __name__ == "__main__":
    main()
