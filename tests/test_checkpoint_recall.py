"""Checkpoints rank as what they are, the history of a session (issue 24): recall holds none,
except the newest for a question about where the work stands, and a checkpoint is indexed
as its summary, not as the hot context it copied."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from conftest import Clock

from memsite import Memory
from memsite.search.chunks import chunk_file
from memsite.search.payloads.standing import (
    ROOM,
    asks_where_work_stands,
    is_checkpoint,
    with_one_checkpoint,
)
from memsite.store.check import check_tree

ARGON2ID = "2026-11-13-tune-argon2id-to-m-19-mib-t-2-p-1"
HASHING = (
    "Reviewed password hashing: argon2id parameters, bcrypt leftovers in the login path.",
    "Password hashing: argon2id rehash on login works; bcrypt hashes still verify.",
    "Still on password hashing: tests for argon2id verify and rehash; pending load test.",
    "Password hashing load test at 19 MiB passes; writing the migration note.",
    "Password hashing done except the docs; next: update the security runbook.",
)

# Labelled prompts for the rule: these ask where the work stands...
STANDING = (
    "where were we?",
    "Where are we with the migration?",
    "where was I",
    "pick up where we left off",
    "what was I doing?",
    "what were we working on before the compaction?",
    "status?",
    "what's the status of the auth refactor?",
    "progress so far on password hashing",
    "what happened in the last session?",
    "show me the latest checkpoint",
    "catch me up",
    "how far along are we?",
    "resume the previous session",
)
# ...and these ask about a topic, even where they share a word with the ones above.
TOPICS = (
    "what hashing do we use for passwords?",
    "should discounts use float?",
    "which HTTP status code for an expired token?",
    "where did we land on the session store?",
    "why did we move sessions to Postgres?",
    "which progress bar library do we use?",
    "how do refresh tokens rotate?",
    "what is the argon2id memory cost?",
    "what should I do about flaky tests?",
    "are we using PyJWT?",
    "when was bcrypt replaced?",
    "who owns the Mongo shutdown?",
    "what were the load test numbers for login?",
    "how far can the kill switch roll back?",
)


@pytest.mark.parametrize("prompt", STANDING)
def test_questions_about_where_the_work_stands(prompt: str) -> None:
    assert asks_where_work_stands(prompt)


@pytest.mark.parametrize("prompt", TOPICS)
def test_questions_about_a_topic(prompt: str) -> None:
    assert not asks_where_work_stands(prompt)


@pytest.fixture
def hashing(sample: Path, tmp_path: Path) -> Memory:
    """The sample memory, with a session that took five checkpoints about password hashing."""
    clock = Clock(dt.datetime(2026, 11, 30, 9, 0, 0))
    memory = Memory(sample, author="", clock=clock, cache_dir=tmp_path / "cache")
    memory.start_session("Move password hashing to argon2id everywhere", "s1")
    memory.pending_add("rehash the remaining bcrypt password hashes on login")
    memory.pending_add("file the quokka ticket with the security team")
    for summary in HASHING:
        clock.tick(minutes=20)
        memory.progress("hashing passwords with argon2id", files=["auth/passwords.py"])
        memory.checkpoint("manual", summary)
    return memory


def checkpoint_ids(hits) -> list[str]:
    return [hit.record for hit in hits if is_checkpoint(hit)]


def test_a_question_about_hashing_recalls_the_decision_and_no_checkpoint(
    hashing: Memory,
) -> None:
    recalled = hashing.recall("what hashing do we use for passwords?", lexical=True)
    assert recalled.hits[0].record == ARGON2ID
    assert checkpoint_ids(recalled.hits) == []


def test_where_were_we_recalls_the_newest_checkpoint_alone(hashing: Memory) -> None:
    recalled = hashing.recall("where were we?", lexical=True)
    assert checkpoint_ids(recalled.hits) == ["2026-11-30-checkpoint-s1-5"]
    assert recalled.hits[0].text.endswith(HASHING[-1])
    status = hashing.recall("status of the password hashing work", limit=3, lexical=True)
    assert checkpoint_ids(status.hits) == ["2026-11-30-checkpoint-s1-5"]
    assert status.hits[0].record == "2026-11-30-checkpoint-s1-5"
    assert len([hit for hit in status.hits if hit.superseded_by is None]) <= 3


def test_without_a_live_session_the_last_checkpoint_answers(hashing: Memory) -> None:
    hashing.end_session("Moved password hashing to argon2id.")
    recalled = hashing.recall("what was I doing in the last session?", lexical=True)
    assert checkpoint_ids(recalled.hits) == ["2026-11-30-checkpoint-s1-5"]


def test_search_still_lists_checkpoints_by_their_summary(hashing: Memory) -> None:
    hits = hashing.search("security runbook", lexical=True)
    assert checkpoint_ids(hits)[:1] == ["2026-11-30-checkpoint-s1-5"]
    # the pending action every checkpoint copied is not searched in them
    copied = hashing.search("quokka ticket", limit=20, lexical=True)
    assert copied[0].kind == "activity"  # the pending line, not a checkpoint
    assert checkpoint_ids(copied) == []
    assert [p for p in check_tree(hashing.root) if p.severity == "error"] == []


def discount_session(memory: Memory, clock: Clock) -> str:
    """A session that decided how to store discounts, then took five checkpoints whose
    built-in summaries name that decision."""
    memory.start_session("Price the spring sale: discounts on invoices", "sale")
    decided = memory.decide(
        "Store discounts as Decimal, never float",
        why="float rounding lost cents when discounts were summed on invoices.",
    )
    memory.pending_add("check that every discount float is gone from the invoice code")
    for _ in range(5):
        clock.tick(minutes=15)
        memory.progress("applying discounts to invoice lines")
        memory.checkpoint("auto")
    return decided


def test_discounts_decision_outranks_the_checkpoints_that_name_it(
    memory: Memory, clock: Clock
) -> None:
    decided = discount_session(memory, clock)
    prompt = "should discounts use float?"
    found = memory.search(prompt, limit=8 + ROOM, lexical=True)
    assert len(checkpoint_ids(found)) == 5  # search still lists them, below the decision
    kept = with_one_checkpoint(memory.root, prompt, found, 8)
    assert kept[0].record == decided
    assert checkpoint_ids(kept) == []


def test_discounts_recall_on_the_sample(sample: Path, tmp_path: Path) -> None:
    clock = Clock(dt.datetime(2026, 11, 30, 9, 0, 0))
    memory = Memory(sample, author="", clock=clock, cache_dir=tmp_path / "cache")
    decided = discount_session(memory, clock)
    recalled = memory.recall("should discounts use float?", lexical=True)
    assert recalled.hits[0].record == decided
    assert checkpoint_ids(recalled.hits) == []


CHECKPOINT = """# 2026-06-08

### 15:02:11 — checkpoint

```details
session_id: s1
trigger: auto
task: Refactor the auth module
started: 2026-06-08T09:00:00
updated: 2026-06-08T14:58:40
```

Result: Task: Refactor the auth module
  Current step: Moving token refresh into auth/tokens.py

**Decisions:**
- 2026-06-08-keep-the-kill-switch-for-two-weeks

**Pending:**
- update the migration guide

<!-- id: 2026-06-08-checkpoint-s1 -->
"""


def test_a_checkpoint_chunk_is_its_summary() -> None:
    (chunk,) = chunk_file("warm/2026-06-08.md", CHECKPOINT)
    summary = (
        "Task: Refactor the auth module\nCurrent step: Moving token refresh into auth/tokens.py"
    )
    assert chunk.body == summary
    assert chunk.text == f"### 15:02:11 — checkpoint\n\n{summary}"
    assert (chunk.line, chunk.end_line) == (3, 22)  # it still cites the whole entry


def test_a_checkpoint_without_a_summary_is_its_task() -> None:
    text = CHECKPOINT.replace("Result: Task: Refactor the auth module\n", "").replace(
        "  Current step: Moving token refresh into auth/tokens.py\n\n", ""
    )
    (chunk,) = chunk_file("warm/2026-06-08.md", text)
    assert chunk.body == "Refactor the auth module"
