"""The Python API: what an agent calling ``Memory`` on every turn relies on."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from memsite import InvalidInput, Memory, NotFound
from tests.conftest import Clock


def test_decide_lands_in_cold_with_a_pointer_in_warm_and_in_the_session(
    memory: Memory, root: Path
) -> None:
    memory.start_session("Refactor auth")
    entry_id = memory.decide("Switched to Postgres", why="Mongo lost writes", tags=["db"])
    assert entry_id == "2026-06-08-switched-to-postgres"
    (decision,) = memory.entries("decision")
    assert (decision.title, decision.why, decision.tags, decision.path) == (
        "Switched to Postgres",
        "Mongo lost writes",
        ["db"],
        "cold/decisions.md",
    )
    pointer = [e for e in memory.entries("activity") if e.title == "decision"]
    assert [p.details["decision"] for p in pointer] == [entry_id]
    assert pointer[0].date == dt.date(2026, 6, 8) and pointer[0].time == dt.time(14, 30, 5)
    assert memory.session().decisions == [entry_id]


def test_learning_and_log_return_ids_and_read_back(memory: Memory) -> None:
    learned = memory.learn("Mock the clock", category="testing", why="flaky tests", tags=["ci"])
    logged = memory.log("ran tests", details={"command": "pytest -q"}, result="3 failed")
    assert (learned, logged) == ("2026-06-08-mock-the-clock", "2026-06-08-ran-tests")
    by_id = {e.id: e for e in memory.entries()}
    assert by_id[learned].category == "testing"
    assert by_id[logged].details == {"command": "pytest -q"}
    assert by_id[logged].result == "3 failed"
    assert by_id[logged].path == "warm/2026-06-08.md"


def test_same_title_same_day_gets_a_suffix(memory: Memory) -> None:
    ids = [memory.log("edit") for _ in range(3)]
    assert ids == ["2026-06-08-edit", "2026-06-08-edit-2", "2026-06-08-edit-3"]


def test_at_backfills_history_into_the_right_day(memory: Memory, root: Path) -> None:
    entry_id = memory.decide("Old choice", why="history", at="2026-03-21T09:15:00")
    assert entry_id == "2026-03-21-old-choice"
    assert (
        (root / "warm" / "2026-03-21.md")
        .read_text()
        .startswith("# 2026-03-21\n\n### 09:15:00 — decision")
    )


@pytest.mark.parametrize(
    "at", ["2026-02-30", "2026-02-30T10:00:00", "yesterday", "2026-13-01T00:00"]
)
def test_invalid_at_is_refused_and_nothing_is_written(memory: Memory, root: Path, at: str) -> None:
    before = (root / "cold" / "decisions.md").read_bytes()
    with pytest.raises(InvalidInput):
        memory.decide("x", why="y", at=at)
    assert (root / "cold" / "decisions.md").read_bytes() == before
    assert list((root / "warm").glob("*.md")) == []


def test_supersedes_must_name_an_existing_decision(memory: Memory) -> None:
    old = memory.decide("Use JWT", why="stateless")
    with pytest.raises(NotFound, match="no decision with that id"):
        memory.decide("Use opaque tokens", why="revocation", supersedes="2026-06-08-nope")
    new = memory.decide("Use opaque tokens", why="revocation", supersedes=old)
    assert {e.id: e.supersedes for e in memory.entries("decision")} == {old: None, new: old}


def test_author_comes_from_the_environment_or_the_argument(
    root: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSITE_AUTHOR", "maria")
    memory = Memory(root, clock=clock)
    first = memory.log("reviewed")
    second = memory.log("paired", author="dev")
    authors = {e.id: e.author for e in memory.entries("activity")}
    assert (authors[first], authors[second]) == ("maria", "dev")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.decide("", why="y"), "title is empty"),
        (lambda m: m.decide("two\nlines", why="y"), "newline"),
        (lambda m: m.decide("nul\x00", why="y"), "NUL"),
        (lambda m: m.decide("bell\x07", why="y"), "control character"),
        (lambda m: m.decide("ok", why="   "), "^why is empty"),
        (lambda m: m.learn("ok", category=""), "^category is empty"),
        (lambda m: m.decide("ok", why="y", tags=["a,b"]), "comma"),
        (lambda m: m.log("ok", body="x" * (1024 * 1024 + 1)), "limit is 1,048,576 bytes"),
        (lambda m: m.log("ok", body="\udcff"), "lone surrogate"),
    ],
)
def test_bad_input_is_refused_before_writing(
    memory: Memory, root: Path, call, message: str
) -> None:
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(InvalidInput, match=message):
        call(memory)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot


def test_newlines_and_tabs_are_fine_in_long_text(memory: Memory) -> None:
    memory.decide("ok", why="line one\n\tindented", risk="a\n\nb", body="x\ty")
    (entry,) = memory.entries("decision")
    assert (entry.why, entry.risk, entry.body) == ("line one\n\tindented", "a\n\nb", "x\ty")


def test_body_limit_is_measured_before_redaction(memory: Memory) -> None:
    body = "password=hunter2hunter2 " + "x" * (1024 * 1024 - 30)
    memory.log("big", body=body)
    (entry,) = memory.entries("activity")
    assert entry.body.startswith("password=[redacted: password] ")


def test_secrets_are_redacted_visibly_and_reported(memory: Memory) -> None:
    notices: list[str] = []
    memory.notify = notices.append
    memory.decide("Rotate keys", why="leaked AKIAIOSFODNN7EXAMPLE in a log")
    (entry,) = memory.entries("decision")
    assert entry.why == "leaked [redacted: aws access key] in a log"
    assert notices == [
        "redacted 1 secret(s) in why (aws access key); pass allow_secrets=True to keep them"
    ]


def test_allow_secrets_keeps_the_text(root: Path, clock: Clock) -> None:
    memory = Memory(root, author="", clock=clock, allow_secrets=True)
    memory.log("x", result="AKIAIOSFODNN7EXAMPLE")
    assert memory.entries("activity")[0].result == "AKIAIOSFODNN7EXAMPLE"


# -- sessions ---------------------------------------------------------------------------


def test_session_lifecycle_archives_into_warm_and_clears_hot(
    memory: Memory, root: Path, clock: Clock
) -> None:
    started = memory.start_session("Refactor auth", session_id="s1")
    assert started.archived is None and started.context.task == "Refactor auth"
    clock.tick(minutes=5)
    memory.progress("Reading session.py", files=["auth/session.py"])
    memory.pending_add("write tests")
    memory.pending_add("update docs")
    memory.pending_done("docs")
    context = json.loads((root / "hot" / "context.json").read_text())
    assert context["current_step"] == "Reading session.py"
    assert context["files_modified"] == ["auth/session.py"]
    assert context["pending_actions"] == ["write tests"]
    assert context["updated"] == "2026-06-08T14:35:05"
    archive_id = memory.end_session("half done")
    assert not (root / "hot" / "context.json").exists()
    archived = {e.id: e for e in memory.entries("activity")}[archive_id]
    assert archived.title == "session end"
    assert archived.details["session_id"] == "s1"
    assert archived.result == "half done"
    assert "- write tests" in archived.body
    assert memory.session() is None


def test_unfinished_session_is_archived_when_the_next_one_starts(
    memory: Memory, clock: Clock
) -> None:
    memory.start_session("First", session_id="s1")
    memory.pending_add("carry me")
    clock.tick(hours=1)
    started = memory.start_session("Second", session_id="s2")
    assert started.archived is not None and started.archived.session_id == "s1"
    archived = [e for e in memory.entries("activity") if e.title == "session archived"]
    assert [a.details["session_id"] for a in archived] == ["s1"]
    assert started.context.pending_actions == ["carry me"]


def test_progress_without_a_session_says_how_to_start_one(memory: Memory) -> None:
    with pytest.raises(NotFound, match=r"start_session\(task\)"):
        memory.progress("step")


def test_entries_cover_notes_but_never_the_persona(memory: Memory, root: Path) -> None:
    (root / "notes").mkdir()
    (root / "notes" / "runbook.md").write_text("# Runbook\n\nDate: 2026-05-01\n\n## Restart\n")
    (root / "persona.md").write_text("# Persona\n\n## 2026-01-01 — not an entry\n")
    (note,) = memory.entries()
    assert (note.kind, note.title, note.date, note.path) == (
        "note",
        "Runbook",
        dt.date(2026, 5, 1),
        "notes/runbook.md",
    )


def test_prune_moves_old_logs_and_deletes_nothing(memory: Memory, root: Path) -> None:
    for day in ("2026-05-01", "2026-05-31", "2026-06-01"):
        memory.log("work", at=f"{day}T10:00:00")
    before = {e.id for e in memory.entries()}
    moved = memory.prune(keep_days=7)
    assert moved == [
        ("warm/2026-05-01.md", "warm/archive/2026/2026-05-01.md"),
        ("warm/2026-05-31.md", "warm/archive/2026/2026-05-31.md"),
    ]
    assert {e.id for e in memory.entries()} == before
    assert sorted(p.name for p in (root / "warm").glob("*.md")) == ["2026-06-01.md"]
    # a backfilled entry for an archived day lands in the archived log
    memory.log("late note", at="2026-05-01T18:00:00")
    assert "late note" in (root / "warm/archive/2026/2026-05-01.md").read_text()


def test_a_root_that_is_a_file_is_refused(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(NotFound, match="is a file"):
        Memory(path, clock=clock).log("x")


def test_broken_file_elsewhere_never_stops_a_write(memory: Memory, root: Path) -> None:
    (root / "cold" / "broken.md").write_bytes(b"\xff\xfe not utf-8")
    assert memory.decide("Still works", why="isolation")
    read = memory.read()
    assert [e.title for e in read.parsed.entries if e.kind == "decision"] == ["Still works"]
    assert any(p.path == "cold/broken.md" and "UTF-8" in p.message for p in read.parsed.problems)


def test_a_killed_writers_temporary_file_is_cleaned_up_by_the_next_save(
    memory: Memory, root: Path
) -> None:
    memory.start_session("task")
    leftover = root / "hot" / ".context.json.abc123.tmp"
    leftover.write_text("{half")
    memory.pending_add("next")
    assert not leftover.exists()
    assert memory.session().pending_actions == ["next"]


def test_a_decision_a_learning_and_an_activity_of_the_same_title_and_day_get_distinct_ids(
    memory: Memory, root: Path
) -> None:
    from memsite.store.check import check_tree

    at = "2026-06-08T10:00:00"
    made = [
        memory.decide("Use Postgres", why="w", at=at),
        memory.learn("Use Postgres", category="db", at=at),
        memory.log("Use Postgres", at=at),
    ]
    assert len(set(made)) == 3
    assert sorted(e.id for e in memory.entries() if e.title == "Use Postgres") == sorted(made)
    assert [p for p in check_tree(root) if p.severity == "error"] == []
