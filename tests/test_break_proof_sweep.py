"""A sweep of every command with bad input and damaged data (after issue 36): each case, as a
user would meet it; each failed on the code before its fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite.cli import cli

READERS = [
    ["check"],
    ["index"],
    ["search", "argon2id"],
    ["recall", "--lexical", "how many argon2id iterations"],
    ["prime", "--lexical"],
    ["why", "src/auth/tokens.py"],
]


def run(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--root", str(root), *args])


@pytest.mark.parametrize("where", ["warm/loop.md", "notes/loop.md", "cold/adr/loop.md"])
def test_a_symbolic_link_loop_in_the_tree_is_skipped_with_a_warning(
    sample: Path, where: str
) -> None:
    # Python 3.11 and 3.12 raise RuntimeError for a loop where 3.13 raises OSError: every
    # read command crashed with a traceback over one committed link
    link = sample / where
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(link.name, link)
    for args in READERS:
        result = run(sample, *args)
        assert result.exit_code == 0 and result.exception is None, (args, result.output)
    checked = run(sample, "check")
    assert f"{where}:1: warning: symbolic link loop; skipped" in checked.output
    assert "argon2id" in run(sample, "search", "argon2id").output


def test_a_hot_context_that_is_a_link_loop_is_a_one_line_error(sample: Path) -> None:
    context = sample / "hot" / "context.json"
    context.unlink(missing_ok=True)
    os.symlink(context.name, context)
    result = run(sample, "session", "show")
    assert result.exit_code == 1 and result.exception is not None
    assert isinstance(result.exception, SystemExit)
    assert "symbolic link loop" in result.output and len(result.output.splitlines()) == 1
    assert run(sample, "log", "still writes").exit_code == 0


@pytest.mark.parametrize("args", [["search", "x"], ["why", "x"], ["log", "x"], ["check"]])
def test_a_root_that_is_a_link_loop_is_no_tree(tmp_path: Path, args: list[str]) -> None:
    loop = tmp_path / "memory"
    os.symlink(loop.name, loop)
    result = run(loop, *args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert (
        result.output.strip()
        == f"Error: {loop}: no memory tree here (run 'memsite init {loop}' or pass --root)"
    )
