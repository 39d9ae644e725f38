"""``memsite check``: validate the tree, and audit that history was only ever appended to."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from . import hot, tree
from .format import Problem, parse_entries
from .git import run
from .model import Entry


def check_tree(root: Path) -> list[Problem]:
    """Every problem in the tree: unreadable files, bad headings and dates, duplicate ids,
    dangling ``Supersedes``, a broken ``hot/context.json``."""
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
        if entry.kind == "learning" and not entry.category:
            problems.append(
                Problem(entry.path, entry.line, "learning has no Category field", "warning")
            )
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
    problems.sort(key=lambda p: (p.path, p.line))
    return problems


def audit_since(root: Path, ref: str) -> list[Problem]:
    """Entries present at ``ref`` that were changed or removed since (``hot/`` excluded)."""
    tree.check_root(root)
    run(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
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
