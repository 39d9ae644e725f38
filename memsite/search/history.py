"""A session's history ranks as what it is (issue 36): bookkeeping, not an answer.

Checkpoints, session records (``session end``, ``session archived``) and progress and
pending lines are written by memory itself as an agent works, and each lists the session's
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
from collections.abc import Sequence

from .ranking import NEAR_TIE, Hit

# the actions of the warm log's bookkeeping (``store/session``): what a session did, not
# what it decided or learned
HISTORY = frozenset(
    {"checkpoint", "session end", "session archived", "progress", "pending done", "pending"}
)
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
    title = entry.heading.casefold().strip()
    return key in text or (len(title) > 3 and title in text)


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
    return out


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
