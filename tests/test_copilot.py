"""The real GitHub Copilot CLI (issue 37) against memsite's hooks, offline: ``copilot -p``
(pinned, see tests/copilot_cli.py) in a project holding the sample memory, set up by
``memsite init --copilot`` with no session started by hand, asserting on what the
Messages-API stand-in received (what reached the model) and on what memory recorded.

One run (a few seconds, more while its hooks build the index) is a module fixture shared by
the tests that look at it. Before the Copilot table every one of these failed: Copilot ignored
the nested output, so nothing reached the model; the edit was not recorded (no
``file_path``); the command exiting 3 was recorded as 0."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.claude_code import Run, memsite_command, memsite_in, sample_project, tool_use
from tests.copilot_cli import PIN, copilot_env, hook_outputs, require_copilot, run_copilot

COPILOT = require_copilot()  # skipped without the binary; fails instead in CI

QUESTION = "how should we hash passwords?"
CURRENT = "Tune argon2id to m=19 MiB, t=2, p=1"  # the sample's current hashing decision
PASSWORDS = "services/auth/passwords.py"
# the edit's strings share their first and last lines: Copilot's edit changes one line
BEFORE = '# hashing\nHASHER = "bcrypt"  # cost 12\nROUNDS = 12\n'
AFTER = '# hashing\nHASHER = "argon2id"\nROUNDS = 12\n'
FAILING = "echo 2 tests failed; exit 3"


def _memsite(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    return memsite_in(project, *args, env=env)


def test_the_binary_is_the_pinned_version(tmp_path: Path) -> None:
    version = subprocess.run(
        [str(COPILOT), "--version"],
        env=copilot_env(tmp_path, "http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert f"GitHub Copilot CLI {PIN}." in version.stdout


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """One run: the question, then the "model" edits the file a current decision governs with
    Copilot's own ``edit`` tool and runs a command that exits 3."""
    project = sample_project(
        tmp_path_factory.mktemp("copilot") / "project",
        settings=False,
        files={PASSWORDS: BEFORE},
        live=False,
    )
    init = _memsite(project, "init", "--copilot")
    assert init.returncode == 0, init.stderr
    assert "memsite's Copilot CLI hooks" in init.stdout
    # built beforehand, as a tree in use has it: Copilot runs the prompt's hook beside
    # SessionStart's, and on a loaded machine a first recall that waits for the build the
    # SessionStart started in the background can outlive the hook's 5 s
    assert _memsite(project, "index").returncode == 0
    replies = [
        tool_use("edit", path=str(project / PASSWORDS), old_str=BEFORE, new_str=AFTER),
        tool_use("bash", command=FAILING, description="run the tests"),
        "Switched; two tests fail.",
    ]
    return run_copilot(project, QUESTION, replies), project


def test_the_run_edits_the_file_and_ends(ran) -> None:
    run, project = ran
    assert run.returncode == 0, run.stderr
    assert (project / PASSWORDS).read_text() == AFTER
    assert len(run.messages) == 3


def test_the_session_start_memory_reaches_the_first_request_inline_and_whole(ran) -> None:
    run, _ = ran
    (started,) = hook_outputs(run, "sessionStart")
    prime = started["additionalContext"]  # what memsite's hook printed, as Copilot read it
    assert prime.startswith("# Persona") and "# Where were we?" in prime
    assert "## Relevant decisions" in prime and "Cut to fit the harness" not in prime
    assert prime in run.all_texts(run.messages[0])


def test_the_question_brings_the_current_argon2id_decision(ran) -> None:
    run, _ = ran
    first = run.all_texts(run.messages[0])
    recall = first.split(QUESTION, 1)[1]
    assert "## Recalled memory" in recall, hook_outputs(run, "userPromptSubmitted")
    assert CURRENT in recall


def test_the_edit_brings_its_governing_decision_right_after_the_tool_result(ran) -> None:
    run, project = ran
    after_edit = run.messages[1]
    (result,) = run.tool_results(after_edit)
    assert "updated with changes" in str(result["content"])
    texts = run.texts(after_edit)
    at = next(i for i, text in enumerate(texts) if "updated with changes" in text)
    why = texts[at + 1]  # the very next text the model reads
    assert f"## Memory about `{PASSWORDS}`" in why
    assert CURRENT in why


def _today(project: Path) -> str:
    return (project / "memory" / "warm" / f"{dt.date.today().isoformat()}.md").read_text()


def test_the_warm_log_records_the_edit_with_its_real_line_counts(ran) -> None:
    _, project = ran
    numstat = subprocess.run(
        ["git", "diff", "--numstat", "--", PASSWORDS],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert numstat[:2] == ["1", "1"]  # what git counts; the strings hold 3 lines each
    assert f"file: {PASSWORDS}\nlines: +1 -1\n" in _today(project)


def test_the_command_is_recorded_with_its_exit_status(ran) -> None:
    _, project = ran
    log = _today(project)
    assert f"command: {FAILING}\nexit: 3\n" in log
    assert "Result: 2 tests failed\n" in log


def test_the_session_is_copilot_s_own_named_by_its_prompt_and_memory_checks(ran) -> None:
    _, project = ran
    log = _today(project)
    assert f"task: {QUESTION}\n" in log
    assert "Session ended by the harness (Copilot CLI, reason: complete)." in log
    assert "Claude Code" not in log
    assert f"**Files modified:**\n- `{PASSWORDS}`" in log
    checked = _memsite(project, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 warning(s)" in checked.stderr, checked.stdout + checked.stderr


def test_camel_case_hooks_are_reported_by_check_until_init_rewrites_them(tmp_path: Path) -> None:
    """Silence is not success: hooks named in camelCase, as a translation of Claude Code's
    settings may name them, run `memsite hook` in the real CLI and reach nothing; `memsite
    check` says so, and `memsite init --copilot` puts it right."""
    project = sample_project(tmp_path / "project", settings=False, live=False)
    hook = memsite_command("hook")
    camel = ("sessionStart", "userPromptSubmitted", "sessionEnd")
    config = {"version": 1, "hooks": {name: [{"type": "command", "bash": hook}] for name in camel}}
    path = project / ".github" / "hooks" / "memsite.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(config))
    silent = run_copilot(project, QUESTION, ["We use argon2id."])
    assert silent.returncode == 0, silent.stderr
    assert "# Persona" not in silent.all_texts(silent.messages[0])  # nothing reached it
    checked = _memsite(project, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr  # a warning, not an error
    (line,) = [line for line in checked.stdout.splitlines() if "hooks.json" in line]
    assert "Copilot CLI's hooks sent memsite 3 event(s) in a row it could not map" in line
    assert "`memsite init --copilot`" in line
    assert _memsite(project, "init", "--copilot").returncode == 0
    assert not set(camel) & set(json.loads(path.read_text())["hooks"])  # memsite's went
    heard = run_copilot(project, QUESTION, ["We use argon2id."])
    assert "# Persona" in heard.all_texts(heard.messages[0])
    assert "hooks.json" not in _memsite(project, "check").stdout
