"""What ``prime`` gathers for a session start: the persona, the live session, the decisions
and learnings that match its task (the newest ones when there is no task; the learnings whose
lesson keeps coming back first), and the activity of the last days, handed to
``recall.render_prime`` to fit the budget."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ...errors import UnsafePath
from ...store import code, reading, tree
from ...store.format import DECISIONS, LEARNINGS
from ...store.model import Entry
from ...store.records import ids_of, read_records
from ...store.session import checkpoints, hot
from ..chunks import Chunk, chunk_file
from ..notices import cosines, entry_terms, recurring, terms
from ..ranking import Hit, Span, record_hit, span_hit
from ..supersession import Supersession, annotate, read_supersession, supersession
from .primed import ACTIVITY_DAYS, Primed, PrimeInputs, render_prime
from .recall import site_url

Search = Callable[..., list[Hit]]
KINDS = ("decision", "learning")
LIMIT = 10  # decisions, and learnings, a prime gathers at most
# what governing a file the live session changed adds to an entry's topic score: as much as
# a close topic (the notices' bar is 0.13), so the session's own code is never left out
FILES = 0.2


def prime(
    root: Path,
    task: str | None,
    budget: int,
    search: Search,
    notice: Callable[[str], None],
    lexical: bool = False,
    after_compact: bool = False,
    use_index: bool = True,
) -> Primed:
    """The session-start payload for the tree at ``root``; ``search`` is ``Memory.search``
    and ``notice`` hears about a broken hot context (prime goes on without it). The live
    session's latest checkpoint joins the hot context, or leads the payload
    ``after_compact`` (issue 11). Without ``use_index`` (a tree whose index was never built:
    building it can outlast a hook) the decisions and learnings are the newest current ones,
    read from the cold files (issue 24)."""
    persona = tree.read_persona(root) or ""
    try:
        context = hot.load(root)
    except (hot.BrokenContext, UnsafePath) as err:
        notice(str(err))
        context = None
    latest = checkpoints.latest(root, context) if context else None
    topic = (task or (context.task if context else "")).strip()
    files = context.files_modified if context else []
    if topic or files:
        found = {kind: for_task(root, kind, topic, files, LIMIT) for kind in KINDS}
        if use_index and topic:  # what the meaning model finds beside the words, after them
            found = {
                kind: beside(hits, search(topic, LIMIT, kind=kind, lexical=lexical))
                for kind, hits in found.items()
            }
        decisions, learnings = found["decision"], found["learning"]
    elif not use_index:
        decisions, learnings = newest(root, DECISIONS, LIMIT), newest(root, LEARNINGS, LIMIT)
    else:
        decisions = search("", limit=LIMIT, kind="decision")
        learnings = search("", limit=LIMIT, kind="learning")
    if not decisions and not learnings:  # nothing matches the task: the newest ones
        decisions, learnings = newest(root, DECISIONS, LIMIT), newest(root, LEARNINGS, LIMIT)
    inputs = PrimeInputs(
        recurring=recurrences(root),
        persona=persona,
        hot=hot.render(context) + governed(root, context.files_modified) if context else "",
        decisions=decisions,
        learnings=learnings,
        activity=_recent_activity(root),
        site=site_url(root),
        checkpoint=latest.render() if latest else "",
        lead=after_compact,
    )
    return render_prime(inputs, budget)


def for_task(root: Path, kind: str, topic: str, files: Sequence[str], limit: int) -> list[Hit]:
    """The current decisions (the records' too) or learnings of the task ``topic`` and the
    live session's ``files``, the closest first, read without the index (issue 36: a fresh
    clone primed on the newest decisions and left the task's out).

    The rule is the notices' TF-IDF cosine (``notices.cosines``) between the task's words
    and each entry's; a current entry also takes the score of each entry it superseded
    (what it replaced asked the same question in its own words: "Harden password hashing"
    names "Switch password hashing to argon2id" better than its tuning), and an entry whose
    ``Paths`` govern a file the session changed scores ``FILES`` more. Entries that score
    nothing are left out; ties go to the newest. Those that do not hold (superseded,
    rejected) come after every current one, for their own words only (a superseded one is
    rendered as one line naming what holds now)."""
    entries, texts = _cold(root, kind)
    held = supersession(entries)
    scores = cosines(terms(topic), [entry_terms(e) for e in entries]) if topic else []
    best: dict[str, float] = {}
    for entry, score in zip(entries, scores, strict=True):
        heir = held.successor_of(entry.id)
        for owner in (entry.id, heir.id if heir else entry.id):
            best[owner] = max(best.get(owner, 0.0), score)
    ranked = []
    for entry, score in zip(entries, scores or [0.0] * len(entries), strict=True):
        if held.status(entry.id, entry.kind) != "current":
            if score > 0:  # after every current one: a superseded one is a line
                ranked.append((True, -score, -entry.date.toordinal(), entry.id))
            continue
        near = any(code.best_match(entry.paths, name) for name in files) if entry.paths else False
        score = best.get(entry.id, 0.0) + (FILES if near else 0.0)
        if score > 0:
            ranked.append((False, -score, -entry.date.toordinal(), entry.id))
    hits = _hits(texts, held)
    return [hits[entry_id] for *_, entry_id in sorted(ranked) if entry_id in hits][:limit]


def beside(mine: Sequence[Hit], found: Sequence[Hit]) -> list[Hit]:
    """``mine``, then the current hits of ``found`` it does not hold, up to ``LIMIT``."""
    held = {hit.record or hit.id for hit in mine}
    more = [hit for hit in found if hit.status == "current" and (hit.record or hit.id) not in held]
    return [*mine, *more][:LIMIT]


def _cold(root: Path, kind: str) -> tuple[list[Entry], dict[str, str]]:
    """Every decision (the cold file's and the records') or learning, with the texts of the
    files they are in."""
    rel = DECISIONS if kind == "decision" else LEARNINGS
    parsed, text = tree.read_file(root, rel)
    entries, texts = list(parsed.entries), {rel: text} if text is not None else {}
    if kind == "decision":
        records = read_records(root, ids_of(entries))
        entries += records.entries
        texts.update(records.texts)
    return entries, texts


def _hits(texts: Mapping[str, str], held: Supersession) -> dict[str, Hit]:
    """A hit holding the whole of each entry of ``texts``, by id (the first of an id)."""
    by_record: dict[str, list[Chunk]] = {}
    for rel, text in texts.items():
        for chunk in chunk_file(rel, text):
            if chunk.record and chunk.kind in KINDS:
                by_record.setdefault(chunk.record, []).append(chunk)
    hits = annotate([record_hit(chunks) for chunks in by_record.values()], held)
    return {hit.record: hit for hit in hits}


def recurrences(root: Path) -> dict[str, int]:
    """How many times each learning's lesson was recorded, for those recorded more than once
    (issue 27: a lesson that keeps coming back is the one an agent most needs)."""
    parsed, _ = tree.read_file(root, LEARNINGS)
    return {e.id: r.count for r in recurring(parsed.entries) for e in r.occurrences}


def newest(root: Path, rel: str, limit: int) -> list[Hit]:
    """The newest current records of a cold file, read without the index."""
    text = tree.read_file(root=root, rel=rel)[1]
    by_record: dict[str, list[Chunk]] = {}
    for chunk in chunk_file(rel, text) if text is not None else ():
        if chunk.record:
            by_record.setdefault(chunk.record, []).append(chunk)
    hits = annotate([record_hit(chunks) for chunks in by_record.values()], read_supersession(root))
    current = [hit for hit in hits if hit.status != "superseded"]
    current.sort(key=lambda hit: hit.date, reverse=True)
    return current[:limit]


def _recent_activity(root: Path) -> list[Hit]:
    """The activities of the newest ``ACTIVITY_DAYS`` day logs (archived ones too), newest
    first."""
    logs = sorted(
        [
            *root.glob("warm/????-??-??.md"),
            *root.glob("warm/archive/*/????-??-??.md"),
        ],
        key=lambda p: p.name,
        reverse=True,
    )[:ACTIVITY_DAYS]
    activity = []
    for path in logs:
        rel = path.relative_to(root).as_posix()
        try:
            chunks = chunk_file(rel, reading.replaced_text(path))
        except (OSError, reading.NotAFile):  # a FIFO there would wait for a writer
            continue
        activity += [span_hit(Span((c,), c, 0.0)) for c in chunks if c.kind == "activity"]
    activity.sort(key=lambda h: (h.date, h.time or dt.time()), reverse=True)
    return activity


def governed(root: Path, files: list[str]) -> str:
    """The current decisions that govern the live session's files, one line each, as a
    section of "Where were we?" (issue 14); "" when none does."""
    from ...errors import InvalidInput
    from .why import Governance, target

    if not files:
        return ""
    # one Governance for every file, which chunks the cold files once (its ``hits``), and
    # one look for the repository: per file, 3,000 files made every prime take 6 s
    governance = Governance(root)
    repo = code.repository_root(root)
    lines: dict[str, list[str]] = {}
    for name in files:
        try:
            path = target(root, name, repo)
        except InvalidInput:
            continue
        for item in governance.items(path):
            hit = item.hit
            if hit.kind == "decision" and hit.status == "current":
                title = hit.heading.split("—", 1)[-1].strip()
                lines.setdefault(hit.record, [f"- {title} (`{hit.record}`): governs"]).append(path)
    if not lines:
        return ""
    rows = [f"{head} {', '.join(f'`{p}`' for p in paths)}" for head, *paths in lines.values()]
    return "\n## Decisions governing this session's files\n\n" + "\n".join(rows) + "\n"
