"""What a checkpoint says about the session so far: the material it summarizes (the hot
context and the session's warm entries since its last checkpoint), the summary memsite
writes itself from it (extractive: no model), and the run of a user's summarizer command
over it (issue 11)."""

from __future__ import annotations

import shlex
import subprocess

from ...errors import MemsiteError
from ..format import render_entry
from ..inputs import clean
from ..model import Entry, HotContext, comma_list
from . import SUMMARIZER_TIMEOUT, hot

LAST_RESULTS = 3  # how many of the newest results the extractive summary quotes
# a summarizer's answer beyond this is damage (a command that echoed a transcript)
MAX_SUMMARY = 64 * 1024


class SummarizerFailed(MemsiteError):
    """The summarizer command failed, hung or said nothing; the message says which."""


def material(context: HotContext, entries: list[Entry]) -> str:
    """The text a summarizer reads on stdin: the hot context, then the session's entries."""
    parts = [hot.render(context)]
    if entries:
        parts += ["# Since the last checkpoint\n", *(render_entry(e) for e in entries)]
    return "\n".join(parts)


def extractive(context: HotContext, entries: list[Entry]) -> str:
    """A summary made of what the session recorded, one line a kind: the task and step,
    decisions and learnings, pending actions, files touched, the last results."""
    decisions = [e.details.get("title", "") for e in entries if _points_at(e, "decision")]
    learnings = [e.details.get("title", "") for e in entries if _points_at(e, "learning")]
    files = list(context.files_modified)
    for entry in entries:
        files += comma_list(entry.details.get("files", ""))
    results = [
        f"{e.title}: {_one_line(e.result)}"
        for e in entries
        if e.result and not _points_at(e, e.title) and e.title != "checkpoint"
    ][-LAST_RESULTS:]
    lines = [f"Task: {context.task}"]
    if context.current_step:
        lines.append(f"Current step: {context.current_step}")
    for label, items in (
        ("Decisions", decisions),
        ("Learnings", learnings),
        ("Pending", context.pending_actions),
        ("Files touched", list(dict.fromkeys(files))),
        ("Last results", results),
    ):
        if items:
            lines.append(f"{label}: " + "; ".join(items))
    return "\n".join(lines)


def run_summarizer(command: str, text: str, timeout: float = SUMMARIZER_TIMEOUT) -> str:
    """What ``command`` (split like a shell would, but run without one) prints for ``text``
    on its stdin; ``SummarizerFailed`` when it cannot start, fails, hangs or prints nothing."""
    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise SummarizerFailed(f"summarizer {command!r} cannot be split ({err})") from None
    if not argv:
        raise SummarizerFailed("summarizer is empty")
    try:
        done = subprocess.run(
            argv,
            input=text.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SummarizerFailed(f"summarizer {argv[0]} took over {timeout:g} s") from None
    except OSError as err:
        raise SummarizerFailed(f"summarizer {argv[0]} did not start ({err.strerror})") from None
    if done.returncode != 0:
        said = _one_line(clean(done.stderr.decode("utf-8", errors="replace")))[:200]
        tail = f": {said}" if said else ""
        raise SummarizerFailed(f"summarizer {argv[0]} exited {done.returncode}{tail}")
    # an LLM CLI prints terminal colours, NEL or U+2028 as readily as text: cleaned, not
    # refused, so its summary is kept (issue 22)
    summary = clean(done.stdout.decode("utf-8", errors="replace")).strip()
    if not summary:
        raise SummarizerFailed(f"summarizer {argv[0]} printed nothing")
    return summary[:MAX_SUMMARY]


def _points_at(entry: Entry, kind: str) -> bool:
    return entry.title == kind and bool(entry.details.get(kind)) and "title" in entry.details


def _one_line(text: str) -> str:
    return " ".join(text.split())


def compact_summary(text: str) -> str:
    """The summary of a compaction without its scratch work: Claude Code 2.1.328 hands over
    the model's whole reply, ``<analysis>`` block and ``<summary>`` tags included.

    Found with ``str.find``, in one pass: a lazy pattern tried from every ``<summary>`` of a
    reply holding thousands and no closing tag took quadratic time, past the hook's limit
    (the sweep after issue 36)."""
    inner = _between(text, "<summary>", "</summary>")
    if inner is not None:
        return inner.strip()
    kept, at = [], 0
    while (start := text.find("<analysis>", at)) >= 0:
        end = text.find("</analysis>", start + len("<analysis>"))
        if end < 0:
            break
        kept.append(text[at:start])
        at = end + len("</analysis>")
    kept.append(text[at:])
    return "".join(kept).strip()


def _between(text: str, opening: str, closing: str) -> str | None:
    """The text between the first ``opening`` and the first ``closing`` after it."""
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return None if end < 0 else text[start + len(opening) : end]
