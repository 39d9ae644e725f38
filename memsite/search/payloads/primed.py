"""The prime payload (the session start): its sections, how the budget is shared among them,
and their markdown.

The persona (always, whole), the hot context ("Where were we?", cut by lines), the decisions
and learnings relevant to the task (the current ones first), and the recent work of the last
three days with a log (the sessions' summaries first). Each section is capped by its share
of the budget (:data:`PRIME_SHARES`); tokens a section does not use pass on to the others.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...errors import BUDGET
from ..chunks import ID_LINE
from ..ranking import Hit
from .recall import PRIME_BUDGET, render_hit
from .tokens import BYTES_PER_TOKEN, estimate_tokens, size_of

ACTIVITY_DAYS = 3
# Shares of the prime budget, in the order sections are filled.
# "Where were we?" comes first after the persona and is cut by lines, never dropped whole
# (issue 23: at Claude Code's 10,000-character hook cap it was left out entirely).
PRIME_SHARES = (
    ("persona", 0.10),
    ("hot", 0.25),
    ("decisions", 0.30),
    ("learnings", 0.20),
    ("activity", 0.15),
)
# The last line of every prime payload: how the agent asks for more than fitted.
MORE = (
    '_More memory on demand: `memsite recall "<question>"` or `memsite search <words>`'
    " (MCP tools `recall`, `search`, `get`)._\n"
)
SESSION_ACTIONS = ("session end", "session archived", "checkpoint")


@dataclass(frozen=True)
class PrimeSection:
    name: str
    title: str
    cap: int
    tokens: int
    items: int
    left_out: int
    markdown: str

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "cap": self.cap,
            "tokens": self.tokens,
            "items": self.items,
            "left_out": self.left_out,
        }


@dataclass(frozen=True)
class Primed:
    """The session-start payload, by section."""

    budget: int
    sections: tuple[PrimeSection, ...] = field(default_factory=tuple)
    needed: int = 0  # the budget that would have held every section whole

    @property
    def cut(self) -> tuple[PrimeSection, ...]:
        """Sections that were shortened or left out to fit the budget."""
        return tuple(s for s in self.sections if s.left_out)

    @property
    def report(self) -> str:
        """One line saying what did not fit, or "" when everything did."""
        if not self.cut:
            return ""
        parts = [
            f"{s.title.lower()} ({s.left_out} of {s.items + s.left_out} left out)" for s in self.cut
        ]
        return (
            f"_Cut to fit {self.budget:,} tokens: {'; '.join(parts)}. "
            f"{BUDGET.given(self.needed)} would hold it all._\n"
        )

    @property
    def markdown(self) -> str:
        """The sections in order, the report of what was cut, and the line on asking for
        more last."""
        body = [s.markdown for s in self.sections if s.markdown and s.name != "more"]
        if not any(body) and not self.report:
            return ""
        last = [s.markdown for s in self.sections if s.markdown and s.name == "more"]
        return "\n".join([*body, self.report, *last]).strip("\n") + "\n"

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.markdown)

    def to_dict(self) -> dict[str, object]:
        return {
            "budget": self.budget,
            "tokens": self.tokens,
            "sections": [s.to_dict() for s in self.sections],
            "cut": [s.name for s in self.cut],
            "needed_budget": self.needed,
            "markdown": self.markdown,
        }


@dataclass(frozen=True)
class PrimeInputs:
    """What prime draws from, gathered by the caller (``Memory.prime``)."""

    persona: str
    hot: str  # the rendered hot context, or ""
    decisions: Sequence[Hit]
    learnings: Sequence[Hit]
    activity: Sequence[Hit]  # newest first
    site: str | None = None
    # the latest checkpoint of the live session, rendered; it joins the hot context, or
    # comes first of all when ``lead`` (a window that was just compacted, issue 11)
    checkpoint: str = ""
    lead: bool = False
    # how many times a learning's lesson was recorded, by its id, for those recorded more
    # than once: they lead the learnings (issue 27)
    recurring: Mapping[str, int] = field(default_factory=dict)


def render_prime(inputs: PrimeInputs, budget: int = PRIME_BUDGET) -> Primed:
    """Assemble the prime payload section by section within ``budget`` tokens.

    The persona (and, right after a compaction, the latest checkpoint, before it) is always
    included whole and its tokens come off the top. The rest of the
    budget is shared by :data:`PRIME_SHARES`; a section that needs less than its share
    passes the surplus to the others in proportion to their shares.
    """
    text = inputs.persona.strip()
    persona = _whole("persona", "Persona", f"{text}\n" if text else "")
    checkpoint = inputs.checkpoint.strip()
    hot = inputs.hot.strip()
    if checkpoint and not inputs.lead:
        hot = f"{hot}\n\n{checkpoint}".strip()
    lead = [_whole("checkpoint", "Since the last checkpoint", f"{checkpoint}\n")]
    lead = lead if checkpoint and inputs.lead else []
    titles = {
        "hot": "Where were we?",
        "decisions": "Relevant decisions",
        "learnings": "Relevant learnings",
        "activity": f"Recent work (last {ACTIVITY_DAYS} days with a log)",
    }
    items = {
        "hot": [line + "\n" for line in hot.split("\n")] if hot else [],
        "decisions": _current_first(inputs.decisions, inputs.site),
        "learnings": _current_first(_recurring_first(inputs), inputs.site, inputs.recurring),
        "activity": _recent_work(inputs.activity),
    }
    heads = {name: "" if name == "hot" else f"## {title}\n\n" for name, title in titles.items()}
    needs = {
        name: estimate_tokens(heads[name] + "".join(found)) if found else 0
        for name, found in items.items()
    }
    # the report line of what was cut comes out of the budget too
    more = estimate_tokens(MORE)
    whole = persona.tokens + sum(section.tokens for section in lead) + more
    available = max(budget - whole - len(PRIME_SHARES) - REPORT_TOKENS, 0)
    caps = share_out(needs, dict(PRIME_SHARES[1:]), available)
    sections = [*lead, persona]
    for name, title in titles.items():
        sections.append(
            _fill(name, title, heads[name], items[name], caps[name], in_order=name == "hot")
        )
    sections.append(PrimeSection("more", "More", more, more, 1, 0, MORE))
    needed = whole + sum(needs.values()) + len(PRIME_SHARES)
    return Primed(budget, tuple(sections), needed)


def _recurring_first(inputs: PrimeInputs) -> list[Hit]:
    """The learnings in their order, those whose lesson keeps coming back first."""
    counts = inputs.recurring
    return sorted(inputs.learnings, key=lambda hit: (hit.record or hit.id) not in counts)


def _current_first(
    hits: Sequence[Hit], base: str | None, recurring: Mapping[str, int] | None = None
) -> list[str]:
    """Hits in their order with the current ones first; a superseded one is a single line
    naming what holds now (issue 23: its body spent the budget on history). A learning in
    ``recurring`` says how many times its lesson was recorded."""
    counts = recurring or {}

    def rendered(hit: Hit) -> str:
        times = counts.get(hit.record or hit.id)
        again = f"_Keeps coming back: recorded {times} times._\n\n" if times else ""
        return again + render_hit(hit, base) + "\n"

    current = [rendered(hit) for hit in hits if hit.superseded_by is None]
    older = [
        f"- Superseded: {hit.heading.split('—', 1)[-1].strip()} ({hit.record or hit.id}),"
        f" replaced by {hit.superseded_by.title} ({hit.superseded_by.id})\n"
        for hit in hits
        if hit.superseded_by is not None
    ]
    return current + older


def _recent_work(activity: Sequence[Hit]) -> list[str]:
    """The last sessions' summaries (session ends and checkpoints) first, then the other
    activities, newest first within each."""
    sessions = [h for h in activity if _action(h) in SESSION_ACTIONS]
    others = [h for h in activity if _action(h) not in SESSION_ACTIONS]
    return [_activity_line(hit) for hit in [*sessions, *others]]


def _action(hit: Hit) -> str:
    return hit.heading.split("—", 1)[-1].strip().lower()


REPORT_TOKENS = 40


def _whole(name: str, title: str, markdown: str) -> PrimeSection:
    """A section that is always included whole, its tokens off the top of the budget."""
    tokens = estimate_tokens(markdown)
    return PrimeSection(name, title, tokens, tokens, 1 if markdown else 0, 0, markdown)


def share_out(needs: dict[str, int], shares: dict[str, float], total: int) -> dict[str, int]:
    """Caps for each part: its share of ``total``, topped up with what smaller parts leave."""
    caps = {name: 0 for name in needs}
    open_parts = {name for name in needs if needs[name] > 0}
    left = total
    while open_parts and left > 0:
        # fsum: exact, so the caps never depend on the order a set of names comes in
        weight = math.fsum(shares[name] for name in open_parts)
        offer = {name: int(left * shares[name] / weight) for name in open_parts}
        done = {name for name in open_parts if needs[name] - caps[name] <= offer[name]}
        if not done:
            for name in open_parts:
                caps[name] += offer[name]
            break
        for name in done:
            left -= needs[name] - caps[name]
            caps[name] = needs[name]
        open_parts -= done
    return caps


def _fill(
    name: str, title: str, head: str, items: Sequence[str], cap: int, in_order: bool = False
) -> PrimeSection:
    """Keep items in order while the section fits ``cap``; say how many were left out.
    ``in_order``: stop at the first item that does not fit (the lines of one text)."""
    if not items:
        return PrimeSection(name, title, cap, 0, 0, 0, "")
    whole = head + "".join(items)
    if estimate_tokens(whole) <= cap:
        return PrimeSection(name, title, cap, estimate_tokens(whole), len(items), 0, whole)
    kept: list[str] = []
    # tokens are counted on UTF-8 bytes, which add up: a running sum instead of counting the
    # kept text again for every item (a day of 45,000 activities made that 3 s of a prime)
    room = cap * BYTES_PER_TOKEN - size_of(head) - size_of(_left(len(items)))
    for item in items:
        size = size_of(item)
        if size <= room:
            kept.append(item)
            room -= size
        elif in_order:
            break
    left_out = len(items) - len(kept)
    if kept:
        text = head + "".join(kept) + _left(left_out)
    else:
        note = f"_{title}: {left_out} item(s) left out, over this section's budget._\n"
        text = note if estimate_tokens(note) <= cap else ""
    return PrimeSection(name, title, cap, estimate_tokens(text), len(kept), left_out, text)


def _left(count: int) -> str:
    return f"\n_{count} more left out to stay within this section's budget._\n"


_AUTHOR = re.compile(r"- \*\*Author:\*\*\s*(.*)")


def _activity_line(hit: Hit) -> str:
    """An activity as one bullet: time, action and author, then its details and the text
    under it, each part set apart by `` · `` (issue 39.5: they ran together)."""
    when = f"{hit.date.isoformat()} {hit.time.strftime('%H:%M') if hit.time else ''}".strip()
    author, parts = "", []
    for line in hit.text.split("\n")[1:]:
        line = line.strip()
        said = _AUTHOR.fullmatch(line)
        if said:
            author = f" by {said.group(1).strip()}"
        elif line and not ID_LINE.fullmatch(line) and not line.startswith("```"):
            parts.append(line.removeprefix("- "))
    words = " · ".join(parts)
    words = words if len(words) <= 300 else words[:300].rsplit(" ", 1)[0] + " …"
    action = hit.heading.split("—", 1)[-1].strip()
    return f"- {when} **{action}**{author}{' — ' + words if words else ''} ({hit.citation})\n"
