"""The real Claude Code binary (issue 23) against memsite's hooks, offline: each test runs
``claude -p`` (pinned, see tests/claude_code.py) in a project holding the sample memory and
asserts on what the Messages-API stand-in received, i.e. on what reached the model.

One ``claude -p`` run takes a few seconds, so each run is a module fixture shared by the
tests that look at it."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.claude_code import (
    PIN,
    Run,
    memsite_context,
    require_claude,
    run_claude,
    sample_project,
    tool_use,
    warm_log,
)

CLAUDE = require_claude()  # skipped without the binary; fails instead in CI

QUESTION = "What did we decide about password hashing?"
PASSWORDS = "services/auth/passwords.py"
BEFORE = 'HASHER = "bcrypt"  # cost 12\n'
AFTER = 'HASHER = "argon2id"\n'


def test_the_binary_is_the_pinned_version() -> None:
    version = subprocess.run(
        [str(CLAUDE), "--version"], capture_output=True, text=True, check=True, timeout=30
    )
    assert version.stdout.split()[0] == PIN


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, str, str]:
    """One run of the question, and what memsite's hooks answer to its SessionStart and
    UserPromptSubmit (asked on a twin project: the run's SessionEnd ends the live session)."""
    work = tmp_path_factory.mktemp("claude-ask")
    now = dt.datetime.now().isoformat(timespec="seconds")
    twin = _touched(sample_project(work / "twin"), now)
    prime = memsite_context(twin, "SessionStart", "--prime-budget", "20000", source="startup")
    recall = memsite_context(twin, "UserPromptSubmit", prompt=QUESTION)
    project = _touched(sample_project(work / "project"), now)
    run = run_claude(project, QUESTION, ["We switched to argon2id."])
    return run, prime, recall


def _touched(project: Path, now: str) -> Path:
    """``project`` with the sample's live session updated now: a week old it is stale, and
    each SessionStart would archive it and start a session named by its own id (issue 37),
    so the twin's answer and the run's would differ by that id."""
    path = project / "memory" / "hot" / "context.json"
    context = json.loads(path.read_text("utf-8"))
    context["updated"] = now
    path.write_text(json.dumps(context, indent=2) + "\n", "utf-8")
    return project


def test_a_question_is_one_model_call_answered_from_the_script(asked) -> None:
    run, _, _ = asked
    assert run.returncode == 0, run.stderr
    assert run.session_id
    assert run.output["result"] == "We switched to argon2id."
    assert len(run.messages) == 1
    assert QUESTION in run.texts(run.messages[0])


def test_the_session_start_context_reaches_the_model_inline(asked) -> None:
    run, prime, _ = asked
    first = run.messages[0]
    assert prime.startswith("# Persona")
    assert "Where were we" in prime
    previews = run.persisted_preview(first)
    assert not previews, f"sent as a preview of a file instead: {previews[0][:300]}"
    assert prime in run.all_texts(first)


def test_the_recall_of_the_prompt_reaches_the_model_inline(asked) -> None:
    run, _, recall = asked
    assert "argon2id" in recall
    assert recall in run.all_texts(run.messages[0])


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """One run whose "model" edits a file governed by a decision of the sample memory."""
    project = sample_project(
        tmp_path_factory.mktemp("claude-edit") / "project", files={PASSWORDS: BEFORE}
    )
    edit = tool_use("Edit", file_path=str(project / PASSWORDS), old_string=BEFORE, new_string=AFTER)
    return run_claude(project, "Switch the hasher to argon2id", [edit, "Switched."]), project


def test_a_scripted_edit_changes_the_file(edited) -> None:
    run, project = edited
    assert run.returncode == 0, run.stderr
    assert (project / PASSWORDS).read_text() == AFTER
    assert run.output["result"] == "Switched."


def test_the_call_after_the_edit_holds_its_tool_result(edited) -> None:
    run, project = edited
    assert len(run.messages) == 2
    assert not run.tool_results(run.messages[0])
    (result,) = run.tool_results(run.messages[1])
    assert not result.get("is_error")
    assert f"{project / PASSWORDS} has been updated" in str(result["content"])


# -- issue 23: sessions that follow the harness, settings from `memsite init --claude` -------


def _init_claude(project: Path) -> None:
    """The settings exactly as `memsite init --claude` writes them (run by this venv)."""
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(project / "memory"), "init", "--claude"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "memsite's Claude Code hooks" in done.stdout


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Two Claude Code sessions, one after the other, on the sample memory with no live
    session and no `memsite session start` by hand: the first asks about password hashing,
    the second edits the file a current decision governs and runs a failing command, then
    that session is compacted."""
    project = sample_project(
        tmp_path_factory.mktemp("claude-follow") / "project",
        settings=False,
        files={PASSWORDS: BEFORE},
        live=False,
    )
    _init_claude(project)
    first = run_claude(project, QUESTION, ["We use argon2id."])
    hot_after_first = (project / "memory" / "hot" / "context.json").exists()
    edit = tool_use("Edit", file_path=str(project / PASSWORDS), old_string=BEFORE, new_string=AFTER)
    failing = tool_use("Bash", command="echo 2 tests failed; exit 3", description="run tests")
    second = run_claude(
        project,
        "Switch the hasher to argon2id and run the tests",
        [edit, failing, "Switched; the tests fail."],
        allowed_tools=("Bash",),
    )
    summary = "We switched services/auth/passwords.py to argon2id; two tests still fail."
    compact = run_claude(
        project,
        "/compact",
        [f"<analysis>scratch</analysis>\n<summary>{summary}</summary>"],
        resume=second.session_id,
    )
    after = run_claude(project, "Go on", ["Going on."], resume=second.session_id)
    return {
        "project": project,
        "after": after,
        "first": first,
        "second": second,
        "compact": compact,
        "summary": summary,
        "hot_after_first": hot_after_first,
    }


def test_a_new_session_starts_memory_and_the_model_gets_it_inline(followed) -> None:
    first = followed["first"]
    assert first.returncode == 0, first.stderr
    sent = first.all_texts(first.messages[0])
    assert not first.persisted_preview(first.messages[0])
    assert "SessionStart hook additional context: # Persona" in sent
    assert "# Where were we?" in sent
    assert "Claude Code session" in sent  # the live session the hook started
    assert "## Relevant decisions" in sent
    assert "UserPromptSubmit hook additional context: ## Recalled memory" in sent
    assert "argon2id" in sent
    # the session the hook started is the one its SessionEnd ended
    assert not followed["hot_after_first"]
    warm = warm_log(followed["project"] / "memory")
    assert f"task: {QUESTION}" in warm  # named by its first prompt


def test_a_later_session_is_given_the_decision_that_governs_the_edited_file(followed) -> None:
    second = followed["second"]
    assert second.returncode == 0, second.stderr
    assert (followed["project"] / PASSWORDS).read_text() == AFTER
    after_edit = second.all_texts(second.messages[1])
    assert second.tool_results(second.messages[1])
    assert f"PreToolUse:Edit hook additional context: ## Memory about `{PASSWORDS}`" in after_edit
    assert "argon2id" in after_edit


def test_edits_and_commands_are_written_without_asking(followed) -> None:
    warm = warm_log(followed["project"] / "memory")
    assert "— edited file" in warm
    assert f"file: {PASSWORDS}\nlines: +1 -1\n" in warm
    assert "— ran command" in warm
    assert "command: echo 2 tests failed; exit 3\nexit: 3\n" in warm
    assert "Result: 2 tests failed" in warm
    # the session's record names its file
    assert f"**Files modified:**\n- `{PASSWORDS}`" in warm
    checked = subprocess.run(
        [*_memsite(followed["project"]), "check"], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_compact_leaves_a_checkpoint_with_the_harness_summary(followed) -> None:
    compact = followed["compact"]
    assert compact.returncode == 0, compact.stderr
    warm = warm_log(followed["project"] / "memory")
    assert "— checkpoint" in warm
    assert f"Result: {followed['summary']}" in warm
    assert "<analysis>" not in warm and "scratch" not in warm
    assert warm.count(f"Result: {followed['summary']}") == 1
    # the SessionStart `compact` answer, which reaches the model with the next prompt, leads
    # with the checkpoint. Claude Code 2.1.328 fires it before PostCompact and before it
    # writes the summary to the transcript, so it holds memsite's own summary of the session;
    # the harness's own is in the model's context already, and in the completing checkpoint.
    after = followed["after"]
    assert after.returncode == 0, after.stderr
    sent = after.all_texts(after.messages[0])
    starts = sent.split("SessionStart hook additional context: ")[1:]
    led = [x for x in starts if x.startswith("## Since the last checkpoint")]
    assert led, [x[:80] for x in starts]
    assert "Task: Switch the hasher to argon2id and run the tests (resumed)" in led[0]
    # the resumed session carries on the task of the one it resumes
    assert "task: Switch the hasher to argon2id and run the tests (resumed)" in warm


def _memsite(project: Path) -> list[str]:
    import sys

    return [sys.executable, "-m", "memsite", "--root", str(project / "memory")]


def test_two_sessions_at_once_keep_their_own_records(tmp_path: Path) -> None:
    """Issue 23: two Claude Code sessions in one repository at the same time, one editing a
    file and running a command that exits 3, the other editing another file: the warm log
    holds the edit with its lines and the command with exit status 3, each session's record
    names its own file only, and `memsite check` passes."""
    from concurrent.futures import ThreadPoolExecutor

    project = sample_project(
        tmp_path / "project",
        settings=False,
        files={"src/a.py": "A = 1\n", "src/b.py": "B = 1\n"},
        live=False,
    )
    _init_claude(project)
    first = [
        tool_use("Bash", command="sleep 3", description="wait"),
        tool_use(
            "Edit", file_path=str(project / "src/a.py"), old_string="A = 1", new_string="A = 2"
        ),
        tool_use("Bash", command="echo 1 failed; exit 3", description="run tests"),
        "A done.",
    ]
    second = [
        tool_use("Bash", command="sleep 3", description="wait"),
        tool_use(
            "Edit", file_path=str(project / "src/b.py"), old_string="B = 1", new_string="B = 2"
        ),
        "B done.",
    ]
    with ThreadPoolExecutor(2) as pool:
        runs = list(
            pool.map(
                lambda job: run_claude(project, job[0], job[1], allowed_tools=("Bash",)),
                [("Change A and test it", first), ("Change B", second)],
            )
        )
    for run in runs:
        assert run.returncode == 0, run.stderr
    warm = warm_log(project / "memory")
    assert "file: src/a.py\nlines: +1 -1\n" in warm and "file: src/b.py\nlines: +1 -1\n" in warm
    assert "command: echo 1 failed; exit 3\nexit: 3\n" in warm
    ends = [block for block in warm.split("\n### ") if "— session end" in block.split("\n")[0]]
    named = {
        block.split("task: ", 1)[1].split("\n", 1)[0]: block
        for block in ends
        if "Claude Code, reason" in block
    }
    assert "`src/a.py`" in named["Change A and test it"]
    assert "`src/b.py`" not in named["Change A and test it"]
    assert "`src/b.py`" in named["Change B"] and "`src/a.py`" not in named["Change B"]
    today = (project / "memory" / "warm" / f"{dt.date.today().isoformat()}.md").read_text()
    assert "session archived" not in today  # neither session archived the other's
    checked = subprocess.run(
        [*_memsite(project), "check"], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_two_sessions_beside_a_hand_started_one_keep_their_own_files(tmp_path: Path) -> None:
    """Issue 37: with a person's session started by hand, two Claude Code sessions at once
    each recorded their files into the one session ("The session stays live", files mixed).
    Now one agent joins the person's session and the other keeps a session of its own."""
    from concurrent.futures import ThreadPoolExecutor

    project = sample_project(
        tmp_path / "project", settings=False, files={"src/a.py": "A = 1\n", "src/b.py": "B = 1\n"}
    )
    _init_claude(project)
    # the person starts today's session by hand (the sample's week-old one is archived)
    started = subprocess.run(
        [*_memsite(project), "session", "start", "Pair on the cart", "--id", "hand"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 0, started.stderr

    def job(name: str) -> list:
        path = str(project / f"src/{name}.py")
        big = name.upper()
        return [
            tool_use("Bash", command="sleep 3", description="wait"),
            tool_use("Edit", file_path=path, old_string=f"{big} = 1", new_string=f"{big} = 2"),
            f"{big} done.",
        ]

    with ThreadPoolExecutor(2) as pool:
        runs = list(
            pool.map(
                lambda args: run_claude(project, *args, allowed_tools=("Bash",)),
                [("Change A", job("a")), ("Change B", job("b"))],
            )
        )
    for run in runs:
        assert run.returncode == 0, run.stderr
    warm = warm_log(project / "memory")
    ends = [block for block in warm.split("\n### ") if "— session end" in block.split("\n")[0]]
    own = [block for block in ends if "Claude Code, reason" in block]
    assert len(own) == 1  # the agent that had a session of its own ended it
    mine = "a" if "Change A" in own[0] else "b"
    other = "b" if mine == "a" else "a"
    assert f"`src/{mine}.py`" in own[0] and f"`src/{other}.py`" not in own[0]
    hand = json.loads((project / "memory" / "hot" / "context.json").read_text())
    assert hand["session_id"] == "hand"  # the person's session stays live
    assert f"src/{other}.py" in hand["files_modified"]
    assert f"src/{mine}.py" not in hand["files_modified"]


def test_a_prompt_answered_by_the_warm_process_reaches_the_model(tmp_path: Path) -> None:
    """Issue 24: once a session has started the tree's warm process, the next session's
    prompt is recalled by it, and what it recalls is what the model is sent."""
    from memsite.agents import warm as warm_process

    project = sample_project(tmp_path / "project")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    subprocess.run([sys.executable, "-m", "memsite", "index"], cwd=project, env=env, check=True)
    first = run_claude(project, QUESTION, ["We switched to argon2id."])
    assert first.returncode == 0, first.stderr
    tree = (project / "memory").resolve()
    path = warm_process.where(tree, tree.parent / ".memsite", lexical=False)
    assert path is not None
    deadline = time.monotonic() + 90
    while (count := warm_process.ask(path, {"count": True})) is None:
        assert time.monotonic() < deadline, "SessionStart started no warm process"
        time.sleep(0.2)
    before = count["answered"]
    second = run_claude(project, QUESTION, ["We switched to argon2id."])
    assert second.returncode == 0, second.stderr
    after = warm_process.ask(path, {"count": True})
    assert after is not None and after["answered"] == before + 1, (before, after)
    sent = second.all_texts(second.messages[0])
    assert "UserPromptSubmit hook additional context: ## Recalled memory" in sent
    assert "argon2id" in sent
    twin = tmp_path / "twin"
    shutil.copytree(project / "memory", twin / "memory")
    # what the hook would have recalled itself (memsite_context: in its own process)
    recalled = memsite_context(twin, "UserPromptSubmit", prompt=QUESTION)
    assert recalled.split("\n", 1)[1] in sent
