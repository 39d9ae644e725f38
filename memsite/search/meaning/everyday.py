"""Everyday requests (issue 24): what a prompt that is not about the memory looks like.

``everyday.txt`` holds a few hundred messages any user of any codebase sends an assistant:
steering and thanks, coding requests in many languages, general technical questions (auth,
databases, networks and testing among them), error reports and requests that have nothing to
do with code. None is about a project's history. Recall's floor asks how much closer a
prompt is to the memory's closest sections than to the closest of these (:func:`apart`): a
question about the memory that shares no rare word with its answer ("why are quick retries
of a renewal not treated as theft") is closer to the memory; a request from another domain
that shares a few of its words ("write a rate limiter in Go") is as close to everyday
requests. Written for the project, apart from the labelled prompts ``bench/bench_floor.py``
reports on: a line sharing 40% or more of its words with one of them was left out.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .cosines import Meaning
    from .model import Embedder

EVERYDAY = Path(__file__).with_name("everyday.txt")
APART_TOP = 3  # the closest sections, and everyday requests, whose cosines are averaged


def requests() -> list[str]:
    """The everyday requests, one a line (none when the file is missing from the install)."""
    try:
        text = EVERYDAY.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [line.strip() for line in text.splitlines() if line.strip()]


@functools.cache
def _vectors(embedder: Embedder) -> np.ndarray:
    return embedder.embed(requests())  # about 20 ms, once per process


def apart(meaning: Meaning, embedder: Embedder) -> float | None:
    """The mean cosine of the query's APART_TOP closest sections less that of its APART_TOP
    closest everyday requests: above 0 when the memory is closer than everyday requests
    (None without everyday requests: the floor then weighs words alone)."""
    sections, vectors = meaning.sections, _vectors(embedder)
    if not len(vectors):
        return None
    if not len(sections):
        return -1.0
    everyday = vectors @ meaning.query
    return _top_mean(sections) - _top_mean(everyday)


def _top_mean(cosines: np.ndarray) -> float:
    import numpy as np

    top = min(APART_TOP, len(cosines))
    return float(np.partition(cosines, len(cosines) - top)[-top:].mean())
