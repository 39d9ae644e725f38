"""``memsite check``: validate the tree, and audit that history was only ever appended to."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path

from ..errors import BadValue, InvalidInput
from . import code, markup, tree
from .format import Problem, next_free_id, parse_entries
from .git import run
from .markup import slugify
from .model import Entry
from .session import hot, outcomes


def check_tree(root: str | os.PathLike[str]) -> list[Problem]:
    """Every problem in the tree: unreadable files, bad headings and dates, duplicate ids,
    dangling ``Supersedes`` or ``Repeats``, a ``Paths`` glob that cannot be compiled, a broken
    ``hot/context.json``, an agent CLI whose last hook events memsite could not map.
    ``root`` is a path or a string, as ``Memory`` takes."""
    root = Path(root)
    tree.check_root(root)
    read = tree.read_tree(root)
    problems = list(read.parsed.problems)
    entries = read.parsed.entries
    by_id: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        by_id[entry.id].append(entry)
    for entry_id, same in by_id.items():
        for duplicate in same[1:]:
            first = same[0]
            problems.append(
                Problem(
                    duplicate.path,
                    duplicate.line,
                    f"duplicate id {entry_id!r} (also at {first.path}:{first.line})",
                )
            )
    ids_of = {kind: {e.id for e in entries if e.kind == kind} for kind in ("decision", "learning")}
    for entry in entries:
        target = entry.supersedes
        if entry.kind in ids_of and target is not None:
            if target.strip() not in ids_of[entry.kind]:
                problems.append(
                    Problem(
                        entry.path,
                        entry.line,
                        f"supersedes {target!r}, which is not a {entry.kind} id",
                    )
                )
            elif target.strip() == entry.id:
                problems.append(Problem(entry.path, entry.line, "supersedes itself"))
        again = entry.repeats if entry.kind == "learning" else None
        if again is not None and (again not in ids_of["learning"] or again == entry.id):
            problems.append(
                Problem(
                    entry.path, entry.line, f"repeats {again!r}, which is not another learning id"
                )
            )
        if entry.kind == "learning" and not entry.category:
            problems.append(
                Problem(entry.path, entry.line, "learning has no Category field", "warning")
            )
        for pattern in entry.paths:
            # a glob that came by hand or a merge: every reader skips it, so say so here
            why = code.pattern_problem(pattern)
            if why is not None:
                problems.append(
                    Problem(entry.path, entry.line, f"path {pattern!r} of {entry.id} {why}")
                )
    for decision, gone in code.missing_paths(root, entries):
        problems.append(
            Problem(
                decision.path,
                decision.line,
                f"path {gone!r} of this decision no longer exists in the working tree; "
                "the decision may need a successor (--supersedes)",
                "warning",
            )
        )
    problems += _lost_id_lines(entries, read.texts)
    problems += _beyond_site_limits(entries)
    for rel in read.texts:
        kind = rel.split("/")
        if kind[0] == "warm" and rel.endswith(".md"):
            first = read.texts[rel].lstrip("\ufeff").split("\n", 1)[0].strip()
            expected = "# " + Path(rel).stem
            if first and first != expected and first.startswith("# "):
                problems.append(
                    Problem(rel, 1, f"day log title {first!r} does not match its name", "warning")
                )
    try:
        hot.load(root)
    except hot.BrokenContext as err:
        problems.append(Problem(hot.CONTEXT, 1, str(err).split(": ", 1)[-1]))
    problems += outcomes.problems(root)  # an agent CLI whose hooks reach memsite for nothing
    problems.sort(key=lambda p: (p.path, p.line))
    return problems


_STORED_ID = re.compile(r"^(?:<!-- id: \S+ -->|[-*+] \*\*id:\*\*)", re.IGNORECASE)


def _lost_id_lines(entries: list[Entry], texts: dict[str, str]) -> list[Problem]:
    """Entries memsite wrote that lost their id line (issue 13).

    A hand-written entry may have no id (``docs/format.md``), so only an entry that memsite is
    known to have written is held to it: a decision or learning that a pointer in a day log
    names, and memsite's own pointers and session archives, known by their details.
    """
    pointers = {
        (e.title, e.date, e.details["title"]): e
        for e in entries
        if e.kind == "activity" and e.title in ("decision", "learning") and _is_pointer(e)
    }
    taken = {e.id for e in entries}
    lines_of: dict[str, list[str]] = {}
    problems = []
    for entry in entries:
        if entry.kind == "note" or entry.path not in texts:
            continue
        if entry.path not in lines_of:
            text = markup.normalize_newlines(texts[entry.path].removeprefix("\ufeff"))
            lines_of[entry.path] = markup.split_lines(text)
        own = lines_of[entry.path][entry.line - 1 : entry.end_line]
        if any(_STORED_ID.match(line) for line in own):
            continue
        pointer = pointers.get((entry.kind, entry.date, entry.title))
        if pointer is not None:
            expected = pointer.details[entry.kind]
            why = f"its pointer at {pointer.path}:{pointer.line} names it"
        elif entry.kind == "activity" and (about := _own_activity(entry)):
            expected = next_free_id(f"{entry.date.isoformat()}-{slugify(about)}", taken)
            why = f"memsite writes the {entry.title!r} activities"
        else:
            continue
        problems.append(
            Problem(
                entry.path,
                entry.line,
                f"entry {expected!r} has lost its id line ({why}); add "
                f"'<!-- id: {expected} -->' as its last line, after line {entry.end_line}",
            )
        )
    return problems


def _is_pointer(entry: Entry) -> bool:
    return bool(entry.details.get(entry.title)) and bool(entry.details.get("title"))


def _own_activity(entry: Entry) -> str | None:
    """What memsite named one of its own activities after, or None for any other."""
    if entry.title in ("decision", "learning") and _is_pointer(entry):
        return f"{entry.title} {entry.details['title']}"
    if entry.title in ("session end", "session archived") and entry.details.get("session_id"):
        return f"{entry.title} {entry.details['session_id']}"
    return None


def _beyond_site_limits(entries: list[Entry]) -> list[Problem]:
    """Entries the site can only show simplified (issue 15.10): ``markup.limit_problems`` is
    what the site itself applies, so check and build agree."""
    problems = []
    for entry in entries:
        texts = [("title", entry.title), ("body", entry.body), ("result", entry.result or "")]
        texts += [*entry.fields.items(), *entry.details.items()]
        found = [
            f"its {name}: {problem}"
            for name, text in texts
            for problem in (markup.limit_problems(text) if text else [])
        ]
        if found:
            what = f"entry {entry.id!r}: " + "; ".join(found)
            problems.append(Problem(entry.path, entry.line, what, "warning"))
    return problems


def audit_since(root: str | os.PathLike[str], ref: str) -> list[Problem]:
    """Entries present at ``ref`` that were changed or removed since (``hot/`` excluded)."""
    root = Path(root)
    tree.check_root(root)
    try:
        run(root, "rev-parse", "--is-inside-work-tree")
    except InvalidInput:
        raise InvalidInput(f"--since needs git history: {root} is not in a git work tree") from None
    try:
        run(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except InvalidInput:  # git says only "failed" (issue 25.8)
        raise BadValue(
            f"--since {ref!r}: no such commit in this repository; give a branch, tag, commit "
            "hash or HEAD~N (e.g. --since origin/main)"
        ) from None
    listing = run(root, "ls-tree", "-r", "-z", "--name-only", ref, "--", ".")
    prefix = run(root, "rev-parse", "--show-prefix").decode().strip()
    old: dict[str, Entry] = {}
    for name in filter(None, listing.decode("utf-8", "surrogateescape").split("\0")):
        rel = name[len(prefix) :] if prefix and name.startswith(prefix) else name
        if not rel.endswith(".md") or rel.startswith("hot/") or rel == "persona.md":
            continue
        text = run(root, "show", f"{ref}:./{rel}").decode("utf-8", "replace")
        for entry in parse_entries(text, rel).entries:
            if entry.kind != "note":
                old[entry.id] = entry
    current = {e.id: e for e in tree.read_tree(root).parsed.entries if e.kind != "note"}
    problems = []
    for entry_id, before in old.items():
        now = current.get(entry_id)
        where = f"{before.path}:{before.line}"
        if now is None:
            problems.append(
                Problem(before.path, before.line, f"entry {entry_id!r} was removed since {ref}")
            )
        elif _content(now) != _content(before):
            problems.append(
                Problem(
                    now.path,
                    now.line,
                    f"entry {entry_id!r} was changed since {ref} (was at {where})",
                )
            )
    return problems


def _content(entry: Entry) -> tuple[object, ...]:
    return (
        entry.kind,
        entry.title,
        entry.date,
        entry.time,
        entry.fields,
        entry.body,
        entry.details,
        entry.result,
    )
