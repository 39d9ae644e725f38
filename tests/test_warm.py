"""The per-turn hook's warm process (issue 24): a `memsite hook` answering UserPromptSubmit
asks a server that keeps the tree's index and model loaded, gets the very recall it would
have made, and never depends on it; the server answers only its owner, follows writes, and
leaves when idle, when its tree is gone, or when memsite's code changed."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memsite import Memory
from memsite.agents import warm

REPO = Path(__file__).resolve().parent.parent
PROMPT = "why did we move sessions from MongoDB to Postgres?"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project" / "memory"
    shutil.copytree(REPO / "memory", root, ignore=shutil.ignore_patterns("hot"))
    (root / "hot").mkdir()
    monkeypatch.setenv("MEMSITE_WARM", "on")
    monkeypatch.setenv("MEMSITE_WARM_IDLE", "20")
    monkeypatch.setenv("MEMSITE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    with Memory(root, cache_dir=tmp_path / "cache") as memory:
        memory.index()
    yield root
    # whatever a test started leaves with its tree (it polls every warm.POLL seconds)
    shutil.rmtree(root.parent, ignore_errors=True)


def socket_of(tree: Path, lexical: bool = True) -> Path:
    path = warm.where(tree, Path(os.environ["MEMSITE_CACHE"]), lexical)
    assert path is not None
    return path


def wait_for(path: Path, seconds: float = 60.0) -> None:
    """Until a server answers at ``path``."""
    deadline = time.monotonic() + seconds
    while warm.ask(path, {"count": True}) is None:
        assert time.monotonic() < deadline, f"no server at {path}"
        time.sleep(0.1)


def prompt_hook(tree: Path, prompt: str, *args: str) -> subprocess.CompletedProcess[str]:
    event = {
        "session_id": "warm-test",
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": str(tree.parent),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    return subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(tree), "hook", *args],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=60,
    )


def served(path: Path) -> int:
    """How many prompts the server at ``path`` answered."""
    answer = warm.ask(path, {"count": True})
    assert answer is not None
    return int(answer["answered"])


def test_the_second_prompt_is_answered_warm_with_the_same_recall(tree: Path) -> None:
    first = prompt_hook(tree, PROMPT, "--lexical")
    assert first.returncode == 0 and first.stderr == "", first.stderr
    path = socket_of(tree)
    wait_for(path)  # the first hook answered itself and started the server
    assert served(path) == 0
    second = prompt_hook(tree, PROMPT, "--lexical")
    assert second.stdout == first.stdout and "move-the-session-store" in second.stdout
    assert served(path) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_write_is_recalled_at_the_next_prompt(tree: Path) -> None:
    prompt_hook(tree, PROMPT, "--lexical")
    path = socket_of(tree)
    wait_for(path)
    with Memory(tree) as memory:
        memory.decide(
            "Shard the Postgres session table by tenant",
            why="One table of sessions from MongoDB grew past what one Postgres node holds.",
        )
    answer = prompt_hook(tree, "how is the Postgres session table sharded by tenant?", "--lexical")
    assert served(path) == 1 and "shard-the-postgres-session-table" in answer.stdout


def test_the_hook_answers_itself_when_the_server_is_stale_or_gone(tree: Path) -> None:
    prompt_hook(tree, PROMPT, "--lexical")
    path = socket_of(tree)
    wait_for(path)
    stale = warm.ask(path, {"prompt": PROMPT, "budget": 100, "stamp": "older code"})
    assert stale == {"stale": True}
    deadline = time.monotonic() + 10
    while path.exists():  # told its code is out of date, the server left
        assert time.monotonic() < deadline
        time.sleep(0.1)
    again = prompt_hook(tree, PROMPT, "--lexical")
    assert again.returncode == 0 and "move-the-session-store" in again.stdout


def test_one_server_per_tree_and_it_leaves_when_the_tree_is_gone(tree: Path) -> None:
    path = socket_of(tree)
    for _ in range(3):
        warm.start(tree, Path(os.environ["MEMSITE_CACHE"]), lexical=True)
    wait_for(path)
    time.sleep(1)
    servers = subprocess.run(
        ["pgrep", "-f", f"memsite.agents.warm import serve.*{tree}"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert len(servers) == 1, servers
    shutil.rmtree(tree)
    deadline = time.monotonic() + 3 * warm.POLL + 5
    while path.exists():
        assert time.monotonic() < deadline, "the server outlived its tree"
        time.sleep(0.2)


def test_a_bad_request_is_one_error_and_the_server_goes_on(tree: Path) -> None:
    warm.start(tree, Path(os.environ["MEMSITE_CACHE"]), lexical=True)
    path = socket_of(tree)
    wait_for(path)
    assert "error" in (
        warm.ask(path, {"prompt": 5, "budget": "x", "stamp": warm.code_stamp()}) or {}
    )
    request = {"prompt": PROMPT, "budget": 400, "stamp": warm.code_stamp()}
    answer = warm.ask(path, {**request, "tree": warm.identity(tree)})
    assert answer is not None and "move-the-session-store" in answer["markdown"]


def test_off_means_no_server(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSITE_WARM", "off")
    prompt_hook(tree, PROMPT, "--lexical")
    time.sleep(2)
    assert not socket_of(tree).exists()


def test_session_start_starts_the_server_and_hybrid_recall_is_the_same(tree: Path) -> None:
    pytest.importorskip("wordllama")
    event = {
        "session_id": "warm-test",
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": str(tree.parent),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    started = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(tree), "hook"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 0 and "Recalled" not in started.stderr, started.stderr
    path = socket_of(tree, lexical=False)
    wait_for(path)
    warm_answer = prompt_hook(tree, PROMPT)
    assert served(path) == 1
    os.environ["MEMSITE_WARM"] = "off"
    try:
        cold_answer = prompt_hook(tree, PROMPT)
    finally:
        os.environ["MEMSITE_WARM"] = "on"
    assert (
        warm_answer.stdout == cold_answer.stdout and "move-the-session-store" in warm_answer.stdout
    )


def test_a_socket_that_is_not_the_users_is_never_asked(tree: Path, tmp_path: Path) -> None:
    """Someone else's socket (or a file posing as one) at the path: the hook answers itself."""
    path = socket_of(tree)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not a socket")
    assert warm.ask(path, {"count": True}) is None
    answer = prompt_hook(tree, PROMPT, "--lexical")
    assert answer.returncode == 0 and "move-the-session-store" in answer.stdout


def test_a_socket_at_another_trees_path_is_refused(tree: Path) -> None:
    """Issue 34: a warm process's socket found at another tree's path (linked or moved there)
    never answers for that tree: the request names its tree, the server refuses another's,
    and the hook answers itself (before, the hook printed the other tree's memory)."""
    other = tree.parent.parent / "other" / "memory"
    shutil.copytree(tree, other)
    with Memory(other) as memory:
        memory.decide(
            "Route the zebra traffic through the quokka gateway",
            why="Only the quokka gateway keeps zebra sessions sticky.",
        )
        memory.index()
    warm.start(other, Path(os.environ["MEMSITE_CACHE"]), lexical=True)
    theirs = socket_of(other)
    wait_for(theirs)
    ours = socket_of(tree)
    ours.parent.mkdir(parents=True, exist_ok=True)
    os.link(theirs, ours)  # the other tree's server, at this tree's path
    try:
        answer = prompt_hook(tree, "which gateway does the zebra traffic go through?", "--lexical")
        assert answer.returncode == 0, answer.stderr
        assert "quokka" not in answer.stdout
        assert served(theirs) == 0
        request = {"prompt": PROMPT, "budget": 400, "stamp": warm.code_stamp()}
        asked = warm.ask(ours, {**request, "tree": warm.identity(tree)})
        assert asked is not None and "markdown" not in asked and "another tree" in asked["error"]
        unnamed = warm.ask(ours, request)  # a request that names no tree is refused too
        assert unnamed is not None and "markdown" not in unnamed
    finally:
        shutil.rmtree(other.parent)  # its server leaves with it


def test_check_lists_the_trees_warm_processes(tree: Path) -> None:
    """Issue 34: `memsite check` names each warm process of the tree with its pid, how long it
    has run and the memory it holds, as info lines on stderr (before, nothing said they were
    there); a server that left is not listed."""
    warm.start(tree, Path(os.environ["MEMSITE_CACHE"]), lexical=True)
    path = socket_of(tree)
    wait_for(path)
    (pid,) = subprocess.run(
        ["pgrep", "-f", f"memsite.agents.warm import serve.*{tree} 1"],
        capture_output=True,
        text=True,
    ).stdout.split()
    checked = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(tree), "check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0 and checked.stdout == "", checked.stdout + checked.stderr
    (line,) = [line for line in checked.stderr.splitlines() if line.startswith("info:")]
    assert line.startswith(f"info: warm process {pid} (lexical ranking) answers this tree's")
    assert " MB resident; it leaves after 20 s without one (MEMSITE_WARM=off" in line, line
    assert warm.ask(path, {"prompt": PROMPT, "budget": 10, "stamp": "older code"})  # it leaves
    deadline = time.monotonic() + 10
    while path.exists():
        assert time.monotonic() < deadline
        time.sleep(0.1)
    again = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(tree), "check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "info:" not in again.stderr, again.stderr


def test_a_hook_run_by_hand_says_it_started_a_warm_process(tree: Path) -> None:
    # Issue 39.7: a hook run by hand left a warm process running with no word
    done = prompt_hook(tree, PROMPT, "--lexical", "--verbose")
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        "memsite hook: started a warm process for this tree's recalls (lexical); it leaves "
        "after 5 minutes without a question, and MEMSITE_WARM=off turns it off"
    ]
    wait_for(socket_of(tree))
    again = prompt_hook(tree, PROMPT, "--lexical", "--verbose")
    assert again.returncode == 0 and again.stderr == ""  # answered by it: nothing started
    quiet = prompt_hook(tree, PROMPT, "--lexical")  # as Claude Code runs it: pipes, no word
    assert quiet.stderr == ""
