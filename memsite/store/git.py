"""The few git calls memsite makes: reading history for the audit, and merge settings."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..errors import InvalidInput
from . import reading, storage


def run(root: Path, *args: str) -> bytes:
    """``git -C root ARGS``; a failure becomes ``InvalidInput`` with git's last line."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise InvalidInput("git is not installed") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InvalidInput(f"git {' '.join(args[:2])}: {message[-1] if message else 'failed'}")
    return done.stdout


def keep_union_merges_whole(root: Path) -> str | None:
    """In a git work tree, make git's union merges keep each side's added lines whole.

    With git's default conflict style, the union driver keeps a line that both sides added
    (a closing fence, the same ``Author`` field) only once, which can move lines between two
    entries appended on two branches. ``merge.conflictStyle=diff3`` turns that refinement
    off. Set locally, only when nothing is configured yet; returns what was done, or None.
    """
    try:
        run(root, "rev-parse", "--is-inside-work-tree")
    except InvalidInput:
        return None
    try:
        current = run(root, "config", "--get", "merge.conflictStyle").decode().strip()
    except InvalidInput:
        current = ""
    if current:
        return (
            None
            if current == "diff3"
            else (
                f"git merge.conflictStyle is {current!r}; union merges of memory keep entries whole "
                "only with 'diff3' (see docs/format.md#git)"
            )
        )
    run(root, "config", "--local", "merge.conflictStyle", "diff3")
    return "set git merge.conflictStyle=diff3 in this repository so union merges keep entries whole"


# What memsite makes that is not memory: the built site (where ``memsite build`` puts it from
# the repository's top) and the search index cache beside the tree. Each with the spellings
# that already ignore it.
_OUTPUTS = {
    "/site/": {"site", "site/", "/site", "/site/"},
    ".memsite/": {".memsite", ".memsite/", "/.memsite", "/.memsite/", "**/.memsite/"},
}


def ignore_outputs(repo: Path) -> list[str]:
    """In a git work tree, append to ``repo/.gitignore`` the lines for the built site and
    the search index that it does not have yet (never rewriting a line); the lines added."""
    try:
        run(repo, "rev-parse", "--is-inside-work-tree")
    except InvalidInput:
        return []
    path = repo / ".gitignore"
    added: list[str] = []

    def compose(current: str) -> str:
        have = {line.strip() for line in current.splitlines()}
        added[:] = [line for line, same in _OUTPUTS.items() if not have & same]
        return "".join(f"{line}\n" for line in ["# built by memsite, not memory", *added])

    try:
        text = reading.replaced_text(path)
    except FileNotFoundError:
        text = ""
    except (OSError, reading.NotAFile):
        return []
    have = {line.strip() for line in text.splitlines()}
    if all(have & same for same in _OUTPUTS.values()):
        return []
    storage.append(repo, path, compose)
    return added


def hot_ignored(root: Path) -> str:
    """What ``init`` says about ``hot/``: git-ignored, by which line, only when it is; else
    the line to add (a ``.gitignore`` init kept may lack it, issue 25.3)."""
    where = ignored_by(root, "hot")
    if where:
        return (
            f"hot/ (the live session) is git-ignored by {where}; sessions are archived into "
            "warm/ when they end."
        )
    return (
        f"hot/ (the live session) is NOT git-ignored: add the line hot/ to "
        f"{root / '.gitignore'} to keep live sessions out of git."
    )


def ignored_by(root: Path, folder: str) -> str | None:
    """What git-ignores ``root/folder`` (``FILE:LINE``), or None when nothing does.

    In a git work tree git answers (``check-ignore``: every ``.gitignore`` up to the top, a
    tracked file counting as not ignored); elsewhere the tree's own ``.gitignore`` is read,
    as git will read it once the tree is in a repository (issue 25.3).
    """
    probe = f"{folder}/context.json"
    try:
        top = Path(run(root, "rev-parse", "--show-toplevel").decode().strip())
    except InvalidInput:
        return _ignored_here(root, folder)
    done = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "-v", probe], capture_output=True, check=False
    )
    if done.returncode != 0 or not done.stdout:
        return None
    source, line = done.stdout.decode("utf-8", "replace").split("\t")[0].split(":")[:2]
    return f"{_shown(top / source)}:{line}"


def _ignored_here(root: Path, folder: str) -> str | None:
    path = root / ".gitignore"
    try:
        lines = reading.replaced_text(path).splitlines()
    except (OSError, reading.NotAFile):
        return None
    same = {f"{lead}{folder}{tail}" for lead in ("", "/") for tail in ("", "/", "/*", "/**")}
    found = None
    for number, line in enumerate(lines, 1):
        pattern = line.strip()
        if pattern in same:
            found = f"{path}:{number}"
        elif pattern.startswith("!") and pattern[1:] in same:
            found = None  # a later "!hot/" takes it back
    return found


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when it is under it, else as it is."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)
