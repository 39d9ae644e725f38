"""Every write goes through ``storage``: what happens to real files when writing goes wrong."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memsite import Memory, UnsafePath
from tests.conftest import Clock

DAY = "2026-06-08"
DAY_LOG = f"warm/{DAY}.md"

# Runs the CLI under a file-size limit of argv[1] bytes, the way `ulimit -f` would, with
# SIGXFSZ ignored so that write() fails with EFBIG instead of killing the process.
UNDER_LIMIT = """\
import resource, signal, sys
limit = int(sys.argv.pop(1))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from memsite.cli import main
sys.argv[0] = "memsite"
main()
"""


def memsite(*args: str, stdin: str | None = None, limit: int | None = None, cwd=None):
    """Run the real command in a fresh process."""
    if limit is None:
        command = [sys.executable, "-m", "memsite", *args]
    else:
        command = [sys.executable, "-c", UNDER_LIMIT, str(limit), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=60
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the tree and its bytes (lock files aside)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


@pytest.fixture
def tree(root: Path, clock: Clock) -> Path:
    """A tree with a day log, both cold files and a live session."""
    memory = Memory(root, author="", clock=clock)
    memory.start_session("Refactor auth")
    memory.decide("Use Postgres", why="durability")
    memory.learn("Mock the clock", category="testing")
    memory.log("ran tests", result="ok")
    return root


@pytest.mark.parametrize(
    ("args", "target"),
    [
        (("log", "big", "--at", f"{DAY}T15:00:00", "--body", "-"), DAY_LOG),
        (
            ("decide", "Big", "--why", "size", "--at", f"{DAY}T15:00:00", "--body", "-"),
            "cold/decisions.md",
        ),
        (
            ("learn", "Big", "--category", "io", "--at", f"{DAY}T15:00:00", "--body", "-"),
            "cold/learnings.md",
        ),
    ],
)
def test_a_file_size_limit_fails_cleanly_and_leaves_the_tree_byte_identical(
    tree: Path, args: tuple[str, ...], target: str
) -> None:
    before = snapshot(tree)
    # the limit lets part of the entry through before write() fails: that part must go
    limit = len(before[target]) + 200
    result = memsite("--root", str(tree), *args, stdin="x" * 20_000 + "\n", limit=limit)
    line = one_error_line(result)
    assert line == (
        f"Error: {tree / target}: could not write (file size limit exceeded); the file is unchanged"
    )
    assert snapshot(tree) == before


def test_a_file_size_limit_during_a_hot_context_update_keeps_the_old_context(tree: Path) -> None:
    before = snapshot(tree)
    context = tree / "hot" / "context.json"
    result = memsite(
        "--root", str(tree), "pending", "add", "p" * 900, limit=len(before["hot/context.json"])
    )
    assert "could not write (file size limit exceeded)" in one_error_line(result)
    assert snapshot(tree) == before  # no temporary file left behind either
    assert json.loads(context.read_text())["pending_actions"] == []


@contextlib.contextmanager
def read_only(root: Path) -> Iterator[None]:
    """Make the tree unwritable: permissions, or the immutable flag when running as root."""
    paths = [root, *root.rglob("*")]
    if os.geteuid() != 0:
        for path in paths:
            path.chmod(path.stat().st_mode & ~0o222)
        try:
            yield
        finally:
            for path in paths:
                path.chmod(path.stat().st_mode | 0o200)
        return
    if shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: cannot make a tree read-only")
    done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True)
    try:
        if done.returncode != 0:
            pytest.skip(f"cannot make files immutable here: {done.stderr.decode().strip()}")
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, paths)], capture_output=True)


@pytest.mark.parametrize(
    ("args", "target"),
    [
        (("log", "ran tests"), None),
        (("decide", "Use Redis", "--why", "speed"), "cold/decisions.md"),
        (("progress", "step two"), None),
        (("pending", "add", "write docs"), "hot/context.json"),
        (("session", "end"), None),
    ],
)
def test_a_read_only_tree_gives_one_clear_line_and_changes_nothing(
    tree: Path, args: tuple[str, ...], target: str | None
) -> None:
    before = snapshot(tree)
    with read_only(tree):
        result = memsite("--root", str(tree), *args)
    line = one_error_line(result)
    assert "permission denied (read-only tree?)" in line
    if target:
        assert str(tree / target) in line
    assert snapshot(tree) == before


def test_prune_in_a_read_only_tree_says_so_and_moves_nothing(root: Path, clock: Clock) -> None:
    Memory(root, clock=clock).log("old work", at="2026-05-01T10:00:00")
    before = snapshot(root)
    with read_only(root):
        result = memsite("--root", str(root), "prune")
    line = one_error_line(result)
    assert line.startswith(f"Error: {root / 'warm' / '2026-05-01.md'}: could not move it")
    assert line.endswith("(permission denied (read-only tree?)); it was left in place")
    assert snapshot(root) == before


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "decisions.md").write_text("# Not memory\n")
    return path


def outside_state(outside: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}


def test_a_symlinked_file_pointing_outside_is_never_written_through(
    root: Path, outside: Path, clock: Clock
) -> None:
    (root / "cold" / "decisions.md").unlink()
    (root / "cold" / "decisions.md").symlink_to(outside / "decisions.md")
    with pytest.raises(UnsafePath, match="decisions.md"):
        Memory(root, clock=clock).decide("Use Redis", why="speed")
    assert outside_state(outside) == {"decisions.md": b"# Not memory\n"}


@pytest.mark.parametrize("folder", ["warm", "cold", "hot"])
def test_a_symlinked_folder_pointing_outside_is_never_written_through(
    root: Path, outside: Path, clock: Clock, folder: str
) -> None:
    shutil.rmtree(root / folder)
    (root / folder).symlink_to(outside, target_is_directory=True)
    memory = Memory(root, clock=clock)
    writes = {
        "warm": lambda: memory.log("ran tests"),
        "cold": lambda: memory.learn("Mock the clock", category="testing"),
        "hot": lambda: memory.start_session("Refactor auth"),
    }
    with pytest.raises(UnsafePath, match="outside the memory tree"):
        writes[folder]()
    assert outside_state(outside) == {"decisions.md": b"# Not memory\n"}


def test_a_symlinked_hot_context_is_neither_read_nor_written_through(
    root: Path, outside: Path, clock: Clock
) -> None:
    """Issue 15.4: a file whose real path is outside the tree is never read (its text could
    reach prime and the site), so the session it holds is refused, not adopted."""
    memory = Memory(root, clock=clock)
    memory.start_session("Refactor auth")
    target = outside / "context.json"
    shutil.move(root / "hot" / "context.json", target)
    (root / "hot" / "context.json").symlink_to(target)
    before = target.read_bytes()
    with pytest.raises(UnsafePath, match="outside the memory tree"):
        memory.pending_add("write docs")
    assert target.read_bytes() == before


def test_prune_never_moves_a_log_through_a_symlinked_archive(
    root: Path, outside: Path, clock: Clock
) -> None:
    memory = Memory(root, clock=clock)
    memory.log("old work", at="2026-05-01T10:00:00")
    (root / "warm" / "archive").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePath):
        memory.prune()
    assert (root / "warm" / "2026-05-01.md").is_file()
    assert outside_state(outside) == {"decisions.md": b"# Not memory\n"}


def test_a_path_with_spaces_and_non_ascii_characters_works(tmp_path: Path) -> None:
    root = tmp_path / "projets d'équipe" / "mémoire 記憶 ✓"
    assert memsite("init", str(root)).returncode == 0
    at = ("--at", f"{DAY}T10:00:00")
    steps = [
        ("session", "start", "Réécrire l'auth"),
        ("decide", "Utiliser Postgres", "--why", "durabilité", *at),
        ("learn", "Horloge simulée", "--category", "tests", *at),
        ("log", "tests lancés", "--detail", "fichier=tests/é.py", *at),
        ("progress", "étape deux", "--file", "src/ü.py"),
        ("session", "end", "--summary", "fini ✓"),
    ]
    for args in steps:
        result = memsite("--root", str(root), *args)
        assert result.returncode == 0, result.stderr
    assert memsite("--root", str(root), "check").returncode == 0
    titles = {e.title for e in Memory(root).entries()}
    assert {"Utiliser Postgres", "Horloge simulée", "tests lancés", "progress"} <= titles
