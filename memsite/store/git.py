"""The few git calls memsite makes: reading history for the audit, and merge settings."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..errors import InvalidInput


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
