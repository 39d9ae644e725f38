"""Recall: memory sized to an agent's context budget, as markdown ready to inject, and how
every payload renders a hit (prime's sections are :mod:`.primed`).

``recall`` runs on every turn: the best hits for the user's last message that fit the budget
(default 1,500 tokens), newest first among near ties, each dated, with its breadcrumb and a
citation. A hit that does not fit is left out whole, and the block says how many were.
Tokens are counted with :func:`memsite.search.payloads.tokens.estimate_tokens`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...errors import BUDGET
from ...store import reading
from ...store.markup import slugify
from ..chunks import ID_LINE
from ..ranking import Hit, newest_first_among_ties
from . import neighbours
from .tokens import estimate_tokens

RECALL_BUDGET = 1_500
RECALL_LIMIT = 8
PRIME_BUDGET = 40_000
# Claude Code 2.1.328 passes a hook's additionalContext of 10,000 characters inline; from
# 10,001 it saves the text to a file and sends the model its path and first 2 KB (measured
# with the real binary, issue 23). Budgets count 4 bytes a token and a character is at
# least a byte, so HOOK_BUDGET tokens always fit, with room for the line on asking for more.
HOOK_CONTEXT_CAP = 10_000
HOOK_BUDGET = (HOOK_CONTEXT_CAP - 400) // 4
_SITE_URL = re.compile(r"^site_url:\s*['\"]?([^'\"\s#]+)", re.MULTILINE)


def site_url(root: Path) -> str | None:
    """``site_url`` of the ``mkdocs.yml`` beside the tree, if there is one."""
    try:
        text = reading.read_text(Path(root).resolve().parent / "mkdocs.yml")
    except (OSError, UnicodeDecodeError, reading.NotAFile):
        return None
    match = _SITE_URL.search(text)
    return match.group(1).rstrip("/") + "/" if match else None


def page_url(base: str, hit: Hit) -> str:
    """Where the site shows a hit (mirrors ``memsite.site.pages.permalink``)."""
    if hit.kind == "decision":
        page = "decisions/"
    elif hit.kind == "learning":
        page = f"learnings/{slugify(hit.category.strip() or 'uncategorised')}/"
    elif hit.kind == "activity":
        page = f"activity/{hit.date.isoformat()}/"
    else:
        page = "notes/" + PurePosixPath(hit.path).with_suffix("").as_posix() + "/"
    return base + page + (f"#{hit.anchor}" if hit.anchor else "")


def citation(hit: Hit, base: str | None) -> str:
    """``path#anchor``, and the page on the site when it has a ``site_url``."""
    return f"{hit.citation} ({page_url(base, hit)})" if base else hit.citation


@dataclass(frozen=True)
class Recalled:
    """What ``recall`` returns: the hits that fit, how many did not, and the block."""

    hits: tuple[Hit, ...]
    left_out: int
    budget: int
    tokens: int
    markdown: str
    needed: int = 0  # the budget that would have held every matching hit

    def to_dict(self) -> dict[str, object]:
        return {
            "budget": self.budget,
            "tokens": self.tokens,
            "left_out": self.left_out,
            "needed_budget": self.needed,
            "hits": [hit.to_dict() for hit in self.hits],
            "markdown": self.markdown,
        }


def render_hit(hit: Hit, base: str | None) -> str:
    """One recalled hit: a dated heading with its breadcrumb, the citation, then the text."""
    lines = hit.text.split("\n")
    if hit.text.startswith("#"):
        lines = lines[1:]  # the heading is in the breadcrumb already
    # the citation carries the id
    body = "\n".join(line for line in lines if not ID_LINE.fullmatch(line)).strip()
    return f"### {dated(hit)}\n{status_line(hit)}Source: {citation(hit, base)}\n\n{body}\n"


def render_superseded(hit: Hit, base: str | None) -> str:
    """A superseded hit in recall (issue 36): one line saying what replaced it, with its
    citation, never its body: an agent acts on what it is handed, and what holds is given
    beside it."""
    return f"### {dated(hit)}\n{status_line(hit).rstrip()} Source: {citation(hit, base)}\n"


def superseded(hit: Hit) -> bool:
    """A decision or learning another one replaced (a record's own status included)."""
    return hit.superseded_by is not None or hit.status == "superseded"


def dated(hit: Hit) -> str:
    """A hit's heading: its date and breadcrumb, the date once (a day log's breadcrumb
    starts with its day, issue 25)."""
    day = hit.date.isoformat()
    return hit.breadcrumb if hit.breadcrumb.startswith(day) else f"{day} · {hit.breadcrumb}"


# what a decision record that does not hold is (issue 26): an agent must not act on it, and
# a rejected one says why it was turned down, before the same thing is proposed again
NOT_CURRENT = {
    "rejected": "**Rejected**: considered and turned down; read its reasons before "
    "proposing it again.\n",
    "deprecated": "**Deprecated**: no longer holds; do not act on this one.\n",
    "proposed": "**Proposed**: not decided yet.\n",
    "superseded": "**Superseded**; do not act on this one.\n",
}


def status_line(hit: Hit) -> str:
    """For a superseded hit, the line that says so and what holds now; for a decision
    record that is rejected, deprecated or only proposed, the line that says so."""
    newer = hit.superseded_by
    if newer is None:
        return NOT_CURRENT.get(hit.status or "", "")
    return (
        f"**Superseded** by {newer.title} ({newer.id}) on {newer.date.isoformat()}; "
        "do not act on this one.\n"
    )


def _header(count: int) -> str:
    return f"## Recalled memory ({count} item{'s' if count != 1 else ''})\n"


def _footer(left_out: int, budget: int, needed: int) -> str:
    if not left_out:
        return ""
    return (
        f"\n_{left_out} more matching item{'s' if left_out != 1 else ''} left out "
        f"to stay within {budget:,} tokens ({BUDGET.given(needed)} would hold them all)._\n"
    )


def fit_recall(
    hits: Sequence[Hit], budget: int, base: str | None, root: Path | None = None
) -> Recalled:
    """Take hits in order (newest first among near ties) while the whole block fits. With
    the tree's ``root``, an activity hit is weighed without its neighbours first, and keeps
    them only in the room the hits taken leave: neighbours never push an answer out."""
    ordered = newest_first_among_ties(hits)
    if not ordered:
        return Recalled((), 0, budget, 0, "")
    blocks = [(render_superseded if superseded(h) else render_hit)(h, base) for h in ordered]
    needed = estimate_tokens(_assemble(blocks, 0, budget, 0))
    read = neighbours.reader(root) if root is not None else None
    bare = [
        neighbours.alone(hit, read(hit.path)) if read and hit.kind == "activity" else hit
        for hit in ordered
    ]
    shown = [
        render_hit(alone, base) if alone is not hit else block
        for hit, alone, block in zip(ordered, bare, blocks, strict=True)
    ]
    kept: list[int] = []
    for index in range(len(shown)):
        trial = [*kept, index]
        left = len(ordered) - len(trial)
        text = _assemble([shown[i] for i in trial], left, budget, needed)
        if estimate_tokens(text) <= budget:
            kept = trial
    left_out = len(ordered) - len(kept)
    for index in kept:  # neighbours in the room the answers leave, best hit first
        if bare[index] is ordered[index]:
            continue
        trial = {**{i: shown[i] for i in kept}, index: blocks[index]}
        text = _assemble([trial[i] for i in kept], left_out, budget, needed)
        if estimate_tokens(text) <= budget:
            shown[index] = blocks[index]
        else:
            ordered[index] = bare[index]
    blocks = shown
    taken = tuple(ordered[i] for i in kept)
    left_out = len(ordered) - len(kept)
    markdown = _assemble([blocks[i] for i in kept], left_out, budget, needed)
    return Recalled(taken, left_out, budget, estimate_tokens(markdown), markdown, needed)


def _assemble(blocks: list[str], left_out: int, budget: int, needed: int) -> str:
    if not blocks:
        return (
            f"## Recalled memory\n\n_{left_out} matching item{'s' if left_out != 1 else ''} "
            f"left out: each alone exceeds {budget:,} tokens "
            f"({BUDGET.given(needed)} would hold them all)._\n"
            if left_out
            else ""
        )
    return _header(len(blocks)) + "\n" + "\n".join(blocks) + _footer(left_out, budget, needed)
