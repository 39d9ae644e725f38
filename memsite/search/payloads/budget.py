"""The context budget table (issue 11): how an agent's context window is shared between the
tiers of memory and the work, and how many tokens each tier of this memory would take now.

The shares are those of the tiered design memsite follows, for a 200K-token window: system
prompt (the persona) 5K, hot memory (the live session) 10K, warm memory (recent activity)
20K, cold memory (relevant decisions and learnings) 10K, the task 5K, code 100K and output
50K, scaled to the window asked about. One place changes them: the ``[budget]`` table of
``memsite.toml`` at the top of the memory tree::

    [budget]
    window = 200000   # the window the numbers below are for
    hot = 15000
    warm = 15000

``window`` is an integer from 1,000 to 10,000,000 tokens, each share one from 0 to 10,000,000;
the file itself is read, and refused in one line, by ``memsite.store.config``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import InvalidInput
from ...store import config
from .primed import Primed

WINDOW = 200_000
# the largest window or share, in tokens, that [budget] may give (docs/format.md)
MOST_TOKENS = 10_000_000
# (tier, what it holds, its tokens in a 200K window, the prime sections it is measured by)
TIERS = (
    ("system", "persona", 5_000, ("persona",)),
    ("hot", "live session and its last checkpoint", 10_000, ("hot", "checkpoint")),
    ("warm", "recent activity", 20_000, ("activity",)),
    ("cold", "relevant decisions and learnings", 10_000, ("decisions", "learnings")),
    ("task", "the task", 5_000, ()),
    ("code", "code", 100_000, ()),
    ("output", "output", 50_000, ()),
)
BUDGET = config.Table(
    "budget",
    {
        "window": config.Integer(1_000, MOST_TOKENS),
        **{name: config.Integer(0, MOST_TOKENS) for name, _, _, _ in TIERS},
    },
)


@dataclass(frozen=True)
class Tier:
    """One row of the table: the tier's share of the window and, for memory's own tiers,
    the tokens it would take now."""

    name: str
    what: str
    share: int
    used: int | None = None

    @property
    def over(self) -> bool:
        return self.used is not None and self.used > self.share

    def to_dict(self) -> dict[str, object]:
        return {"tier": self.name, "holds": self.what, "share": self.share, "tokens": self.used}


@dataclass(frozen=True)
class Budget:
    """The budget table of one window."""

    window: int
    tiers: tuple[Tier, ...]
    source: str  # where the shares came from: the config file, or "defaults"

    @property
    def warnings(self) -> list[str]:
        return [
            f"{t.name} ({t.what}) takes {t.used:,} tokens, over its share of {t.share:,}"
            f"{_fix(t.name)}"
            for t in self.tiers
            if t.over and t.used is not None
        ]

    def to_dict(self) -> dict[str, object]:
        return {
            "window": self.window,
            "source": self.source,
            "tiers": [t.to_dict() for t in self.tiers],
            "warnings": self.warnings,
        }


def shares(root: Path) -> tuple[dict[str, float], str]:
    """Each tier's share of the window, and where the shares came from: the ``[budget]``
    table of ``memsite.toml`` in the tree (tokens of its ``window``) over the defaults."""
    values: dict[str, float] = {name: tokens / WINDOW for name, _, tokens, _ in TIERS}
    given = config.read(root, BUDGET)
    window = int(given.get("window", WINDOW))
    for name in values:
        if name in given:
            values[name] = int(given[name]) / window
    return values, str(config.path(root)) if given else "defaults"


def table(window: int, given: tuple[dict[str, float], str], primed: Primed) -> Budget:
    """The budget table for ``window`` tokens with the ``shares`` ``given``; ``primed`` is a
    prime payload built with room for every section whole, so each section's tokens are what
    that tier takes now."""
    if window < 1:
        raise InvalidInput("--window must be 1 token or more, e.g. --window 200000")
    values, source = given
    taken = {section.name: section.tokens for section in primed.sections}
    tiers = tuple(
        Tier(
            name,
            what,
            round(values[name] * window),
            sum(taken.get(s, 0) for s in sections) if sections else None,
        )
        for name, what, _, sections in TIERS
    )
    return Budget(window, tiers, source)


def render(budget: Budget) -> str:
    """The table as text, then one warning line per tier over its share."""
    rows = [("tier", "holds", "share", "now")]
    for tier in budget.tiers:
        used = "-" if tier.used is None else f"{tier.used:,}"
        rows.append((tier.name, tier.what, f"{tier.share:,}", used))
    rows.append(("total", "", f"{sum(t.share for t in budget.tiers):,}", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]:>{widths[3]}}".rstrip()
        for r in rows
    ]
    lines.insert(0, f"context budget of a {budget.window:,}-token window ({budget.source})")
    lines += [f"warning: {w}" for w in budget.warnings]
    return "\n".join(lines) + "\n"


def _fix(name: str) -> str:
    return {
        "system": ": shorten persona.md",
        "hot": ": end the session or take a checkpoint (memsite checkpoint)",
        "warm": ": fewer or shorter activities, or a larger share in memsite.toml",
        "cold": ": a larger share in memsite.toml, or supersede what no longer holds",
    }.get(name, "")
