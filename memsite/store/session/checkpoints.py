"""Checkpoints of the live session (issue 11): when an agent's context window is compacted,
what it was doing is written to the day's warm log as a ``### HH:MM:SS — checkpoint``
activity, and the hot context lists its newest checkpoints.

A checkpoint entry holds, as details, the session id, the ``trigger`` (``auto`` or ``manual``
compaction by the harness, ``threshold`` for the 80% rule), ``tokens_before`` and
``tokens_after`` when known, ``completes`` (the checkpoint whose summary the harness delivered
later: entries are only ever appended, never edited) and a ``note`` (a summarizer that
failed); the summary as its result; the hot context at that moment as its body, as a session
archive holds it. Takes text already checked and redacted and a ``now`` already chosen.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import InvalidInput
from .. import inputs, reading, storage, tree
from ..format import parse_entries
from ..journal import Journal
from ..model import Entry, HotContext
from . import THRESHOLD, hot, live, summaries

ACTION = "checkpoint"
TRIGGERS = ("auto", "manual", "threshold")
KEEP = 5  # how many checkpoint ids the hot context lists
MATERIAL_DAYS = 14  # how many day logs back a session's material is looked for

# (hot context, the session's entries since its last checkpoint) -> (summary, note)
Summarize = Callable[[HotContext, list[Entry]], tuple[str, str]]


@dataclass(frozen=True)
class Fullness:
    """How full an agent's context window is, against the checkpoint threshold."""

    used: int
    window: int
    threshold: float = THRESHOLD

    @property
    def share(self) -> float:
        return self.used / self.window

    @property
    def due(self) -> bool:
        return self.share >= self.threshold

    def describe(self) -> str:
        return (
            f"context window {self.share:.0%} full ({self.used:,} of {self.window:,} tokens)"
            f"{'' if self.due else f', under the {self.threshold:.0%} threshold'}"
        )


def fullness(used: int, window: int | None, threshold: float = THRESHOLD) -> Fullness:
    """How full the window is; each number checked (``BadNumber``), so that ``share`` is a
    finite division (a 400-digit ``used`` once overflowed it)."""
    window = inputs.count(window, "window", 1, inputs.MAX_TOKENS)
    used = inputs.count(used, "used", 0, inputs.MAX_TOKENS)
    threshold = inputs.real(threshold, "threshold", 0, 1, low_open=True)
    return Fullness(used, window, threshold)


def tokens(value: int | None, name: str) -> int | None:
    """A count of tokens before or after compaction, when known (``BadNumber`` when it is
    not a whole number up to ``MAX_TOKENS``: it is written, and read back as an int)."""
    return None if value is None else inputs.count(value, name, 0, inputs.MAX_TOKENS)


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint as read back from the warm log."""

    id: str
    when: dt.datetime
    session_id: str
    trigger: str
    summary: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    completes: str | None = None
    note: str = ""

    @classmethod
    def of(cls, entry: Entry) -> Checkpoint:
        def count(key: str) -> int | None:
            value = entry.details.get(key, "").replace(",", "").strip()
            return int(value) if value.isdigit() else None

        return cls(
            id=entry.id,
            when=entry.when,
            session_id=entry.details.get("session_id", ""),
            trigger=entry.details.get("trigger", ""),
            summary=entry.result,
            tokens_before=count("tokens_before"),
            tokens_after=count("tokens_after"),
            completes=entry.details.get("completes") or None,
            note=entry.details.get("note", ""),
        )

    def render(self) -> str:
        """The checkpoint as markdown for an agent: "Since the last checkpoint"."""
        sizes = []
        if self.tokens_before is not None:
            sizes.append(f"{self.tokens_before:,} tokens before")
        if self.tokens_after is not None:
            sizes.append(f"{self.tokens_after:,} after")
        said = f", {', '.join(sizes)}" if sizes else ""
        return (
            f"## Since the last checkpoint\n\n"
            f"_Checkpoint {self.when:%Y-%m-%d %H:%M} ({self.trigger}{said}), "
            f"session `{self.session_id}`._\n\n{self.summary.strip()}\n"
        )


def is_checkpoint(entry: Entry) -> bool:
    return entry.kind == "activity" and entry.title == ACTION and "trigger" in entry.details


def material(root: Path, context: HotContext, now: dt.datetime) -> list[Entry]:
    """The session's warm entries since it started and after its last checkpoint, oldest
    first (checkpoints themselves left out)."""
    start = hot.moment(context.started) or now
    entries = []
    day = max(start.date(), now.date() - dt.timedelta(days=MATERIAL_DAYS))
    while day <= now.date():
        entries += _day_entries(root, day)
        day += dt.timedelta(days=1)
    entries = [e for e in entries if e.when >= start.replace(microsecond=0)]
    entries.sort(key=lambda e: (e.when, e.line))
    last = [
        i
        for i, e in enumerate(entries)
        if is_checkpoint(e) and e.details.get("session_id") == context.session_id
    ]
    if last:
        entries = entries[last[-1] + 1 :]
    return [e for e in entries if not is_checkpoint(e)]


def record(
    journal: Journal,
    trigger: str,
    summarize: Summarize,
    now: dt.datetime,
    *,
    tokens_before: int | None = None,
    tokens_after: int | None = None,
    completes_latest: bool = False,
) -> str:
    """Write a checkpoint of the live session and list it in the hot context (both or
    neither); returns its id. ``summarize`` is given the hot context and the session's
    material and returns the summary and a note; ``completes_latest`` makes this the
    completion of the session's latest checkpoint (its trigger and tokens before carry over).
    """
    if trigger not in TRIGGERS:
        raise InvalidInput(f"trigger {trigger!r}: use one of {', '.join(TRIGGERS)}")
    root = journal.root
    # a summarizer may take a minute: it runs before the hot context is locked
    context = live.require(root)
    summary, note = summarize(context, material(root, context, now))
    with storage.lock(root / hot.LOCK):
        context = live.require(root)
        earlier = latest(root, context) if completes_latest else None
        state, body = live.snapshot(context)
        details = {"session_id": context.session_id, "trigger": trigger}
        if earlier is not None:
            details["completes"] = earlier.id
            if tokens_before is None:
                tokens_before = earlier.tokens_before
        if tokens_before is not None:
            details["tokens_before"] = str(tokens_before)
        if tokens_after is not None:
            details["tokens_after"] = str(tokens_after)
        if note:
            details["note"] = note
        details.update({k: v for k, v in state.items() if k != "session_id"})

        def list_it(entry_id: str) -> None:
            context.checkpoints = [*context.checkpoints, entry_id][-KEEP:]
            # the agent's context is compacted at a checkpoint: the memory it was given
            # before an edit is no longer in it, so the next edit of that file gets it again
            context.recalled = []
            context.updated = now.isoformat()
            hot.save(root, context)

        return journal.append_activity(
            now,
            ACTION,
            details,
            summary,
            body,
            about=f"{ACTION} {context.session_id}",
            then=list_it,
        )


@dataclass(frozen=True)
class Checkpointed:
    """What ``take`` did: the new checkpoint's id, or None when the window was not full
    enough; and how full it was, when that was given."""

    id: str | None
    fullness: Fullness | None = None


def take(
    journal: Journal,
    trigger: str,
    summarize: Summarize,
    now: dt.datetime,
    *,
    gauge: Fullness | None = None,
    tokens_before: int | None = None,
    tokens_after: int | None = None,
    completes_latest: bool = False,
) -> Checkpointed:
    """``record``, unless ``gauge`` says the window is under its threshold (the 80% rule):
    then nothing is written. With a gauge, the tokens used are the tokens before."""
    tokens_before = tokens(tokens_before, "tokens_before")
    tokens_after = tokens(tokens_after, "tokens_after")
    if gauge is not None:
        if not gauge.due:
            return Checkpointed(None, gauge)
        tokens_before = gauge.used if tokens_before is None else tokens_before
    entry_id = record(
        journal,
        trigger,
        summarize,
        now,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        completes_latest=completes_latest,
    )
    return Checkpointed(entry_id, gauge)


def latest(root: Path, context: HotContext) -> Checkpoint | None:
    """The newest checkpoint the live session lists that can still be read, or None."""
    for entry_id in reversed(context.checkpoints):
        day = _moment(entry_id[:10] + "T00:00:00")
        if day is None:
            continue
        for entry in _day_entries(root, day.date()):
            if entry.id == entry_id and is_checkpoint(entry):
                return Checkpoint.of(entry)
    return None


def newest(root: Path, context: HotContext | None) -> Entry | None:
    """The checkpoint "where were we?" is answered with (issue 24): the live session's
    newest, else the newest in the last ``MATERIAL_DAYS`` day logs that have one."""
    if context is not None:
        for entry_id in reversed(context.checkpoints):
            day = _moment(entry_id[:10] + "T00:00:00")
            found = [
                e
                for e in (_day_entries(root, day.date()) if day else [])
                if e.id == entry_id and is_checkpoint(e)
            ]
            if found:
                return found[0]
    logs = [*root.glob("warm/????-??-??.md"), *root.glob("warm/archive/*/????-??-??.md")]
    for path in sorted(logs, key=lambda p: p.name, reverse=True)[:MATERIAL_DAYS]:
        day = _moment(path.stem + "T00:00:00")
        found = [e for e in (_day_entries(root, day.date()) if day else []) if is_checkpoint(e)]
        if found:
            return max(found, key=lambda e: (e.when, e.line))
    return None


def summarizer(
    command: str | None,
    timeout: float,
    clean: Callable[[str], str],
    notify: Callable[[str], None] = lambda message: None,
) -> Summarize:
    """The summary memsite writes: the command's answer when it gives one, else the
    extractive summary and a note that says why the command's is missing (told to ``notify``
    too: a note inside the entry alone went unseen, issue 25.8); ``clean`` (checking and
    redaction) is applied to both, as to every text written. ``timeout`` is checked here,
    before anything runs: a nan or inf once reached ``subprocess``."""
    timeout = inputs.real(timeout, "timeout", inputs.MIN_SECONDS, inputs.MAX_SECONDS)

    def summarize(context: HotContext, entries: list[Entry]) -> tuple[str, str]:
        # made of the tree's own text, which a hand edit of hot/ may have left odd
        built = inputs.clean(summaries.extractive(context, entries))
        if command is None:
            return clean(built), ""
        try:
            text = summaries.material(context, entries)
            return clean(summaries.run_summarizer(command, text, timeout)), ""
        except summaries.SummarizerFailed as err:
            failure = str(err)
        except InvalidInput as err:
            # the command's answer, cleaned, still cannot be written: a checkpoint is never
            # lost over it (issue 22), the built-in summary is
            failure = f"the summarizer's answer cannot be written ({err})"
        note = clean(inputs.clean(f"{failure}; the built-in summary is used"))
        notify(f"checkpoint: {note}")
        return clean(built), note

    return summarize


def summary_of(
    summary: str,
    command: str | None,
    timeout: float,
    clean: Callable[[str], str],
    notify: Callable[[str], None],
) -> Summarize:
    """A checkpoint's summary: ``summary`` when one was given, else the ``command``'s
    (:func:`summarizer`)."""
    return given(summary) if summary else summarizer(command, timeout, clean, notify)


def given(summary: str) -> Summarize:
    """A summary the harness or the model wrote (already checked and redacted)."""
    return lambda context, entries: (summary, "")


def _day_entries(root: Path, day: dt.date) -> list[Entry]:
    path = tree.day_log(root, day)
    try:
        text = reading.replaced_text(path)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return parse_entries(text, path.relative_to(root).as_posix()).entries


def _moment(stamp: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return None
