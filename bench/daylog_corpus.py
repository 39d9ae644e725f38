"""Write a day-log dev corpus from a git repository's history and its dated experiment log.

    python bench/daylog_corpus.py REPO_GIT_DIR --commit HASH --out bench/devset/OWNER__NAME
        [--log dev/LOG.md]

Every commit reachable from ``--commit`` but merges becomes one activity of
``memory/warm/YYYY-MM-DD.md``, at its author date and time (UTC): the commit's subject is
the action (cut at a clause or word within ``ACTION`` characters when longer, the rest of
it then the result), the files it changed and its line counts are details, the full hash
is the ``Commit`` field, the author is the git author's name ("a contributor" where that
name is an e-mail address), and the commit message's body is the entry's body (trailer
lines that hold an e-mail address are left out). Every dated section
``## YYYY-MM-DD: Title`` of the experiment log (``--log``, read at ``--commit``) becomes one
activity on its date: the title is the action, the section's text the body, its
sub-headings bold lines (a day log's entries are ``###`` headings, so a heading inside one
would end it), at the time of day of the commit that wrote the heading (``git blame``). A
section dated ``A to B`` is logged on B.

The entries are written with ``Memory.log(..., at=...)`` in time order, so the format and
the ids are memsite's own. The corpus's ``LICENSE`` is the repository's, copied as it is.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from memsite import Memory
from memsite.store.tree import init_tree

ACTION = 100  # characters: a longer subject is cut, and given whole as the result
FILES_LISTED = 8  # a commit touching more files names its top folders instead
HEADING = re.compile(r"^## (\d{4}-\d{2}-\d{2})(?: to (\d{4}-\d{2}-\d{2}))?: (.+)$")
EMAIL_TRAILER = re.compile(r"^[A-Za-z-]+:.*<[^<>@\s]+@[^<>\s]+>\s*$")


@dataclass(frozen=True)
class Event:
    at: dt.datetime
    order: int  # ties at one time keep their order in the source
    action: str
    details: dict[str, str]
    result: str
    body: str
    author: str
    commit: str | None


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def utc(stamp: str) -> dt.datetime:
    return dt.datetime.fromtimestamp(int(stamp), dt.UTC).replace(tzinfo=None)


def cut(subject: str) -> tuple[str, str]:
    """The action a subject makes and the result: the rest of it, when it was cut."""
    if len(subject) <= ACTION:
        return subject, ""
    head = subject[:ACTION]
    for mark in (". ", "; ", ", ", " - ", " — "):
        at = head.rfind(mark)
        if at >= 40:
            return head[:at], subject[at + len(mark) :].strip()
    at = head.rfind(" ")
    return head[:at], subject[at + 1 :].strip()


def commits(repo: Path, commit: str) -> list[Event]:
    out = []
    log = git(repo, "log", "--no-merges", "--format=%H%x1f%at%x1f%an%x1f%s%x1f%b%x1e", commit)
    for order, record in enumerate(r for r in log.split("\x1e") if r.strip()):
        sha, stamp, author, subject, body = record.strip("\n").split("\x1f")
        numstat = git(repo, "show", "--numstat", "--format=", sha).splitlines()
        files, added, removed = [], 0, 0
        for line in numstat:
            plus, minus, path = line.split("\t", 2)
            files.append(path)
            added += int(plus) if plus.isdigit() else 0
            removed += int(minus) if minus.isdigit() else 0
        details = {}
        if files:
            if len(files) <= FILES_LISTED:
                details["files"] = ", ".join(files)
            else:
                tops = sorted({f.split("/")[0] + ("/" if "/" in f else "") for f in files})
                details["files"] = f"{len(files)} files in {', '.join(tops)}"
            details["lines"] = f"+{added} -{removed}"
        kept = [line for line in body.strip().splitlines() if not EMAIL_TRAILER.match(line)]
        if "@" in author:  # an e-mail address given as the name
            author = "a contributor"
        action, result = cut(subject.strip())
        out.append(
            Event(utc(stamp), -order, action, details, result, "\n".join(kept).strip(), author, sha)
        )
    return out


def experiments(repo: Path, commit: str, log_path: str) -> list[Event]:
    text = git(repo, "show", f"{commit}:{log_path}")
    blame = git(repo, "blame", "--line-porcelain", commit, "--", log_path)
    written: dict[int, tuple[str, str]] = {}  # line number -> (author, author-time)
    line_no, author, stamp = 0, "", ""
    for line in blame.splitlines():
        if re.match(r"^[0-9a-f]{40} \d+ (\d+)", line):
            line_no = int(line.split()[2])
        elif line.startswith("author "):
            author = line[7:]
        elif line.startswith("author-time "):
            stamp = line[12:]
        elif line.startswith("\t"):
            written[line_no] = (author, stamp)
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if HEADING.match(line)]
    out = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        first, last, title = HEADING.match(lines[start]).groups()  # type: ignore[union-attr]
        day = dt.date.fromisoformat(last or first)
        author, stamp = written[start + 1]
        when = dt.datetime.combine(day, utc(stamp).time())
        details = {"log": log_path}
        if last:
            details["dates"] = f"{first} to {last}"
        body = body_of(lines[start + 1 : end])
        out.append(Event(when, n, title.strip(), details, "", body, author, None))
    return out


def body_of(lines: list[str]) -> str:
    """A section's text as an entry's body: sub-headings outside code fences made bold
    lines, the closing ``---`` rule between sections left out."""
    out, fence = [], ""
    for line in lines:
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
        elif stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif re.match(r"^#{1,6} ", line):
            line = f"**{line.lstrip('#').strip()}**"
        out.append(line)
    text = "\n".join(out).strip()
    return re.sub(r"\n+---\s*$", "", text).strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path, help="the repository's git directory")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--log", default="dev/LOG.md", help="the dated experiment log")
    args = parser.parse_args()
    if (args.out / "memory").exists():
        sys.exit(f"{args.out / 'memory'} exists; remove it first")
    # written outside any git repository: inside one, memsite would resolve each Commit
    # field against that repository and refuse the source's hashes
    with tempfile.TemporaryDirectory() as scratch:
        memory_root = Path(scratch) / "memory"
        count = write(args, memory_root)
        args.out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(memory_root, args.out / "memory", ignore=shutil.ignore_patterns("hot"))
    (args.out / "LICENSE").write_bytes(
        subprocess.run(
            ["git", "--git-dir", str(args.repo), "show", f"{args.commit}:LICENSE"],
            check=True,
            capture_output=True,
        ).stdout
    )
    days = len(list((args.out / "memory" / "warm").glob("*.md")))
    print(f"{count} entries over {days} days")


def write(args: argparse.Namespace, memory_root: Path) -> int:
    """Log every event into a new tree at ``memory_root``; returns how many."""
    init_tree(memory_root)
    events = commits(args.repo, args.commit) + experiments(args.repo, args.commit, args.log)
    events.sort(key=lambda e: (e.at, e.order))
    notices: list[str] = []
    # allow_secrets: the text is public and holds none; memsite's redaction read "pass: router"
    # in one section as a password, and the corpus keeps the source's words
    with Memory(memory_root, allow_past=True, allow_secrets=True, notify=notices.append) as memory:
        for e in events:
            memory.log(
                e.action,
                e.details,
                e.result or None,
                body=e.body or None,
                at=e.at,
                author=e.author,
                commit=e.commit,
            )
    if notices:
        sys.exit(f"memsite changed the text: {notices}")
    return len(events)


if __name__ == "__main__":
    main()
