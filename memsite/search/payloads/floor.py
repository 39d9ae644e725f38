"""Recall's relevance floor (issue 24): whether a prompt is about the memory at all.

Recall runs on every prompt, so what it hands over unasked is paid for on every turn. The
search measures each query (:func:`measure`, the fields ``asked``, ``terms``, ``rarest``,
``covered``, ``second`` and ``words`` of every hit, and ``apart`` when it ranked with
meaning), and :func:`relevance` weighs those measures; pure, with no Whoosh, so the index
only collects them.
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
#   - how rare the second rarest word is that the best-covering hit holds beside it (``second``):
#     a question about an entry shares two of its words ("argon2id parameters"), a request
#     from another domain one, by chance ("rotate an image": a memory that rotates keys);
# weighed (FLOOR_WEIGHTS, FLOOR_BIAS: a logistic fit), their sum must be at least 0; and one
# of the first FLOOR_HITS hits must hold FLOOR_COVERED of the prompt's words, by idf
# (``covered``): a long request that shares a few words with many entries, none of them
# about it, is not about the memory. Ranked with meaning, a word no document holds counts
# against that share only when the prompt is no closer to the memory than to everyday
# requests (``apart`` at most 0): "what did we decide about tokens and authentication",
# asked of a memory that says "auth", holds no "authentication", and its meaning, not its
# spelling, says it is about the memory (issue 36); the words it holds must still be
# FLOOR_COVERED in one hit (``spelled``), and be at least half its words. A word no document
# holds that the memory abbreviates is held, as the memory spells it: the index measures
# "authentication" as "auth" when the memory says "auth" (a word it begins, of 4 letters or
# more and at most half of it: never "read" for "readme"), so by words alone too that
# question is about the memory (issue 36; the weights refitted with it). A word is held when
# a document holds it in any field, its heading included, and a dotted name's snake_case
# parts are words the index holds (issue 36: both were measured as words no document holds;
# refitted with them, the tuning half measured worse, so the weights are kept). A memory of
# FLOOR_DOCS documents or fewer (a few entries, whose whole recall is short) has no floor.
# Fitted by ``bench/fit_floor.py`` on the tuning half of ``bench/bench_floor.py``'s labelled
# prompts (the sample, six devset corpora of 277-539 documents, and 150 questions of a
# generated year: FLOOR_DOCS is not measured there; 50 keeps recall in the tests' memories of
# a few entries), reported on the held-out half (docs/benchmarks.md): off-topic prompts given
# nothing 0.88-0.97 (lexical; the day logs, never fitted on, 0.88), answers kept 0.90
# (devset), 0.91 (the sample's questions), 0.67 (year).
# Words alone miss a paraphrase sharing no rare word with its answer ("why are quick retries
# of a renewal not treated as theft": 0.67 of the sample's paraphrased questions kept), and a
# one-word lookup of a word half the memory uses ("mongo": ``search`` is for that). The
# prompt's length helps a fit on these prompts but lets any long request through, so it is
# not a signal; the embedding model's cosine alone (of the closest section, of the lexical
# best hit's record, its rank, and the memory's mean) did not separate the two sets.
FLOOR_DOCS = 50
FLOOR_WEIGHTS = {"matched": 2.49, "unknown": -1.47, "rarest": 2.97, "second": 1.41}
FLOOR_BIAS = -7.41
# Ranked with meaning, the floor weighs a fifth measure, with weights of its own: ``apart``
# (``meaning.apart``), how much closer the prompt is to the memory's closest sections than to
# the closest of a few hundred everyday requests (``search/meaning/everyday.txt``). A
# paraphrase is closer to the memory; a request from another domain sharing a few of its
# words is as close to everyday requests. Fitted by the same script, on the day logs' tuning
# split too, each fit moved to issue 36's operating point (each group's tuning off-topic
# prompts given nothing at least 0.90, the most answers kept), held out: off-topic given
# nothing 0.90 (sample), 0.92 (devset), 0.88 (year), 0.79 (day logs), answers kept 0.91
# (the sample: its questions 0.96, its paraphrases 0.88), 0.96 (devset), 0.89 (year), 1.00
# (day logs). Issue 36's 0.97 is not reached: docs/benchmarks.md says what was measured.
MEANING_WEIGHTS = {
    "matched": 1.60,
    "unknown": -1.22,
    "rarest": 2.97,
    "second": 1.38,
    "apart": 14.78,
}
MEANING_BIAS = -4.60
FLOOR_HITS = 8  # coverage: one of the first this many hits
# Past this many documents the unit stops growing: a topic a team keeps working on recurs, so
# its words' idf stops growing with the memory. Measured on a generated year (20,074
# documents, `bench/bench_floor.py --year`): uncapped, 0.34 of the answers kept.
FLOOR_GROWS_TO = 1_000
FLOOR_COVERED = 0.25
# Ranked with meaning, the coverage rule's share is chosen with MEANING_WEIGHTS, among a few
# (bench/fit_floor.py): the tuning half cannot tell 0.22 from 0.25, and the larger is kept.
MEANING_COVERED = 0.25


def signals(hits: Sequence[Hit]) -> dict[str, float]:
    """The measures :data:`FLOOR_WEIGHTS` weighs, of a query's (non-empty) ``hits`` in an
    index of more than FLOOR_DOCS documents, and ``apart`` when they were ranked with
    meaning (:data:`MEANING_WEIGHTS`); ``bench/fit_floor.py`` fits the weights on them."""
    unit = math.log(min(max(hit.documents for hit in hits), FLOOR_GROWS_TO) / FLOOR_DOCS)
    first = hits[0]
    asked = max(first.asked, first.terms, 1)
    measured = {
        "matched": math.log1p(max(hit.words for hit in hits) / unit),
        "unknown": (asked - first.terms) / asked,
        "rarest": first.rarest,
        "second": first.second,
    }
    if first.apart is not None:
        measured["apart"] = first.apart
    return measured


def relevance(hits: Sequence[Hit]) -> float:
    """How much the query looks like it is about the memory: at least 0 to recall at all."""
    if not hits:
        return -math.inf
    if max(hit.documents for hit in hits) <= FLOOR_DOCS:
        return math.inf
    if not covers(hits[0]):
        return -math.inf
    measured = signals(hits)
    weights, bias = (
        (MEANING_WEIGHTS, MEANING_BIAS) if "apart" in measured else (FLOOR_WEIGHTS, FLOOR_BIAS)
    )
    return bias + sum(weights[name] * value for name, value in measured.items())


def covered_enough(hits: Sequence[Hit], share: float | None = None) -> bool:
    """Whether the hits may pass the coverage rule ranked with meaning (one of the first
    FLOOR_HITS holds ``share`` of the prompt's words, or of those the index holds, which
    meaning may admit), or the memory has no floor: a lexical search asks it before recall
    loads the model for the rest of the floor (MEANING_COVERED unless ``share`` is given)."""
    if not hits:
        return False
    if max(hit.documents for hit in hits) <= FLOOR_DOCS:
        return True
    share = MEANING_COVERED if share is None else share
    return hits[0].covered >= share or _spelled(hits[0], share)


def covers(first: Hit, share: float | None = None) -> bool:
    """The coverage rule: the hit holding most of the prompt holds ``share`` of its words
    by idf (FLOOR_COVERED by words alone, MEANING_COVERED ranked with meaning); ranked with
    meaning and closer to the memory than to everyday requests, of the words the index
    holds (issue 36)."""
    if share is None:
        share = FLOOR_COVERED if first.apart is None else MEANING_COVERED
    if first.covered >= share:
        return True
    return first.apart is not None and first.apart > 0 and _spelled(first, share)


def _spelled(first: Hit, share: float) -> bool:
    """The hit holding most of the words the index holds holds ``share`` of them, and the
    index holds at least half the prompt's words: a long request most of whose words the
    memory never says never loads the model."""
    return first.spelled >= share and 2 * first.terms >= first.asked


def relevant_enough(hits: Sequence[Hit]) -> bool:
    """Whether the hits are worth handing over unasked (recall's floor)."""
    return relevance(hits) >= 0


@dataclass(frozen=True)
class Measures:
    """What the floor needs of a query beside its hits' scores: how many words it has
    (``asked``), how many the index holds (``terms``), the idf of the rarest one it holds
    as a share of ln N (1: a word of one document), the largest share of its words, by
    idf, that one of the first FLOOR_HITS hits holds (``covered``), and the idf, as a share
    of ln N, of the second rarest of its words that this hit holds (``second``; 0 when it
    holds one), and the largest share one of those hits holds of the words the index holds
    (``spelled``)."""

    asked: int
    terms: int
    rarest: float
    covered: float
    second: float
    spelled: float


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
    # fsum: exact, so a share never depends on the order a set of words comes in (with
    # sum, one process measured 1.0 and the next 0.9999999999999999 for the same hit)
    total = math.fsum(idf.values()) or 1.0
    known = math.fsum(idf[w] for w in held) or 1.0
    covered, second, spelled = 0.0, 0.0, 0.0
    for text in itertools.islice(texts, FLOOR_HITS):
        words = words_in(text) & idf.keys()
        weight = math.fsum(idf[w] for w in words)
        share = weight / total
        spelled = max(spelled, weight / known)
        if share > covered:  # the first hit holding the most: its second rarest word
            rarities = sorted((idf[w] / scale for w in words), reverse=True)
            covered, second = share, (rarities[1] if len(rarities) > 1 else 0.0)
    return Measures(
        asked=len(frequencies),
        terms=len(held),
        rarest=max((idf[w] / scale for w in held), default=0.0),
        covered=covered,
        second=second,
        spelled=spelled,
    )
