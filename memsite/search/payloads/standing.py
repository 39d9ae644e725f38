"""Where the work stands (issue 24): a checkpoint is the history of a session, not an answer.

A checkpoint copies the hot context (the task, the session's decisions, its pending actions)
into the warm log, so five checkpoints of one session once filled a recall and left out the
decision they named. ``recall`` therefore holds no checkpoint, except for a question about
where the work stands (:data:`STANDING`): then exactly one, the newest, first.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from ...errors import MemsiteError
from ...store import reading
from ...store.session import checkpoints, hot
from ..chunks import chunk_file
from ..history import is_history
from ..ranking import Hit, Span, span_hit

ROOM = 5  # how many more hits recall asks the search for: the checkpoints it leaves out
# Words that ask where the work stands rather than what memory says about a topic. Measured
# on the labelled prompts of tests/test_checkpoint_recall.py (14 that ask, 14 that do not,
# all told apart). "status code" and "progress bar" are topics; "where did we land on X"
# asks for a decision, so only "where were/are we" and "where was/am I" count.
STANDING = re.compile(
    r"\bwhere\s+(?:were|are)\s+we\b|\bwhere\s+(?:was|am)\s+i\b"
    r"|\bleft\s+off\b"
    r"|\bwhat\s+(?:was|were|am|are)\s+(?:i|we)\s+(?:doing|working\s+on|up\s+to)\b"
    r"|\bstatus\b(?!\s+codes?\b)"
    r"|\bprogress\b(?!\s+bars?\b)"
    r"|\b(?:last|previous|earlier)\s+session\b"
    r"|\bcheckpoints?\b"
    r"|\bcatch\s+me\s+up\b"
    r"|\bhow\s+far\s+(?:along|are|have|did)\b",
    re.IGNORECASE,
)


def asks_where_work_stands(prompt: str) -> bool:
    """Whether ``prompt`` asks where the work stands ("where were we?", "status")."""
    return STANDING.search(prompt) is not None


def is_checkpoint(hit: Hit) -> bool:
    """A ``### HH:MM:SS — checkpoint`` activity of the warm log."""
    return hit.kind == "activity" and hit.heading.split("—", 1)[-1].strip() == "checkpoint"


def with_one_checkpoint(root: Path, prompt: str, hits: Sequence[Hit], limit: int) -> list[Hit]:
    """The best ``limit`` hits that are not a session's history (checkpoints, session
    records, progress and pending lines: issue 36); for a question about where the work
    stands, the hits that are not checkpoints, led by the newest checkpoint (the live
    session's, else the last one logged) in place of the last, scored as the best, whether
    the search found it or not."""
    standing = asks_where_work_stands(prompt)
    answers = [hit for hit in hits if not (is_checkpoint(hit) if standing else is_history(hit))]
    newest = newest_checkpoint(root) if standing else None
    if newest is None:
        return answers[:limit]
    top = max((hit.score for hit in answers), default=1.0)
    return [dataclasses.replace(newest, score=top), *answers[: limit - 1]]


def newest_checkpoint(root: Path) -> Hit | None:
    """The newest checkpoint as a hit, read from its day log without the index."""
    try:
        context = hot.load(root)
    except (MemsiteError, OSError):
        context = None  # a damaged hot context: the logs still know the last checkpoint
    entry = checkpoints.newest(root, context)
    if entry is None:
        return None
    try:
        text = reading.replaced_text(root / entry.path)
    except (OSError, reading.NotAFile):
        return None
    for chunk in chunk_file(entry.path, text):
        if chunk.id == entry.id:
            return span_hit(Span((chunk,), chunk, 0.0))
    return None
