"""``memsite why PATH``: the memory that governs a path of the code (issue 14).

First the decisions and learnings whose ``Paths`` name the path, the current ones before the
superseded ones, each group most specific first: the file itself, then the folders above it
(the nearest first), then globs (the longest literal text first); newest first within one
rank, a decision before a learning of the same day. Then the entries whose text mentions
the path (found by search). Sized to a token budget like ``recall``: the items are taken in
that order while the block fits.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...errors import BUDGET, PATH
from ...store import code, reading, tree
from ...store.format import DECISIONS, LEARNINGS
from ...store.markup import FIELD_SHAPE
from ...store.model import Entry, comma_list
from ..chunks import chunk_file
from ..ranking import Hit, record_hit
from ..supersession import Supersession, supersession
from .recall import render_hit, site_url
from .tokens import estimate_tokens

WHY_BUDGET = 1_500
MENTIONS = 10  # entries that only mention the path, at most
# the most characters of the path the heading shows: a longer one is cut in its middle, so
# that a path of 40,000 characters does not take the budget (issue 22)
SHOWN = 120
# the most characters of a line a shortened governing item keeps (its Why, mostly)
SHORT_WHY = 300

Search = Callable[..., list[Hit]]


@dataclass(frozen=True)
class Governing:
    """One item of ``why``: a hit, ``how`` it matched (``file``, ``folder``, ``glob`` or
    ``mentions``) and the stored path (``pattern``) that matched."""

    hit: Hit
    how: str
    pattern: str

    @property
    def governs(self) -> bool:
        return self.how != "mentions"

    def to_dict(self) -> dict[str, object]:
        return {**self.hit.to_dict(), "match": self.how, "pattern": self.pattern}


@dataclass(frozen=True)
class Why:
    """What ``why`` returns: the path as matched, the items that fit ``budget``, how many did
    not, and the markdown block."""

    path: str
    items: tuple[Governing, ...]
    left_out: int
    budget: int
    tokens: int
    markdown: str
    needed: int = 0

    @property
    def governed(self) -> bool:
        """Whether a current decision or learning governs the path."""
        return any(i.governs and i.hit.status == "current" for i in self.items)

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "budget": self.budget,
            "tokens": self.tokens,
            "left_out": self.left_out,
            "needed_budget": self.needed,
            "items": [item.to_dict() for item in self.items],
            "markdown": self.markdown,
        }


def target(root: Path, path: str, repo: Path | None = None) -> str:
    """``path`` as the entries store paths (relative to the repository root, normalised);
    ``InvalidInput`` when it is outside the repository. ``repo``, when the caller found it,
    spares looking for ``.git`` again (a stat of every folder above the tree)."""
    return code.normalise(path, repo or code.repository_root(root), PATH).rstrip("/")


def why(
    root: Path,
    path: str,
    budget: int,
    search: Search,
    governing: Sequence[Governing] | None = None,
) -> Why:
    """The memory about ``path`` within ``budget`` tokens; ``search`` is ``Memory.search``;
    ``governing`` is ``Governance(root).items(path)`` when the caller already has it."""
    wanted = target(root, path)
    if governing is None:
        governing = Governance(root).items(wanted)
    seen = {item.hit.record or item.hit.id for item in governing}
    mentions = [
        Governing(hit, "mentions", wanted)
        for hit in _mentions(search, wanted)
        if (hit.record or hit.id) not in seen
    ]
    return fit(wanted, [*governing, *mentions[:MENTIONS]], budget, site_url(root))


_PATHS_FIELD = re.compile(r"^" + FIELD_SHAPE + r"(?: (.*)|)$", re.MULTILINE)


def may_govern(root: Path, wanted: str) -> bool:
    """Whether any ``Paths`` line of the cold files could govern ``wanted``: a scan of the
    text, without parsing entries, so that an edit of a file no entry names (the usual case,
    on every edit) costs a read and a regular expression. A line that only looks like a field
    (in a code block) errs towards True; ``Governance`` then decides."""
    for rel in (DECISIONS, LEARNINGS):
        try:
            text = reading.replaced_text(root / rel)
        except (OSError, reading.NotAFile):
            continue
        for found in _PATHS_FIELD.finditer(text):
            if found.group(1).strip().lower() != "paths":
                continue
            patterns = comma_list(found.group(2) or "")
            if code.best_match(patterns, wanted) is not None:
                return True
    return False


def governed_ids(root: Path, wanted: Sequence[str]) -> set[str]:
    """The ids of the decisions and learnings that govern any of ``wanted`` (code paths of the
    repository, or globs of them): for a path, those ``why`` lists; for a glob, those naming a
    path it matches (``search governs:PATH``, issue 39.7)."""
    governance = Governance(root)
    found: set[str] = set()
    for raw in wanted:
        path = target(root, raw)
        if code.is_glob(path):
            found |= {
                entry.id
                for entry in governance.named
                if any(code.match(path, p.rstrip("/")) for p in entry.paths)
                or code.best_match(entry.paths, path) is not None
            }
        else:
            found |= {item.hit.record or item.hit.id for item in governance.items(path)}
    return found


class Governance:
    """The decisions and learnings of one tree that name paths, read once: ``items(path)``
    gives those that govern a path, in ``why``'s order."""

    def __init__(self, root: Path) -> None:
        entries: list[Entry] = []
        self.texts: dict[str, str] = {}
        for rel in (DECISIONS, LEARNINGS):
            parsed, text = tree.read_file(root, rel)
            if text is not None:
                entries += parsed.entries
                self.texts[rel] = text
        self.known = supersession(entries)
        self.named = [e for e in entries if e.paths]
        self._hits: dict[str, Hit] | None = None

    @property
    def hits(self) -> dict[str, Hit]:
        """A hit for every entry that names paths, chunked once for all the paths asked of
        this ``Governance``: chunked again for each path, a live session that touched 3,000
        files re-parsed the cold files 3,000 times, and every ``prime`` took 6 s (SessionStart
        gave up at its 5 s limit)."""
        if self._hits is None:
            self._hits = _entry_hits(self.texts, {e.id for e in self.named}, self.known)
        return self._hits

    def items(self, wanted: str) -> list[Governing]:
        known = self.known
        found = []
        for entry in self.named:
            best = code.best_match(entry.paths, wanted)
            if best is not None:
                found.append((entry, best))
        found.sort(
            key=lambda pair: (
                known.status(pair[0].id, pair[0].kind) == "superseded",
                pair[1].rank,
                -pair[0].date.toordinal(),
                pair[0].kind != "decision",  # on one day, a decision before a learning
                -pair[0].line,
            )
        )
        if not found:
            return []  # nothing governs it: the cold files need not be chunked
        hits = self.hits
        return [
            Governing(hits[entry.id], best.how, best.pattern)
            for entry, best in found
            if entry.id in hits
        ]


def _entry_hits(texts: dict[str, str], ids: set[str], known: Supersession) -> dict[str, Hit]:
    """A hit holding the whole of each entry in ``ids``, with its status."""
    made: dict[str, Hit] = {}
    for rel, text in texts.items():
        chunks = [c for c in chunk_file(rel, text) if c.record in ids]
        for record in dict.fromkeys(c.record for c in chunks):
            if record in made:
                continue  # a duplicate id: the first entry holds
            hit = record_hit(c for c in chunks if c.record == record)
            made[record] = dataclasses.replace(
                hit,
                status=known.status(record, hit.kind),
                superseded_by=known.successor_of(record),
            )
    return made


def _mentions(search: Search, wanted: str) -> list[Hit]:
    """Entries whose text holds the path itself (the search finds its words; the text must
    hold it whole)."""
    phrase = wanted.replace('"', " ").strip()
    if not any(char.isalnum() for char in phrase):
        return []
    hits = search(f'"{phrase}"', limit=MENTIONS * 2, lexical=True)
    # an activity's text no longer repeats its heading (issue 39.5): its action may name it
    return [hit for hit in hits if wanted in hit.text or wanted in hit.heading]


def render_item(item: Governing, base: str | None) -> str:
    """One item: the recalled hit, with the line that says how it governs the path."""
    label = {
        "file": "Governs this file",
        "folder": f"Governs the folder {_span(item.pattern)}",
        "glob": f"Governs {_span(item.pattern)}",
        "mentions": "Mentions this path",
    }[item.how]
    block = render_hit(item.hit, base)
    head, _, rest = block.partition("\n")
    return f"{head}\n{label}.\n{rest}"


def short_item(item: Governing, base: str | None) -> str:
    """A governing item cut to its heading, how it governs, its citation and its Why, with
    the line that says how to read it whole."""
    kept = []
    for line in render_item(item, base).split("\n"):
        kept.append(line if len(line) <= SHORT_WHY else line[:SHORT_WHY].rsplit(" ", 1)[0] + " …")
        if line.startswith("- **Why:**"):
            break
    cut = f"_Shortened to fit: `memsite get {item.hit.record or item.hit.id}` has it whole._\n"
    return "\n".join(kept).rstrip("\n") + "\n" + cut


def fit(wanted: str, items: Sequence[Governing], budget: int, base: str | None) -> Why:
    """Take the items in order while the whole block fits ``budget`` tokens."""
    if not items:
        return Why(wanted, (), 0, budget, 0, "")
    whole = [render_item(item, base) for item in items]
    needed = estimate_tokens(_assemble(wanted, whole, 0, budget, 0))
    kept: list[int] = []
    blocks: list[str] = []
    closed = False  # a governing item did not fit: nothing that only mentions the path may
    for index, item in enumerate(items):
        if closed and not item.governs:
            continue
        # a governing item that does not fit whole comes shortened to its Why (issue 36:
        # at --budget 200 the folder's decision was left out and a progress line kept)
        tries = [whole[index], short_item(item, base)] if item.governs else [whole[index]]
        for block in tries:
            text = _assemble(wanted, [*blocks, block], len(items) - len(kept) - 1, budget, needed)
            if estimate_tokens(text) <= budget:
                kept.append(index)
                blocks.append(block)
                break
        else:
            closed = closed or item.governs
    left_out = len(items) - len(kept)
    markdown = _assemble(wanted, blocks, left_out, budget, needed)
    if estimate_tokens(markdown) > budget:
        # not even the heading and the note of what was left out fit: nothing does
        # (``left_out`` and ``needed`` still say what a larger budget would hold)
        markdown = ""
    taken = tuple(items[i] for i in kept)
    return Why(wanted, taken, left_out, budget, estimate_tokens(markdown), markdown, needed)


def _assemble(wanted: str, blocks: list[str], left_out: int, budget: int, needed: int) -> str:
    more = (
        f"\n_{left_out} more item{'s' if left_out != 1 else ''} left out to stay within "
        f"{budget:,} tokens ({BUDGET.given(needed)} would hold them all)._\n"
        if left_out
        else ""
    )
    count = len(blocks)
    head = f"## Memory about {_span(_shown(wanted))} ({count} item{'s' if count != 1 else ''})\n"
    return head + "\n" + "\n".join(blocks) + more


def _shown(path: str) -> str:
    """``path``, or its first and last characters around a "…" when it is over ``SHOWN``."""
    if len(path) <= SHOWN:
        return path
    half = (SHOWN - 1) // 2
    return f"{path[:half]}…{path[-half:]}"


def _span(text: str) -> str:
    """``text`` as a code span, whatever backticks it holds."""
    ticks = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"
