"""Issue 25.4: open pending actions of an ended session carry over to the next session of the
tree, marked with the session they came from, unless it ends with ``--drop-pending``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.store.session import carried


@pytest.fixture
def run(root: Path):
    runner = CliRunner(env={"MEMSITE_AUTHOR": ""})

    def invoke(*args: str):
        result = runner.invoke(cli, ["--root", str(root), *args])
        assert result.exit_code == 0, result.output
        return result

    return invoke


def end_with_two_open_items(run, *flags: str) -> None:
    run("session", "start", "First", "--id", "s1", "--at", "2026-06-08T09:00:00")
    run("pending", "add", "update the migration guide")
    run("pending", "add", "rerun the refresh tests")
    run("session", "end", "--summary", "half done", *flags, "--at", "2026-06-08T10:00:00")


def test_the_next_session_holds_the_open_items_marked_carried(run, root: Path) -> None:
    end_with_two_open_items(run)
    assert (root / carried.CARRIED).is_file()
    started = run("session", "start", "Second", "--id", "s2", "--at", "2026-06-08T11:00:00")
    lines = started.stdout.splitlines()
    assert lines[0] == "Carried over 2 pending action(s)."
    assert "- [ ] update the migration guide (carried from `s1`)" in lines
    assert "- [ ] rerun the refresh tests (carried from `s1`)" in lines
    assert not (root / carried.CARRIED).exists()
    context = Memory(root, author="").session()
    assert context is not None
    assert context.pending_actions == ["update the migration guide", "rerun the refresh tests"]
    assert context.carried == {
        "update the migration guide": "s1",
        "rerun the refresh tests": "s1",
    }
    shown = json.loads(run("session", "show", "--json").stdout)
    assert shown["carried"] == context.carried
    assert "(carried from `s1`)" in run("session", "show").stdout


def test_pending_done_works_on_a_carried_item(run, root: Path) -> None:
    end_with_two_open_items(run)
    run("session", "start", "Second", "--id", "s2", "--at", "2026-06-08T11:00:00")
    run("pending", "done", "migration")
    context = Memory(root, author="").session()
    assert context is not None
    assert context.pending_actions == ["rerun the refresh tests"]
    assert context.carried == {"rerun the refresh tests": "s1"}
    [done] = [e for e in Memory(root).entries("activity") if e.title == "pending done"]
    assert done.result == "update the migration guide"


def test_drop_pending_drops_them(run, root: Path) -> None:
    end_with_two_open_items(run, "--drop-pending")
    assert not (root / carried.CARRIED).exists()
    started = run("session", "start", "Second", "--id", "s2", "--at", "2026-06-08T11:00:00")
    assert "Carried over" not in started.stdout
    context = Memory(root, author="").session()
    assert context is not None and context.pending_actions == [] and context.carried == {}
    # the archive of the ended session still lists them
    [end] = [e for e in Memory(root).entries("activity") if e.title == "session end"]
    assert "- update the migration guide" in end.body


def test_the_api_drops_them_too(root: Path) -> None:
    memory = Memory(root, author="")
    memory.start_session("First", "s1", at="2026-06-08T09:00:00")
    memory.pending_add("update the migration guide")
    memory.end_session("done", drop_pending=True, at="2026-06-08T10:00:00")
    started = memory.start_session("Second", "s2", at="2026-06-08T11:00:00")
    assert started.context.pending_actions == []


def test_items_of_several_ended_sessions_all_carry_once(root: Path) -> None:
    memory = Memory(root, author="")
    memory.start_session("First", "s1", at="2026-06-08T09:00:00")
    memory.pending_add("a")
    memory.end_session(at="2026-06-08T09:30:00")
    memory.start_session("Second", "s2", at="2026-06-08T10:00:00")
    memory.pending_add("b")  # "a" is still open: it goes on with s2
    memory.end_session(at="2026-06-08T10:30:00")
    third = memory.start_session("Third", "s3", at="2026-06-08T11:00:00")
    assert third.context.pending_actions == ["a", "b"]
    assert third.context.carried == {"a": "s2", "b": "s2"}


def test_a_session_the_hook_starts_carries_them(root: Path, monkeypatch) -> None:
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    runner = CliRunner()

    def hook(name: str, sid: str, **fields: str) -> None:
        payload = {
            "session_id": sid,
            "transcript_path": "/nonexistent/t.jsonl",
            "cwd": "/home/you/project",
            "hook_event_name": name,
            **fields,
        }
        done = runner.invoke(cli, ["--root", str(root), "hook"], input=json.dumps(payload))
        assert done.exit_code == 0, done.output

    memory = Memory(root, author="")
    hook("SessionStart", "8f2c5b1e-first", source="startup")
    first = memory.session()
    assert first is not None
    memory.pending_add("update the migration guide")
    hook("SessionEnd", "8f2c5b1e-first", reason="prompt_input_exit")
    assert memory.session() is None
    hook("SessionStart", "a1b2c3d4-second", source="startup")
    second = memory.session()
    assert second is not None and second.session_id != first.session_id
    assert second.pending_actions == ["update the migration guide"]
    assert second.carried == {"update the migration guide": first.session_id}
