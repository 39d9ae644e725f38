"""Retrieval quality of a memory against labelled queries: recall@k and MRR@10.

A queries file holds JSON lines ``{"q": "...", "relevant": ["path#anchor", ...]}``. An
answer is named by ``path#anchor`` (an entry id or a heading's anchor), ``path#Heading
text``, or a bare ``path`` (any part of the file). A hit counts as finding an answer when it
is in the same file and its lines overlap the answer's lines, so results of any shape (heading
chunks, merged spans, fixed windows) are judged alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...errors import InvalidInput
from ...store import reading
from ...store.markup import heading_level, heading_text
from ..chunks import Chunk
from ..headings import toc_slug
from ..ranking import Hit


@dataclass(frozen=True)
class Labelled:
    query: str
    relevant: tuple[str, ...]
    kind: str = ""


@dataclass(frozen=True)
class Outcome:
    query: str
    found: int  # relevant answers found in the top k
    relevant: int
    rank: int | None  # 1-based rank of the first relevant hit within the top 10
    chars: int  # characters returned in the top k


@dataclass(frozen=True)
class Report:
    k: int
    outcomes: tuple[Outcome, ...]

    @property
    def recall(self) -> float:
        """Mean over queries of the share of their answers found in the top k."""
        return _mean(o.found / o.relevant for o in self.outcomes if o.relevant)

    @property
    def mrr(self) -> float:
        """Mean reciprocal rank of the first relevant hit within the top 10."""
        return _mean(1 / o.rank if o.rank else 0.0 for o in self.outcomes)

    @property
    def chars(self) -> float:
        """Mean characters returned in the top k."""
        return _mean(o.chars for o in self.outcomes)

    def to_dict(self) -> dict[str, object]:
        return {
            "queries": len(self.outcomes),
            "k": self.k,
            f"recall@{self.k}": round(self.recall, 4),
            "mrr@10": round(self.mrr, 4),
            f"chars@{self.k}": round(self.chars, 1),
            "missed": [o.query for o in self.outcomes if not o.found],
        }


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def read_queries(path: Path) -> list[Labelled]:
    """Labelled queries from a JSON-lines file; a bad line names its number."""
    # read as the tree's files are: a FIFO given as QUERIES hung eval for ever waiting for a
    # writer, and a file that is not UTF-8 ended in a UnicodeDecodeError traceback
    try:
        raw = reading.read_regular(Path(path))
    except OSError as err:
        raise InvalidInput(f"{path}: cannot read ({err.strerror})") from None
    except reading.NotAFile as err:
        raise InvalidInput(str(err)) from None
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise InvalidInput(f"{path}: not UTF-8 (bad byte at offset {err.start})") from None
    found = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            query, relevant = data["q"], data["relevant"]
            if not isinstance(query, str) or not isinstance(relevant, list) or not relevant:
                raise ValueError
        except (ValueError, KeyError, TypeError, RecursionError):
            raise InvalidInput(
                f'{path}:{number}: expected {{"q": "...", "relevant": ["path#anchor", ...]}}'
            ) from None
        found.append(Labelled(query, tuple(map(str, relevant)), str(data.get("kind", ""))))
    if not found:
        raise InvalidInput(f"{path}: no queries in it")
    return found


def resolve(answer: str, chunks_of: Callable[[str], Sequence[Chunk]]) -> list[tuple[str, int, int]]:
    """The ``(path, line, end_line)`` spans an answer names; empty when nothing matches."""
    path, _, target = answer.partition("#")
    chunks = chunks_of(path)
    if not target:
        return [(path, 1, 10**9)] if chunks else []
    wanted = {target, toc_slug(target)}
    spans = [
        (c.path, c.line, c.end_line)
        for c in chunks
        if c.anchor in wanted or c.id in wanted or toc_slug(c.heading) in wanted
    ]
    if spans:
        return spans
    # a heading kept inside a chunk (a sub-heading right under a bare parent, or h4+):
    # from that heading to the end of its chunk
    for chunk in chunks:
        for offset, line in enumerate(chunk.text.split("\n")):
            if heading_level(line) and toc_slug(heading_text(line)) in wanted:
                spans.append((chunk.path, chunk.line + offset, chunk.end_line))
    return spans


def judge(
    labelled: Labelled,
    hits: Sequence[Hit],
    k: int,
    chunks_of: Callable[[str], Sequence[Chunk]],
) -> Outcome:
    """How one query's hits score against its answers."""
    answers = [resolve(answer, chunks_of) for answer in labelled.relevant]

    def finds(hit: Hit, spans: list[tuple[str, int, int]]) -> bool:
        return any(
            hit.path == path and hit.line <= end and line <= hit.end_line
            for path, line, end in spans
        )

    top = hits[:k]
    found = sum(1 for spans in answers if any(finds(hit, spans) for hit in top))
    rank = next(
        (i for i, hit in enumerate(hits[:10], 1) if any(finds(hit, s) for s in answers)), None
    )
    return Outcome(labelled.query, found, len(answers), rank, sum(len(h.text) for h in top))


def evaluate(
    queries: Sequence[Labelled],
    search: Callable[[str], Sequence[Hit]],
    chunks_of: Callable[[str], Sequence[Chunk]],
    k: int = 5,
) -> Report:
    """Run every query through ``search`` (which returns at least 10 hits when it can)."""
    return Report(k, tuple(judge(q, search(q.query), k, chunks_of) for q in queries))
