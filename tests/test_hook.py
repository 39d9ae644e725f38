"""``memsite hook`` (issue 11): each Claude Code hook event's JSON on stdin, the answer on
stdout, the exit code, and what landed on disk.

The fixtures follow Claude Code's hooks reference (https://code.claude.com/docs/en/hooks):
every event carries ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name``;
``SessionStart`` adds ``source`` (``startup``, ``resume``, ``clear``, ``compact``) and
``model``; ``UserPromptSubmit`` adds ``prompt``; ``PreCompact`` adds ``trigger`` (``manual``,
``auto``) and ``custom_instructions``; ``PostCompact`` adds ``trigger`` and
``compact_summary``; ``SessionEnd`` adds ``reason``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.agents.hooks import run as run_hook
from memsite.cli import cli
from memsite.store.check import check_tree
from memsite.store.tree import init_tree

SUMMARY = "We were moving token refresh into auth/tokens.py; the refresh tests still fail."


def event(name: str, transcript: Path | str = "/nonexistent/t.jsonl", **fields: Any) -> dict:
    return {
        "session_id": "8f2c5b1e-claude",
        "transcript_path": str(transcript),
        "cwd": "/home/you/project",
        "hook_event_name": name,
        **fields,
    }


@pytest.fixture
def hook(root: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    runner = CliRunner()

    def feed(payload: dict | str | bytes, *args: str):
        data = payload if isinstance(payload, (str, bytes)) else json.dumps(payload)
        return runner.invoke(cli, ["--root", str(root), "hook", *args], input=data)

    return feed


@pytest.fixture
def live(root: Path) -> Memory:
    memory = Memory(root, author="")
    memory.start_session("Refactor the auth module", "s1")
    memory.progress("Moving token refresh", files=["auth/tokens.py"])
    memory.decide("Keep the kill switch for two weeks", why="Rollback without a deploy.")
    return memory


def context_of(stdout: str, name: str) -> str:
    answer = json.loads(stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == name
    return answer["hookSpecificOutput"]["additionalContext"]


def warm_entries(memory: Memory, title: str) -> list:
    return [e for e in memory.entries("activity") if e.title == title]


def test_compaction_sequence_ends_with_the_stored_summary(
    hook, live: Memory, root: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text('{"type": "user"}\n' * 100)  # 1,700 bytes
    pre = hook(event("PreCompact", transcript, trigger="auto", custom_instructions=""))
    assert (pre.exit_code, pre.stdout) == (0, "")
    post = hook(event("PostCompact", transcript, trigger="auto", compact_summary=SUMMARY))
    assert (post.exit_code, post.stdout) == (0, "")
    start = hook(event("SessionStart", transcript, source="compact", model="claude-sonnet-4"))
    assert start.exit_code == 0
    context = context_of(start.stdout, "SessionStart")
    assert context.startswith("## Since the last checkpoint")
    assert SUMMARY in context
    assert "**Task:** Refactor the auth module" in context

    first, second = warm_entries(live, "checkpoint")
    assert first.details["trigger"] == "auto" and first.details["tokens_before"] == "425"
    assert first.result.startswith("Task: Refactor the auth module")
    assert second.details["completes"] == first.id
    assert second.details["tokens_before"] == "425"
    assert second.result == SUMMARY
    assert live.session().checkpoints == [first.id, second.id]
    assert [p for p in check_tree(root) if p.severity == "error"] == []


@pytest.mark.parametrize("source", ["startup", "resume", "clear"])
def test_session_start_primes(hook, live: Memory, source: str) -> None:
    done = hook(event("SessionStart", source=source, model="claude-sonnet-4"))
    assert done.exit_code == 0
    context = context_of(done.stdout, "SessionStart")
    assert "# Where were we?" in context and "Keep the kill switch" in context
    assert "Since the last checkpoint" not in context


def test_session_start_after_a_checkpoint_shows_it_in_the_hot_context(hook, live) -> None:
    live.checkpoint(summary="Half done.")
    context = context_of(hook(event("SessionStart", source="resume")).stdout, "SessionStart")
    assert context.index("# Where were we?") < context.index("## Since the last checkpoint")


def test_user_prompt_submit_recalls(hook, live: Memory) -> None:
    done = hook(event("UserPromptSubmit", prompt="why keep the kill switch?"))
    assert done.exit_code == 0
    context = context_of(done.stdout, "UserPromptSubmit")
    assert context.startswith("## Recalled memory")
    assert "cold/decisions.md#" in context


@pytest.mark.parametrize("prompt", ["zzqxv wibbleplonk", "", "thanks!"])
def test_user_prompt_submit_with_no_match_prints_nothing(hook, live, prompt: str) -> None:
    done = hook(event("UserPromptSubmit", prompt=prompt))
    assert (done.exit_code, done.stdout) == (0, "")


def test_session_end_ends_the_session_saying_the_harness_did(hook, root: Path) -> None:
    """Issue 23: a session the SessionStart hook started is the one SessionEnd ends."""
    memory = Memory(root, author="")
    assert hook(event("SessionStart", source="startup")).exit_code == 0
    started = memory.session()
    assert started is not None and started.task == "Claude Code session 8f2c5b1e"
    hook(event("UserPromptSubmit", prompt="Move token refresh into auth/tokens.py\nthen test"))
    assert memory.session().task == "Move token refresh into auth/tokens.py"
    done = hook(event("SessionEnd", reason="prompt_input_exit"))
    assert (done.exit_code, done.stdout) == (0, "")
    assert memory.session() is None
    [end] = warm_entries(memory, "session end")
    assert end.result == "Session ended by the harness (Claude Code, reason: prompt_input_exit)."


def test_session_end_leaves_a_session_started_by_hand_live(hook, live: Memory) -> None:
    """A session a person started and Claude Code joined gets a checkpoint and stays live."""
    assert hook(event("SessionStart", source="startup")).exit_code == 0
    assert live.session().session_id == "s1"
    done = hook(event("SessionEnd", reason="prompt_input_exit"))
    assert (done.exit_code, done.stdout) == (0, "")
    assert live.session() is not None and live.session().session_id == "s1"
    assert warm_entries(live, "session end") == []
    assert len(warm_entries(live, "checkpoint")) == 1


def test_tool_calls_are_recorded_without_asking(hook, live: Memory, root: Path) -> None:
    """PostToolUse of an edit is an 'edited file' entry with its lines (a burst of edits of
    one file is one entry with a count); a failing command is 'ran command' with its exit
    status; the todo list becomes pending actions; reads are not logged."""
    repo = root.parent
    (repo / ".git").mkdir(exist_ok=True)
    target = str(repo / "auth" / "tokens.py")
    patch = {"structuredPatch": [{"lines": [" a", "-b", "+c", "+d"]}]}
    for _ in range(3):
        edit = event("PostToolUse", tool_name="Edit", tool_input={"file_path": target})
        assert hook({**edit, "tool_response": patch}).exit_code == 0
    read = event("PostToolUse", tool_name="Read", tool_input={"file_path": target})
    hook({**read, "tool_response": {"content": "x"}})
    failed = event(
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "pytest tests/auth -q"},
        error="Exit code 3\n2 failed, 40 passed",
    )
    assert hook(failed).exit_code == 0
    todo = event(
        "PostToolUse",
        tool_name="TodoWrite",
        tool_input={
            "todos": [
                {"content": "Fix the refresh test", "status": "in_progress"},
                {"content": "Write the docs", "status": "pending"},
            ]
        },
    )
    hook({**todo, "tool_response": {}})
    [edited] = warm_entries(live, "edited file")
    assert edited.details == {"file": "auth/tokens.py", "lines": "+6 -3", "edits": "3"}
    [ran] = warm_entries(live, "ran command")
    assert ran.details == {"command": "pytest tests/auth -q", "exit": "3"}
    assert ran.result == "2 failed, 40 passed"
    context = live.session()
    assert "auth/tokens.py" in context.files_modified
    assert context.pending_actions == ["Fix the refresh test", "Write the docs"]
    assert check_tree(root) == []


@pytest.mark.parametrize(
    "name", ["Stop", "PreToolUse", "Notification", "SubagentStop", None, "Whatever"]
)
def test_any_other_event_prints_nothing(hook, live: Memory, root: Path, name) -> None:
    before = sorted(p.read_text() for p in (root / "warm").glob("*.md"))
    done = hook(event(name) if name else {"session_id": "x"})
    assert (done.exit_code, done.stdout) == (0, "")
    assert sorted(p.read_text() for p in (root / "warm").glob("*.md")) == before
    if name == "PreToolUse":  # a tool that edits no file: mapped, nothing to say
        assert done.stderr == ""
    else:  # an event memsite does not map is said, never silent (issue 37)
        [line] = done.stderr.splitlines()
        assert (
            line.startswith("memsite hook: Claude Code event ") and "not one memsite maps" in line
        )


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ("{not json", "the event on stdin is not JSON"),
        ("[1, 2]", "the event on stdin is not a JSON object"),
        (b"\xff\xfe", "the event on stdin is not JSON"),
        ("", "the event on stdin is not JSON"),
    ],
)
def test_malformed_json_is_one_line_and_exit_0(hook, live, payload, said: str) -> None:
    done = hook(payload)
    assert (done.exit_code, done.stdout) == (0, "")
    assert done.stderr.startswith(f"memsite hook: {said}")
    assert done.stderr.count("\n") == 1


def test_pre_compact_without_a_live_session_is_one_line(hook, root: Path) -> None:
    done = hook(event("PreCompact", trigger="manual", custom_instructions=""))
    assert (done.exit_code, done.stdout) == (0, "")
    assert done.stderr == (
        "memsite hook: no active session (start one with 'memsite session start TASK'); "
        "no context added\n"
    )


def test_a_missing_tree_is_one_line_and_exit_0(tmp_path: Path) -> None:
    """In a real process, from a folder with no memory tree above it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    done = subprocess.run(
        [sys.executable, "-m", "memsite", "hook"],
        input=json.dumps(event("SessionStart", source="startup")).encode(),
        capture_output=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    [line] = done.stderr.decode().splitlines()
    assert line.startswith("memsite hook: no memory tree found")
    assert "Traceback" not in done.stderr.decode()


def test_a_broken_index_never_blocks(hook, live: Memory, root: Path) -> None:
    cache = root.parent / ".memsite"
    live.index()
    for path in cache.rglob("*"):
        if path.is_file():
            path.write_bytes(b"\x00garbage")
    done = hook(event("UserPromptSubmit", prompt="kill switch"))
    assert done.exit_code == 0
    assert "Traceback" not in done.output


def test_a_call_past_the_time_limit_gives_up(root: Path) -> None:
    def slow() -> Memory:
        time.sleep(2)
        return Memory(root)

    said = run_hook(json.dumps(event("SessionStart", source="startup")).encode(), slow,
                    time_limit=0.2)  # fmt: skip
    assert said.late and said.stdout == ""
    assert said.error == "memsite hook: no answer within 0.2 s; no context added"


def test_secrets_in_the_harness_summary_are_redacted(hook, live: Memory) -> None:
    hook(event("PreCompact", trigger="manual", custom_instructions=""))
    secret = "ghp_" + "b" * 36
    hook(event("PostCompact", trigger="manual", compact_summary=f"token {secret} set"))
    assert live.latest_checkpoint().summary == "token [redacted: github token] set"


def test_a_fresh_tree_primes_without_a_session(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "memory"
    init_tree(root)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    done = CliRunner().invoke(
        cli,
        ["--root", str(root), "hook"],
        input=json.dumps(event("SessionStart", source="startup")),
    )
    assert done.exit_code == 0
    # the persona is still init's template: nothing of it is injected (issue 25.8)
    context = context_of(done.stdout, "SessionStart")
    assert "# Where were we?" in context and "Persona" not in context


def test_a_harness_that_never_closes_stdin_is_answered_within_the_limit(root: Path) -> None:
    """Issue 22: the time limit covers reading the event; a stdin left open is one stderr line
    and exit 0 within the limit, not a hook that waits for ever."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    start = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "memsite", "--root", str(root), "hook"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        process.wait(timeout=20)  # stdin stays open: the harness is still writing
    finally:
        process.kill()
        assert process.stdin is not None
        process.stdin.close()
    took = time.monotonic() - start
    assert process.stdout is not None and process.stderr is not None
    with process.stdout, process.stderr:
        out, err = process.stdout.read(), process.stderr.read()
    assert process.returncode == 0
    assert out == b""
    assert err.decode().strip() == "memsite hook: no answer within 5 s; no context added"
    assert took < 8, took


def test_the_watchdog_ends_work_that_holds_the_gil() -> None:
    """A thread's join cannot return while a C loop holds the GIL (a backtracking regular
    expression); the forked child is killed at the limit instead."""
    import re

    from memsite.agents.hooks import Answer, bounded

    def backtrack() -> Answer:
        re.match(r"(a+)+$", "a" * 64 + "b")  # runs for far longer than the test
        return Answer("never")

    start = time.monotonic()
    said = bounded(backtrack, time_limit=1.0)
    assert said.late and said.stdout == ""
    assert said.error.startswith("memsite hook: no answer within")
    assert time.monotonic() - start < 3
    assert bounded(lambda: Answer("ok", "said")) == Answer("ok", "said")


def test_session_start_fits_claude_codes_cap_on_the_sample(tmp_path: Path) -> None:
    """Issue 23: Claude Code shows the model only a 2 KB preview of a hook context over 10,000
    characters; at the defaults the sample's SessionStart payload fits, with "Where were
    we?", decisions, and the line on asking for more last."""
    import shutil

    sample = tmp_path / "memory"
    shutil.copytree(Path(__file__).resolve().parent.parent / "memory", sample)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_CACHE"] = str(tmp_path / "cache")
    payload = json.dumps(event("SessionStart", source="startup"))
    start = [sys.executable, "-m", "memsite", "--root", str(sample), "hook"]
    for extra in ([], ["--prime-budget", "20000"]):
        done = subprocess.run(
            [*start, *extra], input=payload, capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert len(context) <= 10_000
        assert "# Where were we?" in context and "## Relevant decisions" in context
        assert context.rstrip().endswith("(MCP tools `recall`, `search`, `get`)._")
    assert "--prime-budget 20000 is over what fits" in done.stderr


def test_an_answer_over_the_cap_is_cut_at_a_line() -> None:
    from memsite.agents.hooks import fit

    text = "".join(f"line {n} " + "x" * 90 + "\n" for n in range(200))
    cut = fit(text)
    assert len(cut) <= 10_000 and cut.startswith("line 0 ")
    assert cut.endswith("10,000-character limit; ask memsite for more._\n")
    assert fit("short\n") == "short\n"


def test_two_claude_code_sessions_at_once_keep_two_live_sessions(hook, root: Path) -> None:
    """Issue 23: a second Claude Code session running beside the first gets its own live
    session (hot/sessions/), and neither's hooks record into, checkpoint or end the other's."""
    repo = root.parent
    (repo / ".git").mkdir(exist_ok=True)

    def on(sid: str, name: str, **fields: Any):
        done = hook({**event(name, **fields), "session_id": sid})
        assert (done.exit_code, done.stderr) == (0, ""), done.stderr
        return done

    def edit(sid: str, name: str) -> None:
        on(
            sid,
            "PostToolUse",
            tool_name="Write",
            tool_input={"file_path": str(repo / name), "content": "x = 1\n"},
            tool_response={"structuredPatch": []},
        )

    on("first-aaaa", "SessionStart", source="startup")
    on("second-bb", "SessionStart", source="startup")
    on("first-aaaa", "UserPromptSubmit", prompt="Fix the refresh tokens")
    on("second-bb", "UserPromptSubmit", prompt="Write the migration guide")
    edit("first-aaaa", "auth/tokens.py")
    edit("second-bb", "docs/migration.md")
    on("second-bb", "PreCompact", trigger="manual")
    memory = Memory(root, author="")
    lives = dict(memory.live_sessions())
    assert set(lives) == {"hot/context.json", "hot/sessions/second-bb.json"}
    assert lives["hot/context.json"].task == "Fix the refresh tokens"
    assert lives["hot/context.json"].files_modified == ["auth/tokens.py"]
    assert lives["hot/sessions/second-bb.json"].task == "Write the migration guide"
    assert lives["hot/sessions/second-bb.json"].files_modified == ["docs/migration.md"]
    assert lives["hot/context.json"].checkpoints == []
    assert len(lives["hot/sessions/second-bb.json"].checkpoints) == 1
    shown = CliRunner().invoke(cli, ["--root", str(root), "session", "show"])
    assert "Also live (hot/sessions/second-bb.json): Write the migration guide" in shown.output
    on("second-bb", "SessionEnd", reason="other")
    assert [rel for rel, _ in memory.live_sessions()] == ["hot/context.json"]
    on("first-aaaa", "SessionEnd", reason="other")
    assert memory.live_sessions() == []
    ends = {e.details["task"]: e for e in warm_entries(memory, "session end")}
    assert set(ends) == {"Fix the refresh tokens", "Write the migration guide"}
    assert "docs/migration.md" in ends["Write the migration guide"].body
    assert "auth/tokens.py" not in ends["Write the migration guide"].body
    assert "docs/migration.md" not in ends["Fix the refresh tokens"].body
    assert check_tree(root) == []


def test_a_first_session_start_without_an_index_primes_and_builds_it_behind(
    tmp_path: Path,
) -> None:
    """Issue 24: on a fresh clone (no index yet) SessionStart answers from what needs no index
    (persona, the live session, the newest current decisions) and the index is built in a
    process of its own, so the next hooks find it."""
    import shutil

    from memsite.search.index.place import is_built

    sample = tmp_path / "memory"
    shutil.copytree(Path(__file__).resolve().parent.parent / "memory", sample)
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_CACHE"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(sample), "hook"],
        input=json.dumps(event("SessionStart", source="startup")),
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 10_000
    assert "# Where were we?" in context and "## Relevant decisions" in context
    assert "Delete the legacy /auth/v1 login code" in context  # the newest decision
    assert "**Superseded**" not in context
    deadline = time.monotonic() + 60
    while not is_built(sample, cache) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert is_built(sample, cache)


def test_capture_can_be_switched_off_per_tool_in_memsite_toml(
    hook, live: Memory, root: Path
) -> None:
    """Issue 23: `[capture]` of memsite.toml turns recording off for one tool; the others
    are still recorded, and a bad value is one stderr line, exit 0."""
    repo = root.parent
    (repo / ".git").mkdir(exist_ok=True)
    (root / "memsite.toml").write_text("[capture]\nBash = false\n")
    ran = event(
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "make deploy"},
        error="Exit code 2\nno",
    )
    assert hook(ran).exit_code == 0
    wrote = event(
        "PostToolUse",
        tool_name="Write",
        tool_input={"file_path": str(repo / "a.py"), "content": "x\n"},
        tool_response={"structuredPatch": []},
    )
    assert hook(wrote).exit_code == 0
    hook(event("SessionEnd", reason="other"))
    assert warm_entries(live, "ran command") == []
    [edited] = warm_entries(live, "edited file")
    assert edited.details["file"] == "a.py"
    (root / "memsite.toml").write_text("[capture]\nBash = 3\n")
    done = hook(ran)
    assert (done.exit_code, done.stdout) == (0, "")
    assert done.stderr.count("\n") == 1 and "[capture] Bash" in done.stderr


def test_two_agent_sessions_beside_a_hand_started_one_keep_their_own_records(
    hook, live: Memory, root: Path
) -> None:
    # Issue 37: two Claude Code sessions started while a person's session was live both
    # joined it, so their files, checkpoints and ends mixed in one record
    repo = root.parent
    (repo / ".git").mkdir(exist_ok=True)
    first, second = event("SessionStart", source="startup"), event("SessionStart", source="startup")
    second["session_id"] = "0d9e4a77-claude"
    assert hook(first).exit_code == 0
    answer = hook(second)
    assert answer.exit_code == 0
    context = context_of(answer.stdout, "SessionStart")
    assert "## Also live beside this session" in context and "Refactor the auth module" in context
    patch = {"structuredPatch": [{"lines": ["-a", "+b"]}]}
    for sid, name in ((first["session_id"], "one.py"), (second["session_id"], "two.py")):
        edit = event("PostToolUse", tool_name="Edit", tool_input={"file_path": str(repo / name)})
        assert hook({**edit, "session_id": sid, "tool_response": patch}).exit_code == 0
        stop = event("UserPromptSubmit", prompt="go on")  # ends the burst: the edit is logged
        assert hook({**stop, "session_id": sid}).exit_code == 0
    sessions = dict(live.live_sessions())
    assert len(sessions) == 2
    hand, own = (
        sessions["hot/context.json"],
        next(c for r, c in sessions.items() if r != "hot/context.json"),
    )
    assert hand.session_id == "s1" and "one.py" in hand.files_modified
    assert "two.py" not in hand.files_modified
    assert own.files_modified == ["two.py"]
    assert (
        hook({**event("SessionEnd", reason="exit"), "session_id": second["session_id"]}).exit_code
        == 0
    )
    assert live.session().session_id == "s1"  # the person's session stays live
    assert [rel for rel, _ in live.live_sessions()] == ["hot/context.json"]


def test_a_stale_live_session_is_archived_not_joined(hook, root: Path) -> None:
    # Issue 37: a live session untouched for a week (the sample's) was joined by every new
    # agent session; a session whose end never fired stayed live for ever
    old = Memory(root, author="", clock=lambda: dt.datetime.now() - dt.timedelta(days=7))
    old.start_session("Prepare the removal of the legacy login", "old")
    old.progress("Port admin impersonation", files=["app/admin.py"])
    assert hook(event("SessionStart", source="startup")).exit_code == 0
    memory = Memory(root, author="")
    now = memory.session()
    assert now is not None and now.session_id != "old" and now.task.startswith("Claude Code")
    [archived] = warm_entries(memory, "session archived") or warm_entries(memory, "session end")
    assert "Archived as stale" in archived.result


def test_a_session_id_of_300000_characters_never_makes_the_others_forgotten(
    hook, root: Path
) -> None:
    # every live session's id is kept in hot/harness.json; one of 300,000 characters made it
    # larger than memsite reads back, so SessionEnd forgot the session it had started
    memory = Memory(root, author="")
    long_id = "b" * 300_000
    assert hook(event("SessionStart", source="startup")).exit_code == 0
    assert hook({**event("SessionStart", source="startup"), "session_id": long_id}).exit_code == 0
    assert (root / "hot" / "harness.json").stat().st_size < 64 * 1024
    assert hook(event("SessionEnd", reason="other")).exit_code == 0
    assert len(memory.live_sessions()) == 1  # the long id's own, still live
    [end] = warm_entries(memory, "session end")
    assert end.result == "Session ended by the harness (Claude Code, reason: other)."
    ended = hook({**event("SessionEnd", reason="other"), "session_id": long_id})
    assert ended.exit_code == 0 and memory.live_sessions() == []


@pytest.mark.parametrize("damage", ["{not json", "[1, 2]", "null"])
def test_session_start_over_a_damaged_live_session_still_primes(
    hook, live: Memory, root: Path, damage: str
) -> None:
    # one damaged hot file cost the agent its persona and all of memory at session start,
    # where `memsite prime` degrades with a warning
    (root / "hot" / "context.json").write_text(damage, "utf-8")
    done = hook(event("SessionStart", source="startup"))
    assert done.exit_code == 0
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Keep the kill switch for two weeks" in context
    assert (root / "hot" / "context.json").read_text("utf-8") == damage  # left for a person
