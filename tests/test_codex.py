"""The real Codex binary (issue 37) against memsite's hooks, offline: ``codex exec`` (pinned,
see tests/codex_cli.py) in a project holding the sample memory, set up by ``memsite init
--codex`` with no session started by hand, asserting on what the Responses-API stand-in
received (what reached the model) and on what memory recorded.

One run, shared by most tests: the "model" is asked how to hash passwords, edits
``services/auth/passwords.py`` (and adds a file beside it) with Codex's own ``apply_patch``,
runs a command that exits 3, and answers. A second run is compacted by Codex mid-turn."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from memsite import Memory
from memsite.agents.harnesses.codex import CAP
from tests.claude_code import memsite_context, memsite_in, sample_project
from tests.codex_cli import PIN, SPILLED, Run, command, patch, require_codex, run_codex
from tests.codex_cli import clean_env as codex_env

CODEX = require_codex()  # skipped without the binary; fails instead in CI

QUESTION = "how should we hash passwords?"
PASSWORDS = "services/auth/passwords.py"
BEFORE = 'HASHER = "bcrypt"  # cost 12\nROUNDS = 12\n'
PATCH = (
    "*** Begin Patch\n"
    f"*** Update File: {PASSWORDS}\n"
    "@@\n"
    '-HASHER = "bcrypt"  # cost 12\n'
    '+HASHER = "argon2id"\n'
    "+MEMORY_KIB = 19456\n"
    " ROUNDS = 12\n"
    "*** Add File: services/auth/HASHING.md\n"
    "+# Hashing\n"
    "+argon2id, m=19 MiB, t=2, p=1\n"
    "+(see the decision)\n"
    "*** End Patch\n"
)
FAILING = "echo 2 tests failed; exit 3"


def test_the_binary_is_the_pinned_version(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()  # a home of its own: the CLI writes there even for this
    version = subprocess.run(
        [str(CODEX), "--version"], capture_output=True, text=True, check=True, timeout=60,
        env=codex_env(tmp_path),
    )  # fmt: skip
    assert version.stdout.split()[-1] == PIN


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The run, its project, and the session start memsite answers for the run's session
    on a twin of the project taken before it (the run's own SessionEnd ends the session)."""
    work = tmp_path_factory.mktemp("codex")
    project = sample_project(
        work / "project", settings=False, files={PASSWORDS: BEFORE}, live=False
    )
    init = memsite_in(project, "init", "--codex")
    assert init.returncode == 0, init.stderr
    twin = work / "twin"
    shutil.copytree(project, twin)
    run = run_codex(project, QUESTION, [patch(PATCH), command(FAILING), "Switched."])
    found = re.search(r"^session id: (\S+)$", run.stderr, re.M)
    sid = found.group(1) if found else ""
    prime = memsite_context(
        twin, "SessionStart", "--harness", "codex", session_id=sid, source="startup"
    )
    return {"run": run, "project": project, "init": init, "prime": prime, "sid": sid}


def _minutes(text: str) -> str:
    """``text`` without its times of day (in a session's id too): the twin answers seconds
    after the run."""
    text = re.sub(r"\b(\d{8})-\d{6}\b", r"\1-HHMMSS", text)
    return re.sub(r"\b\d\d:\d\d(:\d\d)?\b", "HH:MM", text)


def _developer(run: Run, request: dict) -> list[str]:
    """The developer messages of one model call (where Codex puts hook context)."""
    return [
        part["text"]
        for item in run.items(request)
        if item.get("type") == "message" and item.get("role") == "developer"
        for part in item.get("content") or []
        if isinstance(part.get("text"), str)
    ]


def test_the_run_calls_the_model_three_times(ran) -> None:
    run: Run = ran["run"]
    assert run.returncode == 0, run.stderr[-2000:]
    assert ran["sid"], run.stderr[-2000:]
    assert len(run.messages) == 3
    assert "memsite hook:" not in run.stderr  # no hook said anything went wrong


def test_the_session_start_memory_reaches_the_model_inline_and_whole(ran) -> None:
    run: Run = ran["run"]
    prime: str = ran["prime"]
    assert prime.startswith("# Persona") and "Codex session" in prime
    assert len(prime.encode("utf-8")) <= CAP
    (sent,) = [text for text in _developer(run, run.messages[0]) if text.startswith("# Persona")]
    assert _minutes(sent) == _minutes(prime)
    assert not any(SPILLED in text for r in run.messages for text in run.texts(r))


def test_the_question_brings_the_current_argon2id_decision(ran) -> None:
    run: Run = ran["run"]
    items = run.items(run.messages[0])
    asked = next(
        i for i, item in enumerate(items)
        if item.get("role") == "user" and QUESTION in json.dumps(item)
    )  # fmt: skip
    recall = items[asked + 1]["content"][0]["text"]
    assert recall.startswith("## Recalled memory")
    assert "Tune argon2id to m=19 MiB, t=2, p=1" in recall


def test_the_edit_brings_the_governing_decision_with_its_result(ran) -> None:
    run: Run = ran["run"]
    items = run.items(run.messages[1])
    kinds = [item.get("type") for item in items]
    call = kinds.index("custom_tool_call")
    assert items[call]["input"] == PATCH
    result = kinds.index("custom_tool_call_output")
    between = [
        part["text"] for item in items[call + 1 : result] for part in item.get("content") or []
    ]
    (why,) = between  # PreToolUse's context: after the call, just before its result
    assert why.startswith(f"## Memory about `{PASSWORDS}`")  # the patch's first file first
    assert "Governs this file." in why and "argon2id" in why
    assert items[result]["output"].startswith("Exit code: 0")
    assert (ran["project"] / PASSWORDS).read_text() == BEFORE.replace(
        'HASHER = "bcrypt"  # cost 12\n', 'HASHER = "argon2id"\nMEMORY_KIB = 19456\n'
    )


def _activities(project: Path, title: str) -> list:
    entries = Memory(project / "memory").entries("activity")
    return [e for e in entries if e.title == title and e.date == max(x.date for x in entries)]


def test_the_warm_log_records_the_edit_with_its_real_lines(ran) -> None:
    edits = [dict(e.details) for e in _activities(ran["project"], "edited file")]
    assert {"file": PASSWORDS, "lines": "+2 -1"} in edits  # one entry per file of the patch
    assert {"file": "services/auth/HASHING.md", "lines": "+3 -0"} in edits


def test_the_command_that_exits_3_is_recorded_with_3(ran) -> None:
    ran_ = [dict(e.details) for e in _activities(ran["project"], "ran command")]
    assert {"command": FAILING, "exit": "3"} in ran_


def test_the_session_is_codexs_and_its_end_ends_it(ran) -> None:
    project: Path = ran["project"]
    ends = [e for e in _activities(project, "session end") if e.details]
    (end,) = ends
    assert dict(end.details)["task"] == QUESTION  # named by its first prompt
    assert end.result == "Session ended by the harness (Codex, reason: other)."
    assert not (project / "memory" / "hot" / "context.json").exists()


def test_memsite_check_passes_after_the_run(ran) -> None:
    done = memsite_in(ran["project"], "check")
    assert done.returncode == 0, done.stdout + done.stderr


SUMMARY = "We ran the auth tests: 5 passed. Next: switch the hasher to argon2id."


@pytest.fixture(scope="module")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A run that Codex compacts after its first tool call (the stand-in says each call
    used 150,000 tokens, over a limit of 2,000): the compaction's model call answers
    ``SUMMARY``."""
    project = sample_project(
        tmp_path_factory.mktemp("codex-compact") / "project", settings=False, live=False
    )
    assert memsite_in(project, "init", "--codex").returncode == 0
    run = run_codex(
        project,
        "Run the auth tests",
        [command("echo 5 passed"), SUMMARY, "Done."],
        settings="model_auto_compact_token_limit = 2000\n",
        tokens=150_000,
    )
    return {"run": run, "project": project}


def test_a_compaction_is_a_checkpoint_holding_codexs_summary(compacted) -> None:
    run: Run = compacted["run"]
    assert run.returncode == 0, run.stderr[-2000:]
    assert "memsite hook:" not in run.stderr
    first, second = _activities(compacted["project"], "checkpoint")
    assert dict(first.details)["trigger"] == "auto"
    assert dict(second.details)["completes"] == first.id
    assert second.result == SUMMARY


def test_the_model_resumes_from_the_checkpoint_after_the_compaction(compacted) -> None:
    run: Run = compacted["run"]
    assert len(run.messages) == 3  # the command, the compaction, the answer
    (since,) = [t for t in _developer(run, run.messages[2]) if "Since the last checkpoint" in t]
    assert since.startswith("## Since the last checkpoint") and SUMMARY in since
