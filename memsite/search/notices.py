"""What a new entry may replace or repeat (issue 27): memory that notices.

Supersession only works when the writer knows what is superseded. So a decision just written
is compared with the current decisions (the tree's and its decision records'): one that
governs the same file, or an overlapping path with a topic close enough, or a topic close
enough on its own, is a decision it *may supersede*; a learning about to be written is
compared with the current learnings, and the closest one above the bar is the one it
*repeats*.

The topic rule is a TF-IDF cosine between stemmed words (title twice, why, tags; a record's
title twice and the opening of its body), computed here over the entries of the two cold
files and the records: no index and no model, so ``decide`` and ``learn`` stay on the light
write path (docs/architecture.md). Its bars were tuned on half of the devset's known
supersession pairs and measured on the other half (``bench/bench_notices.py``,
docs/benchmarks.md).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..store import config, tree
from ..store.format import DECISIONS, LEARNINGS
from ..store.model import Entry, Notice, Written, comma_list
from .supersession import supersession

# A decision whose topic cosine reaches this may be replaced by the new one: the lowest bar at
# which no unrelated decision of the tuning half got a notice; it names 7 of the 8 held-out
# pairs, and none of the held-out unrelated decisions (bench/bench_notices.py).
TOPIC = 0.13
# A decision governing an overlapping folder or glob (or, for ``check --overlaps``, any common
# path) needs this much topic in common: on the sample, decisions that share code but answer
# other questions score 0.07 at most, the kill switch and the legacy code's removal 0.48.
NEAR_PATH = 0.10
# A learning this close to a current one repeats it: on the sample, each learning said again
# finds its closest other at 0.28 at most, the bcrypt lesson said again its own at 0.58.
REPEAT = 0.35
# A close topic alone names a decision (or a repeated learning) only when they have this
# many distinct words in common (issue 36: "Use Tailwind for the admin UI" was told it may
# replace "Hash admin passwords with scrypt too", "admin" being rare in the sample).
SHARED = 2
# The repeat rule weighs words as if the learnings were this many more, none holding them:
# in a memory of a few learnings every shared word looked common (idf near 0), and "Floats
# lose cents when multiplied" scored 0.20 against "Float multiply loses cents", its own why
# said again word for word (issue 36).
BACKGROUND = 20
# At most this many candidates are named, the closest first.
MOST = 3
# The words of a record body that count (its opening states the question).
RECORD_WORDS = 120

_WORD = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")
_STOP_TEXT = """a about above after again all also an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having here how i if in into is it its itself just more most no nor not now of
    off on once only or other our out over own same should so some such than that the their them
    then there these they this those through to too under until up very was we were what when
    where which while who why will with would you your use used using make made new we'll it's
    will shall may might must one two"""
_STOP = frozenset(_STOP_TEXT.split())
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s")


def stem(word: str) -> str:
    """A crude English stem: enough for ``passwords``/``password``, ``hashing``/``hash``."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """The stemmed words of ``text`` that carry a topic (no stop words, no single letters)."""
    words = _WORD.findall(text.lower())
    return [stem(w) for w in words if len(w) > 1 and w not in _STOP]


def entry_terms(entry: Entry) -> list[str]:
    """What an entry is about: its title twice, its why (or a record's opening), its tags."""
    title = terms(entry.title)
    if entry.fields.get("record"):
        rest = terms(entry.body)[:RECORD_WORDS]
    else:
        rest = terms(" ".join(filter(None, (entry.why, entry.risk))))
    return [*title, *title, *rest, *terms(" ".join(entry.tags))]


def new_terms(title: str, why: str | None, tags: Iterable[str] = ()) -> list[str]:
    """The same for an entry not read back from the tree yet."""
    head = terms(title)
    return [*head, *head, *terms(why or ""), *terms(" ".join(tags))]


def weighed(docs: Sequence[Sequence[str]], background: int = 0) -> list[dict[str, float]]:
    """Each of ``docs`` as TF-IDF weights, the idf taken over ``docs`` together and
    ``background`` documents that hold none of their words."""
    bags = [Counter(doc) for doc in docs]
    df: Counter[str] = Counter()
    for bag in bags:
        df.update(bag.keys())
    total = len(bags) + background
    idf = {term: math.log((total + 1) / (count + 0.5)) for term, count in df.items()}
    return [{t: (1 + math.log(n)) * idf[t] for t, n in bag.items()} for bag in bags]


def cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    norms = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
    return sum(w * b.get(t, 0.0) for t, w in a.items()) / norms if norms else 0.0


def cosines(
    query: Sequence[str], docs: Sequence[Sequence[str]], background: int = 0
) -> list[float]:
    """The TF-IDF cosine of ``query`` with each of ``docs`` (idf over ``docs``, the query
    and ``background`` documents that hold none of their words)."""
    asked, *have = weighed([query, *docs], background)
    return [cosine(asked, doc) for doc in have]


def shared(query: Sequence[str], doc: Sequence[str]) -> int:
    """How many distinct words ``query`` and ``doc`` have in common."""
    return len(set(query) & set(doc))


def overlap(mine: Iterable[str], theirs: Iterable[str]) -> tuple[str, str] | None:
    """The first pair of stored paths that govern common code (``file`` when the same path
    is named by both), or None: ``("file", path)`` or ``("near", path)``."""
    theirs = list(theirs)
    near = None
    for a in mine:
        for b in theirs:
            if a.rstrip("/") == b.rstrip("/"):
                return ("file", b)
            if near is None and (_covers(a, b) or _covers(b, a)):
                near = ("near", b)
    return near


def _covers(pattern: str, other: str) -> bool:
    """Whether ``pattern`` governs ``other`` (a glob ``other`` by the folder before its
    first wildcard)."""
    from ..store import code  # the glob matcher, for a decision that names paths only

    stem_of = other.rstrip("/")
    if code.is_glob(stem_of):
        stem_of = stem_of[: min(stem_of.index(c) for c in code.GLOB_CHARACTERS if c in stem_of)]
        stem_of = stem_of.rstrip("/") or stem_of
    return bool(stem_of) and code.match(pattern, stem_of) is not None


def _records(root: Path) -> list[Entry]:
    """The decisions of the tree's decision records (issue 26): none when there is no
    settings file to name their folders, and then their parsers never load (issue 35)."""
    if not config.path(root).exists():
        return []
    from ..store.records import read_records

    return read_records(root).entries


def current(root: Path, kind: str) -> list[Entry]:
    """The current decisions (those of ``cold/decisions.md`` and the records) or learnings."""
    if kind == "decision":
        parsed, _ = tree.read_file(root, DECISIONS)
        entries = [*parsed.entries, *_records(root)]
    else:
        parsed, _ = tree.read_file(root, LEARNINGS)
        entries = list(parsed.entries)
    held = supersession(entries)
    return [e for e in entries if held.status(e.id, e.kind) == "current"]


def may_supersede(
    root: Path,
    title: str,
    why: str | None,
    *,
    paths: Iterable[str] = (),
    tags: Iterable[str] = (),
    skip: Iterable[str] = (),
) -> list[Notice]:
    """The current decisions a new decision (``title``, ``why``, the stored ``paths`` it
    governs) may replace, the closest first; ``skip``: ids never named (the new decision's
    own, the one its ``supersedes`` names)."""
    left_out = set(skip)
    decisions = [e for e in current(root, "decision") if e.id not in left_out]
    return rank(new_terms(title, why, tags), list(paths), decisions)


def rank(query: Sequence[str], paths: Sequence[str], decisions: Sequence[Entry]) -> list[Notice]:
    """The rule of ``may_supersede`` over given decisions."""
    have = [entry_terms(e) for e in decisions]
    scores = cosines(query, have)
    found = []
    for entry, score, words in zip(decisions, scores, have, strict=True):
        common = overlap(paths, entry.paths) if paths else None
        if common is not None and (common[0] == "file" or score >= NEAR_PATH):
            why = f"governs {common[1]}"
        elif score >= TOPIC and shared(query, words) >= SHARED:
            why = f"close topic ({score:.2f})"
        else:
            continue
        found.append((common is None, -score, Notice(entry.id, entry.title, entry.date, why)))
    found.sort(key=lambda item: item[:2])
    return [notice for *_, notice in found[:MOST]]


def repeats(root: Path, title: str, why: str | None, tags: Iterable[str] = ()) -> Notice | None:
    """The current learning that a new one (``title``, ``why``) repeats, or None."""
    learnings = current(root, "learning")
    if not learnings:
        return None
    asked, have = new_terms(title, why, tags), [entry_terms(e) for e in learnings]
    scores = cosines(asked, have, BACKGROUND)
    score, words, entry = max(zip(scores, have, learnings, strict=True), key=lambda t: t[0])
    if score < REPEAT or shared(asked, words) < SHARED:
        return None
    return Notice(entry.id, entry.title, entry.date, f"close topic ({score:.2f})")


def after_decision(
    root: Path, entry_id: str, title: str, fields: Mapping[str, str], notice: Callable[[str], None]
) -> Written:
    """The decision ``entry_id`` just written, with the current decisions it may replace. It
    runs after the write, so a failure to look is one ``notice``, never an error: the
    decision is on disk. The decision its ``supersedes`` names is not named again."""
    skip = (entry_id, fields.get("supersedes", "").strip())
    paths, tags = comma_list(fields.get("paths", "")), comma_list(fields.get("tags", ""))
    try:
        found = may_supersede(root, title, fields.get("why"), paths=paths, tags=tags, skip=skip)
    except Exception as err:  # noqa: BLE001 (the decision is written: say it, go on)
        notice(f"decision {entry_id} is written; looking for what it may replace failed: {err}")
        found = []
    return Written(entry_id, found)


def before_learning(
    root: Path,
    title: str,
    fields: dict[str, str],
    tags: Iterable[str],
    notice: Callable[[str], None],
) -> Notice | None:
    """The learning a new one repeats, recorded in its ``fields`` as ``repeats``; None for
    one that corrects another (``supersedes``) or repeats none. A failure to look is one
    ``notice``: the learning is still written, without the field."""
    if "supersedes" in fields:
        return None
    try:
        found = repeats(root, title, fields.get("why"), list(tags))
    except Exception as err:  # noqa: BLE001 (never refuse a write because of a notice)
        notice(f"looking for the learning this one repeats failed: {err}")
        return None
    if found is not None:
        fields["repeats"] = found.id
    return found


@dataclass(frozen=True)
class Overlap:
    """Two current decisions that govern common code and look like answers to one question."""

    first: Entry
    second: Entry
    path: str
    score: float


def overlaps(root: Path) -> list[Overlap]:
    """Pairs of current decisions that govern a common path with topics at least
    ``NEAR_PATH`` close (``memsite check --overlaps``), oldest pair first."""
    every = current(root, "decision")
    # the idf of every current decision, so a pair scores the same whatever else governs code
    vectors = dict(
        zip([e.id for e in every], weighed([entry_terms(e) for e in every]), strict=True)
    )
    decisions = [e for e in every if e.paths]
    found = []
    for i, first in enumerate(decisions):
        for second in decisions[i + 1 :]:
            shared = overlap(first.paths, second.paths)
            score = cosine(vectors[first.id], vectors[second.id]) if shared else 0.0
            if shared is not None and score >= NEAR_PATH:
                found.append(Overlap(first, second, shared[1], score))
    return sorted(found, key=lambda o: (o.first.when, o.second.when))


@dataclass(frozen=True)
class Recurrence:
    """A lesson that keeps coming back: its occurrences, newest first."""

    occurrences: tuple[Entry, ...]

    @property
    def count(self) -> int:
        return len(self.occurrences)

    @property
    def latest(self) -> Entry:
        return self.occurrences[0]

    def to_dict(self) -> dict[str, object]:
        return {
            "count": self.count,
            "title": self.latest.title,
            "latest": self.latest.date.isoformat(),
            "occurrences": [
                {"id": e.id, "title": e.title, "date": e.date.isoformat(), "path": e.path}
                for e in self.occurrences
            ],
        }


def recurring(entries: Iterable[Entry]) -> list[Recurrence]:
    """The learnings that repeat, grouped by the first of each ``Repeats`` chain, the group
    with the newest occurrence first."""
    learnings = {e.id: e for e in entries if e.kind == "learning"}

    def origin(entry: Entry) -> str:
        seen = {entry.id}
        at = entry
        while (
            older := (at.fields.get("repeats") or "").strip()
        ) in learnings and older not in seen:
            seen.add(older)
            at = learnings[older]
        return at.id

    groups: dict[str, list[Entry]] = {}
    for entry in learnings.values():
        groups.setdefault(origin(entry), []).append(entry)
    found = [
        Recurrence(tuple(sorted(group, key=lambda e: (e.when, e.line), reverse=True)))
        for group in groups.values()
        if len(group) > 1
    ]
    return sorted(found, key=lambda r: (r.latest.when, r.latest.line), reverse=True)
