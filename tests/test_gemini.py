"""The real Gemini CLI binary (issue 37) against memsite's hooks, offline: ``gemini -p`` runs
(pinned, see tests/gemini_cli.py) in a project holding the sample memory, set up by ``memsite
init --gemini`` with no session started by hand, against a stand-in for the Gemini API. One
run asks for an edit of a governed file, a command that exits 3, one that exits 0, then
answers; two more (a session and its resume) make the CLI compress its history once. The
tests assert on what the stand-in received (what reached the model) and on what memory
recorded. Each run is shared by the tests that look at it: each costs seconds."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.claude_code import memsite_context, memsite_in, sample_project, tool_use, warm_log
from tests.gemini_cli import (
    PIN,
    SNAPSHOT,
    Run,
    clean_env,
    output_of,
    require_gemini,
    run_gemini,
    unescaped,
)

GEMINI = require_gemini()  # skipped without the binary; fails instead in CI

QUESTION = "how should we hash passwords?"
PASSWORDS = "services/auth/passwords.py"
BEFORE = 'import hashlib\nHASHER = "bcrypt"  # cost 12\nROUNDS = 12\n'
# two lines for two as strings, one changed line in the file's real diff
OLD = 'import hashlib\nHASHER = "bcrypt"  # cost 12\n'
NEW = 'import hashlib\nHASHER = "argon2id"\n'
BLOCK = re.compile(r"<hook_context>(.*?)</hook_context>", re.S)


def test_the_binary_is_the_pinned_version(tmp_path: Path) -> None:
    # in a home of its own: even --version writes the CLI's project registry there
    env = clean_env(tmp_path, "http://127.0.0.1:9")
    version = subprocess.run(
        [str(GEMINI), "--version"], capture_output=True, text=True, check=True, timeout=60,
        env=env,
    )  # fmt: skip
    assert version.stdout.strip() == PIN


def _minutes(text: str) -> str:
    """``text`` with its times of day (and the session ids made of them) made alike: the
    twin answers a little later."""
    return re.sub(r"\b\d\d:\d\d\b|\b\d{6,8}-\d{6}\b", "T", text)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The run, the project, its twin (a copy taken before the run) and the warm log as the
    run left it, read before the twin is asked anything."""
    work = tmp_path_factory.mktemp("gemini")
    project = sample_project(
        work / "project", settings=False, files={PASSWORDS: BEFORE}, live=False
    )
    init = memsite_in(project, "init", "--gemini")
    assert init.returncode == 0, init.stderr
    twin = work / "twin"
    shutil.copytree(project, twin)
    replies = [
        tool_use(
            "replace", file_path=str(project / PASSWORDS), old_string=OLD, new_string=NEW,
            instruction="Switch the hasher to argon2id",
        ),
        tool_use("run_shell_command", command="echo 2 tests failed; exit 3", description="t"),
        tool_use("run_shell_command", command="echo all good", description="again"),
        "We hash with argon2id now.",
    ]  # fmt: skip
    run = run_gemini(project, QUESTION, replies)
    checkpoints_while_running = [
        line for line in warm_log(project / "memory").splitlines() if "checkpoint" in line.lower()
    ]
    deadline = time.monotonic() + 30  # SessionEnd is not waited for by the CLI
    while (project / "memory" / "hot" / "context.json").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return {
        "run": run, "project": project, "twin": twin, "init": init,
        "checkpoints": checkpoints_while_running,
    }  # fmt: skip


def _blocks(run: Run, call: int) -> list[str]:
    """The hook context blocks of model call ``call`` (not the system instruction's words
    about them), as memsite wrote them."""
    sent = run.all_texts(run.calls[call], system=False)
    return [unescaped(found) for found in BLOCK.findall(sent)]


def test_init_writes_the_hooks_and_says_what_is_left_to_do(ran) -> None:
    assert "memsite's Gemini CLI hooks" in ran["init"].stdout
    assert "trusted folder" in ran["init"].stdout
    settings = json.loads((ran["project"] / ".gemini" / "settings.json").read_text())
    command = settings["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
    assert command.endswith(" hook --harness gemini") and Path(command.split()[0]).is_absolute()


def test_the_run_calls_the_model_once_per_step(ran) -> None:
    run = ran["run"]
    assert run.returncode == 0, run.stderr
    assert run.output["response"] == "We hash with argon2id now."
    assert len(run.calls) == 4
    assert (ran["project"] / PASSWORDS).read_text() == BEFORE.replace(OLD, NEW)


def test_the_session_start_memory_reaches_the_first_call_inline_and_whole(ran) -> None:
    run = ran["run"]
    sid = run.output["session_id"]
    prime = memsite_context(ran["twin"], "SessionStart", "--harness", "gemini",
                            session_id=sid, source="startup")  # fmt: skip
    first = _blocks(run, 0)
    assert prime.startswith("# Persona") and "# Where were we?" in prime
    assert f"Gemini CLI session {sid[:8]}" in prime  # the live session its hook started
    assert "_Cut to fit the harness" not in first[0]
    assert _minutes(first[0]) == _minutes(prime)


def test_the_question_brings_the_current_argon2id_decision(ran) -> None:
    run = ran["run"]
    sid = run.output["session_id"]
    # the twin asked the user's words alone: the run's prompt began with the session-start
    # block, which recall must not search with
    recall = memsite_context(ran["twin"], "BeforeAgent", "--harness", "gemini",
                             session_id=sid, prompt=QUESTION)  # fmt: skip
    first = _blocks(run, 0)
    assert len(first) == 2
    assert first[1].startswith("## Recalled memory")
    assert "argon2id" in first[1]
    assert first[1] == recall


def test_the_edit_brings_the_governing_decision_with_its_result(ran) -> None:
    run = ran["run"]
    heading = f"## Memory about `{PASSWORDS}`"
    assert not any(heading in block for block in _blocks(run, 0))
    (result,) = run.function_responses(run.calls[1])
    assert result["name"] == "replace"
    output = output_of(result)
    assert output.startswith("Successfully modified file")
    (why,) = [unescaped(block) for block in BLOCK.findall(output)]
    assert why.startswith(heading)
    assert "Tune argon2id to m=19 MiB, t=2, p=1\nGoverns this file." in why
    # once per session and file: the calls after it carry it in that result only
    assert all(
        heading not in unescaped(output_of(r)) for r in run.function_responses(run.calls[2])[1:]
    )


def test_the_warm_log_records_the_edit_with_its_real_line_counts(ran) -> None:
    warm = warm_log(ran["project"] / "memory")
    assert f"file: {PASSWORDS}" in warm
    assert "lines: +1 -1" in warm  # the real diff, not the strings' +2 -2


def test_commands_are_recorded_with_their_exit_status(ran) -> None:
    warm = warm_log(ran["project"] / "memory")
    assert "command: echo 2 tests failed; exit 3" in warm
    failed = warm.split("command: echo 2 tests failed; exit 3", 1)[1].split("command:", 1)[0]
    assert "exit: 3" in failed
    good = warm.split("command: echo all good", 1)[1]
    assert "exit: 0" in good.split("\n## ", 1)[0]


def test_several_model_calls_without_compression_write_no_checkpoint(ran) -> None:
    assert len(ran["run"].calls) >= 4  # PreCompress fired before each of them
    assert ran["checkpoints"] == []


def test_the_session_ends_and_memory_checks_clean(ran) -> None:
    project = ran["project"]
    assert not (project / "memory" / "hot" / "context.json").exists()
    assert "Session ended by the harness (Gemini CLI, reason: exit)" in warm_log(project / "memory")
    check = memsite_in(project, "check")
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.fixture(scope="module")
def compressed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A session of two model calls, then its resume, whose first reply says the prompt took
    600,000 tokens (past half the window): Gemini CLI compresses before the next call, and
    only then. ``PreCompress`` fires before each of the five calls."""
    project = sample_project(
        tmp_path_factory.mktemp("gemini-compress") / "project", settings=False, live=False
    )
    assert memsite_in(project, "init", "--gemini").returncode == 0
    shell = tool_use("run_shell_command", command="echo one", description="one")
    first = run_gemini(project, "First task", [shell, "Done."])
    after_first = warm_log(project / "memory").count("— checkpoint")
    replies = [tool_use("run_shell_command", command=f"echo {n}", description=n) for n in "23"]
    resumed = run_gemini(
        project, "Go on", [*replies, "Done."], args=["--resume", "latest"], tokens=[600_000]
    )
    return {"project": project, "first": first, "resumed": resumed, "after_first": after_first}


def test_a_real_compression_has_one_checkpoint_and_the_other_calls_none(compressed) -> None:
    first, resumed = compressed["first"], compressed["resumed"]
    assert first.returncode == 0 and resumed.returncode == 0, resumed.stderr
    assert len(first.calls) + len(resumed.calls) == 5
    assert compressed["after_first"] == 0
    # the compression: the CLI asked for a summary, and sent it instead of the history
    utility = [r for r in resumed.requests if r.path.endswith(":generateContent")]
    assert utility, "Gemini CLI did not compress"
    summary = SNAPSHOT.split(">", 1)[1].split("<", 1)[0]
    assert summary in resumed.all_texts(resumed.calls[-1], system=False)
    warm = warm_log(compressed["project"] / "memory")
    assert warm.count("— checkpoint") == 1
    checkpoint = warm.split("— checkpoint", 1)[1].split("<!-- id:", 1)[0]
    assert "trigger: auto" in checkpoint and "tokens_before: 600000" in checkpoint
