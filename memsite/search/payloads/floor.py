"""Recall's relevance floor (issue 24): whether a prompt is about the memory at all.

Recall runs on every prompt, so what it hands over unasked is paid for on every turn. The
search measures each query (:func:`measure`, the fields ``asked``, ``terms``, ``rarest``,
``covered`` and ``words`` of every hit), and :func:`relevance` weighs those measures; pure,
with no Whoosh, so the index only collects them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..ranking import Hit

# Recall's relevance floor (issue 24): recall, which runs on every prompt, hands over nothing
# unless the prompt looks like it is about the memory, by what the search already knows
# (fields of every hit):
#   - how well its words matched: the raw BM25F of the best section (``words``: before fusion
#     divides it by the query's best, so it says how well the words matched at all), in units
#     of ln(N / FLOOR_DOCS), N the index's documents (at most FLOOR_GROWS_TO), since a word's
#     idf grows with ln N;
#   - how much of the prompt the memory never says: the share of its words no document holds
#     ("center a div with CSS flexbox", asked of a memory of ADRs);
#   - how rare, in this memory, the rarest word it holds is (idf over ln N: "argon2id" 0.9,
#     "use" 0.1): chatter and everyday requests share common words with any memory;
# weighed (FLOOR_WEIGHTS, FLOOR_BIAS: a logistic fit), their sum must be at least 0; and one
# of the first FLOOR_HITS hits must hold FLOOR_COVERED of the prompt's words, by idf
# (``covered``): a long request that shares a few words with many entries, none of them
# about it, is not about the memory. A memory of FLOOR_DOCS documents or fewer (a few
# entries, whose whole recall is short) has no floor.
# Fitted on the tuning half of ``bench/bench_floor.py``'s labelled prompts (sample and six
# devset corpora of 277-539 documents: FLOOR_DOCS is not measured there; 50 keeps recall in
# the tests' memories of a few entries), reported on the held-out half (docs/benchmarks.md).
# What it does not do: a paraphrase sharing no rare word with its answer ("which metrics
# decide whether to continue ramping up") recalls nothing, and so does a one-word lookup of
# a word half the memory uses ("mongo": ``search`` is for that). The prompt's length helps
# a fit on these prompts but lets any long request through, so it is not a signal; the
# embedding model's cosine did not separate the two sets (off-topic 0.13-0.59, on-topic
# 0.20-0.60 on the sample; nor its distance from the memory's mean cosine), so the floor is
# the same with or without the model.
FLOOR_DOCS = 50
FLOOR_WEIGHTS = {"matched": 3.0, "unknown": -0.7, "rarest": 5.7}
FLOOR_BIAS = -9.75
FLOOR_HITS = 8  # coverage: one of the first this many hits
# Past this many documents the unit stops growing: a topic a team keeps working on recurs, so
# its words' idf stops growing with the memory. Measured on a generated year (20,074
# documents, `bench/bench_floor.py --year`): uncapped, 0.34 of the answers kept.
FLOOR_GROWS_TO = 1_000
FLOOR_COVERED = 0.25


def relevance(hits: Sequence[Hit]) -> float:
    """How much the query looks like it is about the memory: at least 0 to recall at all."""
    if not hits:
        return -math.inf
    documents = max(hit.documents for hit in hits)
    if documents <= FLOOR_DOCS:
        return math.inf
    unit = math.log(min(documents, FLOOR_GROWS_TO) / FLOOR_DOCS)
    first = hits[0]
    asked = max(first.asked, first.terms, 1)
    signals = {
        "matched": math.log1p(max(hit.words for hit in hits) / unit),
        "unknown": (asked - first.terms) / asked,
        "rarest": first.rarest,
    }
    if first.covered < FLOOR_COVERED:
        return -math.inf
    return FLOOR_BIAS + sum(FLOOR_WEIGHTS[name] * value for name, value in signals.items())


def relevant_enough(hits: Sequence[Hit]) -> bool:
    """Whether the hits are worth handing over unasked (recall's floor)."""
    return relevance(hits) >= 0


@dataclass(frozen=True)
class Measures:
    """What the floor needs of a query beside its hits' scores: how many words it has
    (``asked``), how many the index holds (``terms``), the idf of the rarest one it holds
    as a share of ln N (1: a word of one document), and the largest share of its words, by
    idf, that one of the first FLOOR_HITS hits holds (``covered``)."""

    asked: int
    terms: int
    rarest: float
    covered: float


def measure(
    documents: int,
    frequencies: Mapping[str, int],
    texts: Iterable[str],
    words_in: Callable[[str], set[str]],
) -> Measures:
    """The measures of a query whose words have the document ``frequencies`` in an index of
    ``documents``, given its hits' ``texts`` in order; ``words_in`` gives a text's words as
    the index analyses them. A word no document holds weighs ln N."""
    idf = {w: max(math.log(max(documents, 1) / (df + 1)), 0.0) for w, df in frequencies.items()}
    held = [w for w, df in frequencies.items() if df]
    scale = math.log(documents) if documents > 1 else 1.0
    total = sum(idf.values()) or 1.0
    covered = max(
        (
            sum(idf.get(w, 0.0) for w in words_in(text)) / total
            for text in itertools.islice(texts, FLOOR_HITS)
        ),
        default=0.0,
    )
    return Measures(
        asked=len(frequencies),
        terms=len(held),
        rarest=max((idf[w] / scale for w in held), default=0.0),
        covered=covered,
    )
