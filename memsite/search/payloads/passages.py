"""Passages: how the top hits are cut so that together they fit one budget (issue 16).

A hit is a span of whole sections, and a section of a real decision record can run to
several thousand characters: five such hits are more than a reader, or an agent's turn,
should get. When the first :data:`~memsite.search.ranking.TOP_HITS` hits together exceed
:data:`~memsite.search.ranking.TOP_CHARS`, :func:`shares` says how much each may keep (the
first hit, which most often holds the answer, keeps its span; the others share what is
left) and :func:`trim` cuts a longer hit to its best passage: the run of consecutive
paragraphs within its share, holding part of the section the hit was found for (or of the
decision that section leads to, in a decision record), that holds most of the query and of the best-scored sections, under the heading it sits in, with
``[…]`` where text was left out. The hit's line range is the passage's, so a citation or an
evaluation never claims lines it did not return.

Everything here is pure: the caller says what a paragraph holds of the query (``weigh``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ...store import markup
from ..chunks import Chunk
from ..spans import Span, decision_after

MARK = "[…]"  # stands where a trimmed hit left text out
MAX_PIECES = 400  # paragraphs weighed per hit at most; past it, runs of them (``_coarser``)


@dataclass(frozen=True)
class Block:
    """A paragraph (or list, table, code block, heading) of a span: lines ``line..end_line``
    of its ``section``-th section."""

    section: int
    line: int
    end_line: int
    text: str


def fit(
    spans: Sequence[Span],
    weigh: Callable[[str], float],
    scores: Mapping[str, float],
    top_hits: int,
    top_chars: int,
    lead_chars: int,
) -> list[Span]:
    """``spans`` with the first ``top_hits`` cut to their :func:`shares` of ``top_chars``
    (the first up to ``lead_chars``; a cut one is ``trimmed``); later spans unchanged.
    ``scores`` are the sections' fused scores: a passage of a better-scored section is worth
    more."""
    top = list(spans[:top_hits])
    best = max(scores.values(), default=0.0) or 1.0
    caps = shares([_size(s.chunks) for s in top], top_chars, lead_chars)
    out = []
    for span, cap in zip(top, caps, strict=True):
        cut = trim(span.chunks, span.seed, cap, weigh, lambda c: scores.get(c.id, 0.0) / best)
        out.append(span if cut is None else replace(span, chunks=(cut,), trimmed=True))
    return out + list(spans[top_hits:])


def shares(lengths: Sequence[int], budget: int, lead: int) -> list[int]:
    """How many characters each hit (best first) may keep so that together they fit
    ``budget``, the first hit up to ``lead`` of them.

    When they fit, each keeps everything. Otherwise the first hit keeps up to ``lead``
    (more if the others are short), and the later ones share what it leaves: each keeps all
    of itself up to a common share, the largest that makes the total fit, so a short hit is
    never cut to pay for a long one. With a first hit of ``lead`` each later one still keeps
    ``(budget - lead) / (hits - 1)`` characters.
    """
    if sum(lengths) <= budget or not lengths:
        return list(lengths)
    others = list(lengths[1:])
    floor = (budget - lead) // max(len(others), 1)
    first = min(lengths[0], max(lead, budget - sum(min(n, floor) for n in others)))
    rest = budget - first
    low, high = 0, max(others, default=0)
    while low < high:  # the largest common share of what the first hit leaves
        middle = (low + high + 1) // 2
        if sum(min(n, middle) for n in others) <= rest:
            low = middle
        else:
            high = middle - 1
    return [first, *(min(n, low) for n in others)]


def trim(
    chunks: Sequence[Chunk],
    seed: Chunk,
    cap: int,
    weigh: Callable[[str], float],
    section_score: Callable[[Chunk], float] = lambda chunk: 0.0,
) -> Chunk | None:
    """The best passage of a span of ``chunks`` within ``cap`` characters, as one chunk
    cited at the section it starts in; None when the span fits whole.

    A block is worth what it holds of the query (``weigh``, 0 to 1) plus its section's score
    (``section_score``, 0 to 1) times its share of ``cap``; the passage is the run of
    consecutive blocks worth most among those that hold part of the ``seed`` section (on
    ties: the one holding the seed section's start, then the earliest).

    The seed is why the hit ranks where it does; a passage from a neighbouring section that
    only shares the query's words answers something else. Measured on the development set
    (``docs/benchmarks.md``, all corpora, recall@5 / MRR@10 / characters in the top 5): at
    5,000 characters hybrid 0.909 / 0.845 / 4,654 → 0.914 / 0.848 / 4,622 (lexical 0.885 /
    0.818 → 0.881 / 0.818); at 4,500, hybrid 0.881 / 0.834 / 4,217 → 0.909 / 0.845 / 4,176
    and lexical 0.857 / 0.803 → 0.871 / 0.809: four of six answers the cut had lost came
    back (the "Context" a record was found by, not its "Consequences"), one was lost.

    One section stands in for the seed: the record's decision (:data:`DECISION_HEADINGS`)
    when the seed comes before it and a block of it fits beside its heading. A record found
    by its "Context" is cut to what it decided, the answer to the question its context asks:
    at 5,000 characters hybrid 0.914 → 0.923 (lexical 0.881 → 0.895), MRR unchanged, and the
    same 0.923 / 0.848 at 4,800 with 4,466 characters in the top 5.

    A passage that does not start at its section's heading is preceded by the heading and
    ``[…]``; one that stops before the span ends is followed by ``[…]``. A block longer than
    ``cap`` is weighed line by line (a line longer than ``cap`` is cut).
    """
    if _size(chunks) <= cap:
        return None
    seed_at = next((i for i, c in enumerate(chunks) if c.id == seed.id), 0)
    # a line of an activity cut to fit must still fit beside its heading and the marks of a
    # cut: a huge log entry of one line gave its heading and author line, none of its
    # content (issue 39.5). Elsewhere a line too long stays too long, as measured: cutting
    # every seed's long line so left the devset's recall of heading chunks as it was, added
    # 10 to 40 characters to the top 5 and cost the windows cut to the budget 0.01
    room = line_cap(chunks, seed_at, cap) if chunks[seed_at].kind == "activity" else cap
    pieces = [
        piece
        for block in blocks(chunks)
        for piece in _fitting(block, cap, room if block.section == seed_at else cap)
    ]
    if not pieces:
        return None
    if len(pieces) > MAX_PIECES:  # a huge body of short lines: weighed in coarser runs
        pieces = _coarser(pieces, cap)
    worth = [weigh(b.text) + section_score(chunks[b.section]) * len(b.text) / cap for b in pieces]
    heads = [_head_size(chunks, b) for b in pieces]
    best = None
    decision = decision_after(chunks, seed_at)
    if decision is not None:  # its text, not the heading alone, or the seed's passage
        body = [
            i for i, b in enumerate(pieces) if b.section == decision and not _is_heading(chunks, b)
        ]
        best = _best_run(pieces, worth, heads, body[0], body[-1], cap) if body else None
    if not best:
        seed_start = next((i for i, b in enumerate(pieces) if b.section == seed_at), 0)
        seed_end = max(
            (i for i, b in enumerate(pieces) if b.section == seed_at), default=seed_start
        )
        best = _best_run(pieces, worth, heads, seed_start, seed_end, cap)
    if not best:  # not even one block fits beside its heading: the seed's first, cut
        piece = pieces[seed_start]
        return replace(
            chunks[piece.section], text=piece.text[:cap], line=piece.line, end_line=piece.end_line
        )
    first, last = best
    after = pieces[last + 1] if last + 1 < len(pieces) else None
    if (
        after is not None
        and after.section == pieces[last].section
        and not _is_heading(chunks, after)
        and all(_is_heading(chunks, b) for b in pieces[first : last + 1])
    ):
        return _heading_and_start(chunks, pieces[first], after, cap)
    return replace(
        chunks[pieces[first].section],
        text=_passage(chunks, pieces, first, last),
        line=pieces[first].line,
        end_line=pieces[last].end_line,
    )


def line_cap(chunks: Sequence[Chunk], seed_at: int, cap: int) -> int:
    """How long a line of the seed section may be kept: what fits beside its heading and
    the marks of a cut within ``cap`` (at least half of ``cap``)."""
    seed = chunks[seed_at]
    head = _head_size(chunks, Block(seed_at, seed.line + seed.heading_lines, 0, ""))
    return max(cap - head - len(MARK) - 2, cap // 2)


def _heading_and_start(chunks: Sequence[Chunk], heading: Block, after: Block, cap: int) -> Chunk:
    """A heading with the start of the block after it, cut at a word to fit ``cap`` with
    ``[…]``: what a passage holds when no whole block fits beside its heading (a heading
    alone tells a reader nothing)."""
    room = cap - len(heading.text) - 2 - 2 - len(MARK)
    text = after.text[: max(room, 0)]
    if len(text) < len(after.text):
        text = text.rsplit(" ", 1)[0] if " " in text[room // 2 :] else text
    if not text.strip():
        return replace(
            chunks[heading.section],
            text=heading.text[:cap],
            line=heading.line,
            end_line=heading.end_line,
        )
    return replace(
        chunks[heading.section],
        text=f"{heading.text}\n\n{text} {MARK}",
        line=heading.line,
        end_line=after.line + text.count("\n"),
    )


def _best_run(
    pieces: Sequence[Block],
    worth: Sequence[float],
    heads: Sequence[int],
    start: int,
    end: int,
    cap: int,
) -> tuple[int, int] | None:
    """``(first, last)``: the run of consecutive ``pieces`` within ``cap`` characters worth
    most among those holding one of ``pieces[start..end]`` (on ties: the one holding
    ``start``, then the earliest); None when none fits."""
    best: tuple[tuple[float, bool, int], int, int] | None = None
    for first in range(min(end + 1, len(pieces))):
        size = heads[first] - 2  # ``len(_passage(...))`` kept as the run grows, in O(1)
        total = 0.0  # ``sum(worth[first : last + 1])``, added in the same order
        for last in range(first, len(pieces)):
            joined = last > first and pieces[last].line == pieces[last - 1].end_line + 1
            size += len(pieces[last].text) + (1 if joined else 2)
            if size + (2 + len(MARK) if last < len(pieces) - 1 else 0) > cap:
                break
            total += worth[last]
            if last < start:
                continue
            key = (round(total, 9), first <= start <= last, -first)
            if best is None or key > best[0]:
                best = (key, first, last)
    return None if best is None else best[1:]


def _is_heading(chunks: Sequence[Chunk], block: Block) -> bool:
    chunk = chunks[block.section]
    return block.line < chunk.line + chunk.heading_lines


def blocks(chunks: Sequence[Chunk]) -> list[Block]:
    """The blocks of consecutive sections, in order: text between blank lines outside code
    fences, each section's heading lines a block of their own."""
    found: list[Block] = []
    for number, chunk in enumerate(chunks):
        lines = markup.split_lines(chunk.text)
        start: int | None = None
        for index, outside in [*markup.outside_fences(lines), (len(lines), True)]:
            blank = index == len(lines) or (outside and not lines[index].strip())
            if start is not None and (blank or index == chunk.heading_lines):
                text = "\n".join(lines[start:index])
                found.append(Block(number, chunk.line + start, chunk.line + index - 1, text))
                start = None
            if not blank and start is None:
                start = index
    return found


def _passage(chunks: Sequence[Chunk], pieces: Sequence[Block], first: int, last: int) -> str:
    run = pieces[first : last + 1]
    chunk = chunks[run[0].section]
    parts: list[str] = []
    if chunk.heading_lines and run[0].line >= chunk.line + chunk.heading_lines:
        parts += ["\n".join(markup.split_lines(chunk.text)[: chunk.heading_lines]), MARK]
    for previous, block in zip([None, *run], run, strict=False):
        if previous is not None and block.line == previous.end_line + 1:
            parts[-1] += "\n" + block.text  # lines of one block weighed apart
        else:
            parts.append(block.text)
    if last < len(pieces) - 1:
        parts.append(MARK)
    return "\n\n".join(parts)


def _head_size(chunks: Sequence[Chunk], block: Block) -> int:
    """Characters a passage starting at ``block`` spends on its heading and ``[…]`` (and
    the blank line after them), as :func:`_passage` writes them."""
    chunk = chunks[block.section]
    if not (chunk.heading_lines and block.line >= chunk.line + chunk.heading_lines):
        return 0
    heading = "\n".join(markup.split_lines(chunk.text)[: chunk.heading_lines])
    return len(heading) + 2 + len(MARK) + 2


def _coarser(pieces: Sequence[Block], cap: int) -> list[Block]:
    """Consecutive pieces of one section joined (as :func:`_passage` joins them) into runs
    of about ``len(pieces) / MAX_PIECES``, none longer than ``cap``: what :func:`trim`
    weighs in a body of thousands of short lines, so that it stays linear."""
    per = -(-len(pieces) // MAX_PIECES)
    out: list[Block] = []
    count = 0
    for piece in pieces:
        last = out[-1] if out else None
        if last is not None and count < per and last.section == piece.section:
            glue = "\n" if piece.line == last.end_line + 1 else "\n\n"
            text = last.text + glue + piece.text
            if len(text) <= cap:
                out[-1] = Block(last.section, last.line, piece.end_line, text)
                count += 1
                continue
        out.append(piece)
        count = 1
    return out


def _fitting(block: Block, cap: int, line_cap: int | None = None) -> list[Block]:
    """``block``, or its lines when it is longer than ``cap`` (a line longer than
    ``line_cap``, or ``cap``, cut at a word to it, with ``[…]``)."""
    if len(block.text) <= cap:
        return [block]
    return [
        Block(block.section, block.line + i, block.line + i, _cut_line(line, line_cap or cap))
        for i, line in enumerate(markup.split_lines(block.text))
        if line.strip()
    ]


def _cut_line(line: str, size: int) -> str:
    """``line``, or its start cut at a word to ``size`` characters with ``[…]``."""
    if len(line) <= size:
        return line
    cut = line[: max(size - len(MARK) - 1, 0)]
    space = cut.rfind(" ", len(cut) // 2)
    return (cut[:space] if space > 0 else cut).rstrip() + " " + MARK


def _size(chunks: Sequence[Chunk]) -> int:
    """Characters of a span's text (its sections joined as ``span_hit`` joins them)."""
    return len("\n\n".join(c.text for c in chunks))
