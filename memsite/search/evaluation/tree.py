"""Evaluating the search of one memory tree: its labelled queries run through the search under
test, each answer located in the chunks of the tree file it names."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from ..chunks import Chunk, chunk_file
from ..ranking import Hit
from .metrics import Report, evaluate, read_queries


def evaluate_tree(
    root: Path, queries: Path, search: Callable[[str], Sequence[Hit]], k: int = 5
) -> Report:
    """Recall@k and MRR@10 of ``search`` over the JSON-lines file ``queries``, judged
    against the files of the tree at ``root``."""
    labelled = read_queries(queries)

    @cache
    def chunks_of(rel: str) -> list[Chunk]:
        path = root / rel
        if not path.is_file():
            return []
        return chunk_file(rel, path.read_text("utf-8", errors="replace"))

    return evaluate(labelled, search, chunks_of, k)
