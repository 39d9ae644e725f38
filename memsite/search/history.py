"""A session's history ranks as what it is (issue 36): bookkeeping, not an answer.

Checkpoints, session records (``session end``, ``session archived``), progress and
pending lines, and the day log's line for each decision and learning are written by memory itself as an agent works, and each lists the session's
decision titles, files and results: the more an agent works, the more of them compete with
the entries people look for. In ``search`` none comes before a decision, learning or note
it lists (it is folded right below the last such entry among the hits); ``recall`` holds
none unless the question asks where the work stands (:mod:`.payloads.standing`).

A superseded entry never comes before the entry that replaced it: the successor takes the
superseded one's place (never above better matches), the superseded one right after it.

Pure: hits in, hits out.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from .ranking import NEAR_TIE, Hit

# the actions of the warm log's bookkeeping (``store/session``, ``store/journal``): what a
# session did, not what it decided or learned; "decision" and "learning" are the lines the
# journal writes in the day log for each decide and learn, the entry's id and title (which
# "what did we decide about ..." matched before the decision itself)
HISTORY = frozenset(
    {
        "checkpoint",
        "session end",
        "session archived",
        "progress",
        "pending done",
        "pending",
        "decision",
        "learning",
    }
)
# a title holding this share of a query's words names the entry among near ties. Measured
# (docs/benchmarks.md): ordering every near tie by the share its title holds cost the
# sample's 50 questions MRR@10 0.716 -> 0.669 hybrid and its paraphrased ones 0.455 -> 0.419
# lexical; from 0.75 on, and a title holding every word of the query, moved none of them
NAMED = 0.75
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2} — ")
# how far below the entry it lists a folded history hit scores: outside every near tie, so
# that no later tie rule (newest first) lifts it back above
BELOW = 1 - 2 * NEAR_TIE


def action(hit: Hit) -> str:
    """The action of an activity's ``HH:MM:SS — action`` heading ('' for other kinds)."""
    return hit.heading.split("—", 1)[-1].strip() if hit.kind == "activity" else ""


def is_history(hit: Hit) -> bool:
    """A checkpoint, session record, or progress or pending line of the warm log."""
    return action(hit) in HISTORY


def lists(history: Hit, entry: Hit) -> bool:
    """Whether ``history`` names ``entry``: its id, or its title (heading), in its text."""
    if entry.kind == "activity":
        return False
    text = history.text.casefold()
    key = (entry.record or entry.id).casefold()
    title = title_of(entry).casefold()
    return key in text or (len(title) > 3 and title in text)


def title_of(hit: Hit) -> str:
    """A hit's title: its heading without the ``YYYY-MM-DD — `` an entry's heading starts with."""
    return _DATED.sub("", hit.heading).strip()


def fold_history(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` with each history hit moved right below the last entry among them that it
    lists (scored below it, outside its near tie); hits it lists none of keep their place."""
    out = list(hits)
    for key in [h.id for h in hits if is_history(h)]:
        at = next(i for i, h in enumerate(out) if h.id == key)
        hit = out[at]
        listed = [i for i, other in enumerate(out) if i > at and lists(hit, other)]
        if not listed:
            continue
        last = listed[-1]
        moved = out.pop(at)
        below = out[last - 1].score * BELOW
        out.insert(last, dataclasses.replace(moved, score=min(moved.score, below)))
        for i in range(last + 1, len(out)):  # keep the scores in order below it
            if out[i].score > out[i - 1].score:
                out[i] = dataclasses.replace(out[i], score=out[i - 1].score)
    return _entries_first_among_ties(out)


def _entries_first_among_ties(hits: list[Hit]) -> list[Hit]:
    """Within each run of near-tied scores, the hits that are not history first: a day
    log's line for a decision ties with the decision on "what did we decide", having
    nothing else to match; the scores are handed on in the new order."""
    return _within_ties(hits, is_history)


def _within_ties(hits: Sequence[Hit], key: Callable[[Hit], float]) -> list[Hit]:
    """``hits`` sorted by ``key`` (stably) within each run of near-tied scores (within
    :data:`NEAR_TIE` of the run's top), the scores handed on in the new order (so that no
    later tie rule undoes it)."""
    out: list[Hit] = []
    start = 0
    while start < len(hits):
        top = hits[start].score
        end = start + 1
        while end < len(hits) and top - hits[end].score <= NEAR_TIE * max(top, 1e-9):
            end += 1
        out += sorted(hits[start:end], key=key)
        start = end
    scores = [h.score for h in hits]
    return [dataclasses.replace(h, score=score) for h, score in zip(out, scores, strict=True)]


def successors_first(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` with a successor that ranked below its superseded entry moved to the
    superseded one's place (its score), the superseded one right after it."""
    out = list(hits)
    for key in [h.id for h in hits if h.superseded_by is not None]:
        at = next(i for i, h in enumerate(out) if h.id == key)
        old = out[at]
        assert old.superseded_by is not None
        newer = next(
            (i for i, h in enumerate(out) if (h.record or h.id) == old.superseded_by.id), None
        )
        if newer is None or newer < at:
            continue
        holder = out.pop(newer)
        out.insert(at, dataclasses.replace(holder, score=max(holder.score, old.score)))
    return out


def named_first(
    hits: Sequence[Hit], asked: set[str], words: Callable[[str], set[str]]
) -> list[Hit]:
    """The entries a query names before what only mentions them: an entry whose title holds
    every word of a query of two words or more first ("float multiply loses cents"), and
    within a run of near-tied scores (within :data:`NEAR_TIE` of the run's top) the
    entries whose title holds more of the query's words ``asked`` first ("are discount
    codes case sensitive?": "Discount codes are case-insensitive" before "Discount codes
    live in a dict"). Scores are handed on in the new order, so that no later tie rule
    undoes it. ``words`` gives a text's words as the index analyses them; activities have
    no title."""
    if not asked or not hits:
        return list(hits)
    shares = {
        h.id: 0.0 if h.kind == "activity" else len(words(title_of(h)) & asked) / len(asked)
        for h in hits
    }
    whole = [h for h in hits if len(asked) > 1 and shares[h.id] == 1.0]
    ordered = whole + [h for h in hits if h not in whole]
    # handed on in score order first: the titles holding the whole query lead
    scores = sorted((h.score for h in hits), reverse=True)
    ordered = [dataclasses.replace(h, score=v) for h, v in zip(ordered, scores, strict=True)]
    return _within_ties(ordered, lambda h: -(shares[h.id] if shares[h.id] >= NAMED else 0.0))
