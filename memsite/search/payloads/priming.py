"""What ``prime`` gathers for a session start: the persona, the live session, the decisions
and learnings that match its task (the newest ones when there is no task; the learnings whose
lesson keeps coming back first), and the activity of the last days, handed to
``recall.render_prime`` to fit the budget."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from ...errors import UnsafePath
from ...store import storage, tree
from ...store.format import DECISIONS, LEARNINGS
from ...store.session import checkpoints, hot
from ..chunks import Chunk, chunk_file
from ..notices import recurring
from ..ranking import Hit, Span, record_hit, span_hit
from ..supersession import annotate, read_supersession
from .primed import ACTIVITY_DAYS, Primed, PrimeInputs, render_prime
from .recall import site_url

Search = Callable[..., list[Hit]]


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
    decisions = search(topic, 10, kind="decision", lexical=lexical) if topic and use_index else []
    learnings = search(topic, 10, kind="learning", lexical=lexical) if topic and use_index else []
    if not use_index:
        decisions, learnings = newest(root, DECISIONS, 10), newest(root, LEARNINGS, 10)
    elif not topic:
        decisions = search("", limit=10, kind="decision")
        learnings = search("", limit=10, kind="learning")
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
            chunks = chunk_file(rel, storage.replaced_text(path))
        except (OSError, storage.NotAFile):  # a FIFO there would wait for a writer
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
    governance = Governance(root)
    lines: dict[str, list[str]] = {}
    for name in files:
        try:
            path = target(root, name)
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
