"""Capture that never drops (issue 34, points 5 and 6): every tool call the hook is handed
becomes a record, whatever runs beside it and whatever its fields hold.

The race runs real ``memsite hook`` processes, as Claude Code starts them: one per event,
all at once.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from memsite import Memory
from memsite.cli import cli
from memsite.store import inputs
from memsite.store.check import check_tree
from memsite.store.inputs import LINE_LIMIT
from memsite.store.session import harness

SID = "5d0c6e2a-claude"


def event(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SID,
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": "/home/you/project",
        "hook_event_name": name,
        **fields,
    }


def edit_of(path: Path | str, added: int = 1) -> dict[str, Any]:
    lines = [" a", *(["+x"] * added)]
    return event(
        "PostToolUse",
        tool_name="Edit",
        tool_input={"file_path": str(path), "old_string": "a", "new_string": "b"},
        tool_response={"structuredPatch": [{"lines": lines}]},
    )


def command_of(command: str) -> dict[str, Any]:
    return event(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": command},
        tool_response={"stdout": "ok\n", "stderr": ""},
    )


@pytest.fixture
def repo(root: Path) -> Path:
    """The repository the tree lives in, with a live session started by hand."""
    (root.parent / ".git").mkdir(exist_ok=True)
    Memory(root, author="").start_session("Capture every tool call", "s1")
    return root.parent


@pytest.fixture
def hook(root: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    runner = CliRunner()

    def feed(payload: dict[str, Any]):
        done = runner.invoke(cli, ["--root", str(root), "hook"], input=json.dumps(payload))
        assert (done.exit_code, done.stdout, done.stderr) == (0, "", ""), done.output
        return done

    return feed


def edits(root: Path) -> list:
    return [e for e in Memory(root, author="").entries("activity") if e.title == "edited file"]


def hooks_at_once(root: Path, events: list[dict[str, Any]]) -> list[subprocess.CompletedProcess]:
    """One ``memsite hook`` process per event, started together; each is handed its event
    only once all have started, so they reach the tree at about the same moment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_WARM"] = "off"
    command = [sys.executable, "-m", "memsite", "--root", str(root), "hook"]
    pipe = subprocess.PIPE
    started = [
        subprocess.Popen(command, stdin=pipe, stdout=pipe, stderr=pipe, env=env) for _ in events
    ]
    time.sleep(1.0)  # let every interpreter reach the read of stdin
    for process, payload in zip(started, events, strict=True):
        process.stdin.write(json.dumps(payload).encode())  # type: ignore[union-attr]
        process.stdin.close()  # type: ignore[union-attr]
    done = []
    for process in started:
        process.stdin = None  # closed above: communicate must not flush it
        out, err = process.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(command, process.returncode, out, err))
    return done


def test_twenty_edit_hooks_at_once_leave_twenty_records(root: Path, repo: Path) -> None:
    """Issue 34.5: 20 ``PostToolUse`` edits of 20 files in 20 processes at once were 11-12
    ``edited file`` entries: one process saved its burst over another's between the check
    and the save. Three rounds, so the race has its chances; every edit is a record."""
    for round_ in range(3):
        files = [repo / "src" / f"round{round_}_file{n:02d}.py" for n in range(20)]
        done = hooks_at_once(root, [edit_of(path, added=n + 1) for n, path in enumerate(files)])
        for process in done:
            assert (process.returncode, process.stdout, process.stderr) == (0, b"", b"")
        # the last burst is logged by the next event that ends bursts: a command
        [flushed] = hooks_at_once(root, [command_of("git status")])
        assert (flushed.returncode, flushed.stderr) == (0, b"")
        recorded = {e.details["file"]: e.details["lines"] for e in edits(root)}
        for n, path in enumerate(files):
            rel = path.relative_to(repo).as_posix()
            assert recorded.get(rel) == f"+{n + 1} -0", f"round {round_}: {rel} lost"
    assert len(edits(root)) == 60
    assert check_tree(root) == []


def test_a_3000_character_command_is_recorded_cut_with_a_marker(
    hook, root: Path, repo: Path
) -> None:
    """Issue 34.6: a command over 1,000 characters was never recorded (`detail 'command' is
    1001 characters` on stderr). It is cut to the limit with a marker, after redaction: a
    secret across the cut is redacted whole, never left half."""
    words = " ".join(f"--flag-{n:04d}" for n in range(300))  # 3,299 characters
    token = "ghp_" + "A1b2C3d4" * 5  # a GitHub token, across the cut at 1,000
    command = f"deploy {words[:962]} {token} {words[962:]}"
    assert len(command) > 3000 and command.index(token) < 996 < command.index(token) + 44
    assert hook(command_of(command)).stderr == ""
    [ran] = [e for e in Memory(root, author="").entries("activity") if e.title == "ran command"]
    recorded = ran.details["command"]
    assert len(recorded) <= LINE_LIMIT and recorded.endswith(" […]")
    assert recorded.startswith(f"deploy {words[:962]} [redacted: github token]")
    assert "ghp_" not in recorded and "A1b2" not in recorded
    assert ran.details["exit"] == "0" and ran.result == "ok"
    assert check_tree(root) == []


@pytest.mark.parametrize(
    ("odd", "shown"),
    [
        (
            "new\n### 09:00:00 — injected\n<!-- id: x -->",
            "new\\n### 09:00:00 — injected\\n<!-- id: x -->",
        ),
        ("tab\tand\rcarriage", "tab\\tand\\rcarriage"),
        ("colour \x1b[31mred\x07", "colour \\x1b[31mred\\x07"),
        ("line\u2028separator\x85", "line\\u2028separator\\x85"),
        ("a, comma", "a, comma"),  # not a Paths value, still a name
        ("unclosed [ bracket", "unclosed [ bracket"),  # a glob no Paths value may hold
        ("[id]", "[id]"),  # a Next.js route: as a Paths glob it would govern i.tsx, not it
    ],
)
def test_an_edit_of_a_name_with_a_newline_is_recorded_escaped_and_so_is_the_next(
    hook, root: Path, repo: Path, odd: str, shown: str
) -> None:
    """Issue 34.6: an edit of a path holding a newline failed (`file contains a newline`),
    and the burst it left made the next edit fail too. The name is kept with its control
    characters shown as escapes, on one line of the day log, and the next edit is recorded."""
    hook(edit_of(repo / "src" / f"{odd}.py", added=2))
    hook(edit_of(repo / "src" / "plain.py", added=3))
    hook(command_of("pytest -q"))
    memory = Memory(root, author="")
    recorded = {e.details["file"]: e for e in edits(root)}
    assert set(recorded) == {f"src/{shown}.py", "src/plain.py"}
    assert recorded[f"src/{shown}.py"].details["lines"] == "+2 -0"
    assert "paths" not in recorded[f"src/{shown}.py"].fields  # an escaped name is no path
    assert recorded["src/plain.py"].fields["paths"] == "src/plain.py"
    titles = [e.title for e in memory.entries("activity")]
    assert titles.count("edited file") == 2 and titles.count("ran command") == 1
    assert len(titles) == 3  # nothing injected by the name
    assert memory.session().files_modified == [f"src/{shown}.py", "src/plain.py"]
    assert check_tree(root) == []


def task_created(number: int, subject: str) -> dict[str, Any]:
    return event(
        "PostToolUse",
        tool_name="TaskCreate",
        tool_input={"subject": subject, "description": "d"},
        tool_response={"task": {"id": str(number), "subject": subject}},
    )


def test_harness_json_stays_bounded_with_many_task_ids_and_the_live_mapping_survives(
    hook, root: Path, repo: Path
) -> None:
    """Issue 34, minor: task ids were never forgotten, so ``hot/harness.json`` grew past its
    256 KiB read limit and was then read as empty, silently: the hook forgot that it had
    started the live session, and ``SessionEnd`` left it live. A harness.json as an earlier
    version left it (1,250 task ids, just under the limit), 100 more tasks: the file stays
    small, the newest task ids and the session's mapping are kept."""
    memory = Memory(root, author="")
    live = memory.session()
    assert live is not None
    subject = "Refactor the payment retries so that a timeout is retried once " * 3
    state = {
        "sessions": {SID: {"session": live.session_id, "started": True}},
        "burst": None,
        "tasks": {str(n): f"{subject[:180]} {n}" for n in range(1250)},
    }
    (root / harness.STATE).write_text(json.dumps(state, indent=2) + "\n")
    assert (root / harness.STATE).stat().st_size < harness.MAX_STATE
    for n in range(1250, 1350):
        hook(task_created(n, f"{subject[:180]} {n}"))
    kept = json.loads((root / harness.STATE).read_text())
    assert kept["sessions"].get(SID) == {"session": live.session_id, "started": True}
    assert (root / harness.STATE).stat().st_size <= harness.BUDGET
    assert len(kept["tasks"]) <= harness.MAX_TASKS and "1349" in kept["tasks"]
    done = event(
        "PostToolUse", tool_name="TaskUpdate", tool_input={"taskId": "1349", "status": "completed"}
    )
    hook({**done, "tool_response": {}})
    pending = memory.session().pending_actions
    assert f"{subject[:180]} 1348" in pending and f"{subject[:180]} 1349" not in pending
    assert "1349" not in json.loads((root / harness.STATE).read_text())["tasks"]  # done: forgotten
    hook(event("SessionEnd", reason="other"))
    assert memory.session() is None  # the hook knew it had started the session, and ended it


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"sessions": {"' + "x" * harness.MAX_STATE + '"', "over its 262,144-byte limit"),
        ('{"sessions": {"5d0c6e2a-claude": {"session"', "Expecting ':' delimiter"),
        ('["sessions"]', "not an object of sessions"),
    ],
)
def test_a_harness_json_that_cannot_be_read_is_said_not_forgotten_silently(
    root: Path, repo: Path, content: str, why: str
) -> None:
    """Issue 34, minor: a damaged or oversized ``hot/harness.json`` was read as empty without
    a word. The hook still records the event, and says on stderr that the sessions it
    followed are forgotten (in a real process: that is where the line goes)."""
    (root / harness.STATE).write_text(content)
    [done] = hooks_at_once(root, [edit_of(repo / "src" / "a.py")])
    assert (done.returncode, done.stdout) == (0, b"")
    [line] = done.stderr.decode().splitlines()
    assert line.startswith("memsite: hot/harness.json could not be read (")
    assert why in line
    assert line.endswith("; the sessions it followed are forgotten")
    hooks_at_once(root, [command_of("make")])
    assert [e.details["file"] for e in edits(root)] == ["src/a.py"]


@given(st.text(min_size=1))
def test_an_escaped_name_is_always_one_storable_line(name: str) -> None:
    """Whatever a harness names a file, its escaped form is text a one-line field takes, and
    the escapes are reversible (no character is lost or merged with another)."""
    shown = inputs.escaped(name)
    assert not any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in shown)
    if shown.strip():
        assert inputs.one_line(shown, "file", limit=None) == " ".join(shown.split())
    if "\\" not in name:
        escape = re.compile(r"\\(?:[ntr]|x[0-9a-f]{2}|u[0-9a-f]{4})")
        revived = escape.sub(lambda found: codecs.decode(found[0], "unicode_escape"), shown)
        assert revived.encode("utf-16", "surrogatepass") == name.encode("utf-16", "surrogatepass")


def test_an_edit_of_a_link_loop_is_recorded_as_typed(root: Path, repo: Path, hook) -> None:  # type: ignore[no-untyped-def]
    # Path.resolve raises RuntimeError for a loop on Python 3.11: the hook said so on stderr
    # and the edit was lost
    loop = repo / "src" / "loop.py"
    loop.parent.mkdir(exist_ok=True)
    os.symlink(loop.name, loop)
    hook(edit_of(loop, added=2))
    hook(command_of("pytest -q"))
    [edit] = edits(root)
    assert edit.details["file"] == "src/loop.py" and edit.details["lines"] == "+2 -0"


def test_a_lone_surrogate_in_an_edited_files_name_or_a_task_id_is_recorded(
    hook, root: Path, repo: Path
) -> None:
    """The sweep after issue 36: half of a cut emoji in ``file_path`` (``"a\\ud83d.py"``, as a
    CLI's JSON writes it) made the hook say ``UnicodeEncodeError`` and lose the edit, as a
    task id holding one lost the task; before an edit of a governed file the memory about it
    was never given. Any lone surrogate in a path from the CLI's JSON (``\\udcff`` too, which
    issue 34.6 kept as an escape) is the U+FFFD the CLI's own file system named the file with
    (Node writes one so): the file the agent edited, not a byte of a name memsite cannot know."""
    (repo / "src").mkdir(exist_ok=True)
    memory = Memory(root, author="")
    memory.decide("Keep the source tidy", "Reviews go faster", paths=["src"])
    for name in ("a\ud83d.py", "b\udcff.py"):
        told = event("PreToolUse", tool_name="Edit", tool_input={"file_path": f"{repo}/src/{name}"})
        runner = CliRunner()
        given = runner.invoke(cli, ["--root", str(root), "hook"], input=json.dumps(told))
        assert (given.exit_code, given.stderr) == (0, ""), given.output
        assert "Keep the source tidy" in given.stdout
        again = runner.invoke(cli, ["--root", str(root), "hook"], input=json.dumps(told))
        assert (again.exit_code, again.stdout, again.stderr) == (0, "", "")  # given once
    hook(edit_of(repo / "src" / "a\ud83d.py", added=2))
    hook(edit_of(repo / "src" / "not utf-8 \udcff.py", added=1))
    created = task_created(7, "Write the \ud83d migration")
    hook({**created, "tool_response": {"task": {"id": "7\ud83d"}}})
    hook(command_of("pytest -q"))
    recorded = {e.details["file"]: e for e in edits(root)}
    assert set(recorded) == {"src/a\ufffd.py", "src/not utf-8 \ufffd.py"}
    assert recorded["src/a\ufffd.py"].details["lines"] == "+2 -0"
    assert recorded["src/a\ufffd.py"].fields["paths"] == "src/a\ufffd.py"
    assert "Write the \ufffd migration" in memory.session().pending_actions
    done = {"taskId": "7\ud83d", "status": "completed"}
    hook(event("PostToolUse", tool_name="TaskUpdate", tool_input=done, tool_response={}))
    assert "Write the \ufffd migration" not in memory.session().pending_actions
    assert memory.session().files_modified == ["src/a\ufffd.py", "src/not utf-8 \ufffd.py"]
    assert check_tree(root) == []
