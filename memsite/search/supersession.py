"""Which decisions (and learnings) still hold: supersession chains, for every hit (issue 16).

An agent acts on what recall gives it, so a decision that a later one replaced must never be
handed over as if it were current. A hit of a superseded entry carries ``superseded_by``: the
newest entry at the end of its chain (A ← B ← C gives A and B both ``superseded_by`` C).

A decision record read in place (issue 26) links from either side: its ``superseded-by``
field (the old record said so) counts as the newer one's ``supersedes``, and a record that
is ``proposed``, ``rejected`` or ``deprecated`` has that status rather than ``current``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..store import tree
from ..store.format import DECISIONS, LEARNINGS
from ..store.model import Entry, Successor

if TYPE_CHECKING:
    from .chunks import Chunk
    from .ranking import Hit

# Entry kinds that can supersede one of their own kind.
SUPERSEDABLE = ("decision", "learning")
# the statuses of decisions that do not hold: ``search --current`` leaves them out
NOT_HOLDING = ("superseded", "rejected", "deprecated")


@dataclass(frozen=True)
class Supersession:
    """``successor`` of every superseded entry (the newest of its chain), by entry id, and
    the status of each decision record that is not accepted (``states``)."""

    successor: dict[str, Successor]
    states: dict[str, str] = dataclasses.field(default_factory=dict)

    def status(self, entry_id: str, kind: str) -> str | None:
        """``current`` or ``superseded`` for decisions and learnings (a record's own
        ``proposed``, ``rejected`` or ``deprecated`` too), None for other kinds."""
        if kind not in SUPERSEDABLE:
            return None
        if entry_id in self.successor:
            return "superseded"
        return self.states.get(entry_id, "current")

    def successor_of(self, entry_id: str) -> Successor | None:
        return self.successor.get(entry_id)


def supersession(entries: Iterable[Entry]) -> Supersession:
    """Follow every ``supersedes`` chain to its newest entry; a cycle stops where it repeats."""
    by_id: dict[str, Entry] = {}
    replaced_by: dict[str, str] = {}
    states: dict[str, str] = {}
    for entry in entries:
        if entry.kind not in SUPERSEDABLE:
            continue
        by_id.setdefault(entry.id, entry)
    links = [((e.supersedes or "").strip(), e) for e in by_id.values()]
    # a record that says "superseded by" names the newer one, which may not say it back
    links += [
        (e.id, by_id[newer])
        for e in by_id.values()
        if (newer := e.fields.get("superseded-by", "").strip()) in by_id
    ]
    for target, entry in links:
        older = by_id.get(target)
        if older is None or older.kind != entry.kind or target == entry.id:
            continue
        current = replaced_by.get(target)
        # two entries superseding one: the newer one holds
        if current is None or _when(entry) >= _when(by_id[current]):
            replaced_by[target] = entry.id
    for entry in by_id.values():
        state = entry.fields.get("status", "") if entry.fields.get("record") else ""
        if state in ("proposed", "rejected", "deprecated", "superseded"):
            states[entry.id] = state
    successor: dict[str, Successor] = {}
    for entry_id in replaced_by:
        seen = {entry_id}
        newest = replaced_by[entry_id]
        while newest in replaced_by and replaced_by[newest] not in seen:
            seen.add(newest)
            newest = replaced_by[newest]
        last = by_id[newest]
        successor[entry_id] = Successor(last.id, last.title, last.date)
    return Supersession(successor, states)


def _when(entry: Entry) -> tuple[dt.date, int]:
    return entry.date, entry.line


def read_supersession(root: Path) -> Supersession:
    """The supersession chains of the tree's decisions and learnings, and of its decision
    records."""
    entries: list[Entry] = []
    for rel in (DECISIONS, LEARNINGS):
        if (root / rel).is_file():
            entries += tree.read_file(root, rel)[0].entries
    from ..store.records import ids_of, read_records  # the records' parsers: not for decide

    return supersession([*entries, *read_records(root, ids_of(entries)).entries])


class Chains:
    """The supersession chains of one tree, and the chunks of its cold files, read again
    only when a cold file changed (a long-lived ``Memory``, as the MCP server keeps, reads
    them once per change, not once per recall). With a ``cache`` file (beside the index)
    the chains outlive the process too: a hook process, started for every prompt, no longer
    parses the cold files each time (issue 24: 0.21 s of each turn at a year)."""

    def __init__(self, root: Path, cache: Path | None = None) -> None:
        self.root = root
        self.cache = cache
        self._read: tuple[list[tuple[int, int] | None], Supersession] | None = None
        self._chunks: tuple[list[tuple[int, int] | None], dict[str, list[Chunk]]] | None = None

    def _stamp(self) -> list[tuple[int, int] | None]:
        stamp: list[tuple[int, int] | None] = []
        for rel in (DECISIONS, LEARNINGS, "memsite.toml"):
            try:
                info = (self.root / rel).stat()
                stamp.append((info.st_mtime_ns, info.st_size))
            except OSError:
                stamp.append(None)
        # the records of the ``[records]`` folders, which the settings file names
        from ..store.records import record_stats

        stamp += [s for _, s in sorted(record_stats(self.root).items())]
        return stamp

    def current(self) -> Supersession:
        stamp = self._stamp()
        if self._read is None or self._read[0] != stamp:
            kept = self._kept(stamp)
            self._read = (stamp, kept if kept is not None else read_supersession(self.root))
            if kept is None:
                self._keep(stamp, self._read[1])
        return self._read[1]

    def _kept(self, stamp: list[tuple[int, int] | None]) -> Supersession | None:
        """The chains the cache holds for these stamps of the cold files, if it does."""
        if self.cache is None:
            return None
        try:
            data = json.loads(self.cache.read_text("utf-8"))
            if data.get("stamp") != [list(s) if s else None for s in stamp]:
                return None
            return Supersession(
                {
                    old: Successor(new, title, dt.date.fromisoformat(day))
                    for old, (new, title, day) in data["successor"].items()
                },
                {str(k): str(v) for k, v in data.get("states", {}).items()},
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None  # missing, damaged or of another shape: read the cold files

    def _keep(self, stamp: list[tuple[int, int] | None], known: Supersession) -> None:
        if self.cache is None:
            return
        data = {
            "stamp": [list(s) if s else None for s in stamp],
            "successor": {
                old: [new.id, new.title, new.date.isoformat()]
                for old, new in known.successor.items()
            },
            "states": dict(known.states),
        }
        # a cache beside the index, outside the tree: best effort, replaced atomically
        with contextlib.suppress(OSError):
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            import tempfile  # a search's: decide and learn never keep the chains

            fd, tmp = tempfile.mkstemp(prefix=f".{self.cache.name}.", dir=self.cache.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(data, handle)
                os.replace(tmp, self.cache)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def chunks(self) -> dict[str, list[Chunk]]:
        """The chunks of the decisions and learnings, by record id."""
        from ..store.records import read_records
        from .chunks import chunk_file

        stamp = self._stamp()
        if self._chunks is None or self._chunks[0] != stamp:
            by_record: dict[str, list[Chunk]] = {}
            texts = [
                (rel, tree.read_file(root=self.root, rel=rel)[1], None)
                for rel in (DECISIONS, LEARNINGS)
            ]
            found = read_records(self.root)
            texts += [(e.path, found.texts.get(e.path), e) for e in found.entries]
            for rel, text, entry in texts:
                chunks = chunk_file(rel, text, entries=[entry] if entry else None) if text else ()
                for chunk in chunks:
                    if chunk.record:
                        by_record.setdefault(chunk.record, []).append(chunk)
            self._chunks = (stamp, by_record)
        return self._chunks[1]


def settle(hits: Sequence[Hit], known: Supersession, limit: int, current: bool) -> list[Hit]:
    """The best ``limit`` hits, each with its status; among near-tied scores current entries
    first, and with ``current`` no superseded entry at all."""
    from .ranking import NEAR_TIE  # ranking loads with the hits, never for decide or learn

    settled = current_first_among_ties(annotate(hits, known), NEAR_TIE)
    if current:
        settled = [hit for hit in settled if hit.status not in NOT_HOLDING]
    return settled[:limit]


def annotate(hits: Sequence[Hit], known: Supersession) -> list[Hit]:
    """Each hit with its ``status`` and, when superseded, ``superseded_by``."""
    return [
        dataclasses.replace(
            hit,
            status=known.status(hit.record or hit.id, hit.kind),
            superseded_by=known.successor_of(hit.record or hit.id),
        )
        for hit in hits
    ]


def current_first_among_ties(hits: Sequence[Hit], tolerance: float) -> list[Hit]:
    """Score order, except that within a run of near-tied scores (within ``tolerance`` of the
    run's top) current entries come before superseded ones."""
    out: list[Hit] = []
    start = 0
    ordered = list(hits)
    while start < len(ordered):
        top = ordered[start].score
        end = start + 1
        while end < len(ordered) and top - ordered[end].score <= tolerance * max(top, 1e-9):
            end += 1
        out += sorted(ordered[start:end], key=lambda h: h.status == "superseded")
        start = end
    return out


def with_successors(
    chains: Chains,
    hits: Sequence[Hit],
    fetch: Callable[[dict[str, str]], dict[str, list[Chunk]]] | None = None,
) -> list[Hit]:
    """``hits`` with the entry that now holds placed right before each superseded hit: moved
    up when it ranked lower, read when it was not among them (issue 16: an agent acts on what
    it is given, so it reads what holds first). ``fetch`` reads the sections of the records
    asked (``{record: path}``) from the index, which every recall has open; without it the
    cold files are chunked (issue 24: that took 0.34 s of each recall at a year)."""
    from .ranking import record_hit

    def key(hit: Hit) -> str:
        return hit.record or hit.id

    wanted = {hit.superseded_by.id for hit in hits if hit.superseded_by is not None}
    if not wanted:
        return list(hits)
    holders: dict[str, Hit] = {key(hit): hit for hit in hits if key(hit) in wanted}
    if fetch is None:
        known = chains.chunks()
    else:
        paths = {
            hit.superseded_by.id: hit.path
            for hit in hits
            if hit.superseded_by is not None and hit.superseded_by.id not in holders
        }
        known = fetch(paths) if paths else {}
    for record in wanted - holders.keys():
        if record in known:
            holders[record] = dataclasses.replace(record_hit(known[record]), status="current")
    out: list[Hit] = []
    placed: set[str] = set()
    for hit in hits:
        if key(hit) in placed:
            continue
        successor = hit.superseded_by.id if hit.superseded_by else None
        holder = holders.get(successor) if successor and successor not in placed else None
        if holder is not None:
            score = max(holder.score, hit.score)
            out.append(dataclasses.replace(holder, score=score))
            placed.add(key(holder))
        out.append(hit)
        placed.add(key(hit))
    return out
