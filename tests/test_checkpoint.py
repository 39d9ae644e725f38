"""Checkpoints of the live session (issue 11): the 80% rule, summaries given, extracted or
made by a summarizer command (which may fail or hang), the hot context's list, prime after a
checkpoint, and the budget table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.store.check import check_tree
from memsite.store.format import parse_entries
from memsite.store.model import HotContext

AT = "2026-06-08T15:00:00"
PY = sys.executable


@pytest.fixture
def run(root: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(cli, ["--root", str(root), *args], input=input)

    return invoke


@pytest.fixture
def working(memory: Memory, clock) -> Memory:
    """A session with a step, a file, a decision, a learning, a pending action and a result."""
    memory.start_session("Refactor the auth module", "s1")
    clock.tick(minutes=5)
    memory.progress("Moving token refresh", files=["auth/tokens.py"])
    memory.decide("Keep the kill switch", why="Rollback without a deploy.")
    memory.learn("Mobile clients replay refresh tokens", category="auth")
    memory.pending_add("update the migration guide")
    memory.log("ran the auth tests", result="3 failed in test_refresh.py")
    clock.tick(minutes=5)
    return memory


def checkpoints_in(root: Path) -> list:
    text = (root / "warm" / "2026-06-08.md").read_text()
    entries = parse_entries(text, "warm/2026-06-08.md").entries
    return [e for e in entries if e.title == "checkpoint"]


def test_over_the_threshold_a_checkpoint_is_written(run, working: Memory, root: Path) -> None:
    done = run("checkpoint", "--used", "170000", "--window", "200000", "--at", AT)
    assert done.exit_code == 0, done.output
    assert done.output == (
        "context window 85% full (170,000 of 200,000 tokens): 2026-06-08-checkpoint-s1\n"
    )
    [entry] = checkpoints_in(root)
    assert entry.details["trigger"] == "threshold"
    assert entry.details["tokens_before"] == "170000"
    assert entry.details["task"] == "Refactor the auth module"
    assert entry.details["current_step"] == "Moving token refresh"
    assert "- update the migration guide" in entry.body and "`auth/tokens.py`" in entry.body
    assert working.session().checkpoints == ["2026-06-08-checkpoint-s1"]
    assert [p for p in check_tree(root) if p.severity == "error"] == []


def test_under_the_threshold_nothing_is_written(run, working: Memory, root: Path) -> None:
    before = (root / "warm" / "2026-06-08.md").read_text()
    done = run("checkpoint", "--used", "100000", "--window", "200000", "--at", AT)
    assert done.exit_code == 0
    assert done.output == (
        "context window 50% full (100,000 of 200,000 tokens), under the 80% threshold: "
        "no checkpoint written\n"
    )
    assert (root / "warm" / "2026-06-08.md").read_text() == before
    assert working.session().checkpoints == []


def test_used_needs_window(run, working: Memory) -> None:
    done = run("checkpoint", "--used", "100000")
    assert done.exit_code == 2
    assert "--used and --window go together" in done.output


def test_the_built_in_summary_extracts_what_the_session_recorded(working: Memory) -> None:
    done = working.checkpoint()
    summary = working.latest_checkpoint().summary
    assert done.id == "2026-06-08-checkpoint-s1"
    assert summary.splitlines() == [
        "Task: Refactor the auth module",
        "Current step: Moving token refresh",
        "Decisions: Keep the kill switch",
        "Learnings: Mobile clients replay refresh tokens",
        "Pending: update the migration guide",
        "Files touched: auth/tokens.py",
        "Last results: progress: Moving token refresh; ran the auth tests: 3 failed in "
        "test_refresh.py",
    ]


def test_a_second_checkpoint_summarizes_only_what_came_after_the_first(
    working: Memory, clock
) -> None:
    working.checkpoint()
    clock.tick(minutes=1)
    working.log("deployed to staging", result="green")
    clock.tick(minutes=1)
    second = working.checkpoint("auto")
    summary = working.latest_checkpoint().summary
    assert second.id == "2026-06-08-checkpoint-s1-2"
    assert "Last results: deployed to staging: green" in summary
    assert "Decisions:" not in summary
    assert working.session().checkpoints == ["2026-06-08-checkpoint-s1", second.id]


def test_a_given_summary_is_stored_and_redacted(run, working: Memory) -> None:
    secret = "ghp_" + "a" * 36
    done = run("checkpoint", "--summary", "-", "--at", AT, input=f"We were at step 3 {secret}\n")
    assert done.exit_code == 0, done.output
    summary = working.latest_checkpoint().summary
    assert summary == "We were at step 3 [redacted: github token]"


def test_a_summarizer_gets_the_session_and_its_answer_is_stored(run, working: Memory) -> None:
    script = "import sys; t = sys.stdin.read(); print('SUMMARY', 'ran the auth tests' in t)"
    command = f"{PY} -c {json.dumps(script)}"
    done = run("checkpoint", "--summarizer", command, "--at", AT)
    assert done.exit_code == 0, done.output
    assert working.latest_checkpoint().summary == "SUMMARY True"


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ("import sys; sys.exit(3)", "exited 3"),
        ("import time; time.sleep(30)", "took over 0.5 s"),
        ("pass", "printed nothing"),
    ],
    ids=["fails", "hangs", "silent"],
)
def test_a_failing_summarizer_still_leaves_a_checkpoint(
    run, working: Memory, root: Path, script: str, said: str
) -> None:
    command = f"{PY} -c {json.dumps(script)}"
    done = run("checkpoint", "--summarizer", command, "--summarizer-timeout", "0.5", "--at", AT)
    assert done.exit_code == 0, done.output
    latest = working.latest_checkpoint()
    assert latest.summary.startswith("Task: Refactor the auth module\n")
    assert said in latest.note and latest.note.endswith("the built-in summary is used")
    assert [p for p in check_tree(root) if p.severity == "error"] == []


def test_a_summarizer_that_cannot_start_still_leaves_a_checkpoint(working: Memory) -> None:
    done = working.checkpoint(summarizer="no-such-summarizer-command --fast")
    assert done.id is not None
    assert "did not start" in working.latest_checkpoint().note


def test_without_a_live_session_nothing_is_written(run) -> None:
    done = run("checkpoint", "--summary", "x")
    assert done.exit_code == 1
    assert "no active session" in done.output


def test_prime_after_a_checkpoint_holds_its_summary(working: Memory) -> None:
    working.checkpoint(summary="Halfway through moving token refresh.")
    primed = working.prime()
    assert "## Since the last checkpoint" in primed.markdown
    assert "Halfway through moving token refresh." in primed.markdown
    led = working.prime(after_compact=True)
    assert led.sections[0].name == "checkpoint"
    assert led.markdown.startswith("## Since the last checkpoint")


def test_the_hot_context_without_checkpoints_reads_and_writes_as_before() -> None:
    old = {
        "session_id": "s1",
        "task": "t",
        "current_step": "",
        "files_modified": [],
        "decisions": [],
        "pending_actions": [],
        "started": "2026-06-08T09:00:00",
        "updated": "2026-06-08T09:00:00",
    }
    context = HotContext.from_dict(old)
    assert context.checkpoints == []
    assert context.to_dict() == old
    context.checkpoints.append("2026-06-08-checkpoint-s1")
    assert HotContext.from_dict(context.to_dict()) == context


def test_the_hot_context_keeps_a_short_list(working: Memory, clock) -> None:
    ids = []
    for _ in range(7):
        clock.tick(seconds=1)
        ids.append(working.checkpoint(summary="step").id)
    assert working.session().checkpoints == ids[-5:]


# -- the budget table ----------------------------------------------------------------------


def test_budget_prints_the_table(run, working: Memory) -> None:
    done = run("budget")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == "context budget of a 200,000-token window (defaults)"
    assert lines[1].split() == ["tier", "holds", "share", "now"]
    assert [line.split()[0] for line in lines[2:10]] == [
        "system", "hot", "warm", "cold", "task", "code", "output", "total",
    ]  # fmt: skip
    assert "200,000" in lines[9]
    assert not any(line.startswith("warning:") for line in lines)


def test_budget_warns_on_an_oversized_tier(run, working: Memory, root: Path) -> None:
    (root / "persona.md").write_text("# Me\n\n" + "A long standing preference. " * 400)
    done = run("budget", "--window", "100000")
    assert done.exit_code == 0
    system = next(line for line in done.output.splitlines() if line.startswith("system"))
    assert system.split()[2] == "2,500"
    assert "warning: system (persona) takes 2,8" in done.output
    assert "over its share of 2,500: shorten persona.md" in done.output


def test_budget_shares_come_from_memsite_toml(run, working: Memory, root: Path) -> None:
    (root / "memsite.toml").write_text("[budget]\nwindow = 100000\nhot = 20000\n")
    table = json.loads(run("budget", "--json").stdout)
    shares = {row["tier"]: row["share"] for row in table["tiers"]}
    assert shares["hot"] == 40_000 and shares["system"] == 5_000  # the default: 5K of 200K
    assert table["source"].endswith("memsite.toml")
    (root / "memsite.toml").write_text("[budget]\nhott = 1\n")
    done = run("budget")
    assert done.exit_code == 1
    assert "[budget] has no key 'hott'" in done.output


def test_the_day_page_lists_checkpoints_in_its_session_block(working: Memory, root: Path) -> None:
    from memsite.site.pages import build_site

    working.checkpoint("auto", summary="Halfway through moving token refresh.")
    working.end_session("done")
    day = build_site(root, working.clock(), related=False).page("activity/2026-06-08.md")
    block = day.markdown.split("## Sessions", 1)[1].split("\n## ", 1)[0]
    # the session named once, its checkpoint under it; the summary is in its log entry
    assert block.count("`s1`") == 1 and "`s1`, session end at 14:40</span>: done" in block
    assert "\n    - 1 checkpoint: [14:40](2026-06-08.md#" in block
    assert "Halfway through" not in block
    assert "**Summary:** Halfway through moving token refresh." in day.markdown
