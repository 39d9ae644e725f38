"""The real Qwen Code binary (issue 37) against memsite's hooks, offline: one ``qwen -p`` run
(pinned, see tests/qwen_cli.py) in a project holding the sample memory, set up by ``memsite
init --qwen`` with no session started by hand, its "model" scripted to read the file a
current decision governs, run a command that exits 3 and edit the file; the tests assert on what the
Messages-API stand-in received, i.e. on what reached the model, and on what memory recorded.

One run takes a few seconds, so it is a module fixture shared by every test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.claude_code import Run, memsite_context, sample_project, tool_use, warm_log
from tests.qwen_cli import PIN, escaped, memsite_init_qwen, require_qwen, run_qwen

QWEN = require_qwen()  # skipped without the binary; fails instead in CI

QUESTION = "how should we hash passwords?"
PASSWORDS = "services/auth/passwords.py"
BEFORE = (
    "import hashlib\n\n\ndef hash_password(p):\n    # old\n"
    "    return hashlib.sha256(p).hexdigest()\n\n\nHASHER = 'bcrypt'\n"
)
OLD = "def hash_password(p):\n    # old\n    return hashlib.sha256(p).hexdigest()"
NEW = "def hash_password(p):\n    return argon2(p)"  # the strings say +2 -3; the file, +1 -2
FAILING = "echo 2 tests failed; exit 3"
# 0.24.4 wraps each hook's context in a tag of its event (the system prompt names the tags)
START = re.compile(
    r"<qwen:session-start-context[^>]*>\nSessionStart additional context:\n(.*?)"
    r"</qwen:session-start-context>",
    re.S,
)
PROMPT = "</qwen:user-prompt-submit-context>"
CURRENT = "Tune argon2id to m=19 MiB, t=2, p=1"  # the sample's current password decision


def test_the_binary_is_the_pinned_version(tmp_path: Path) -> None:
    # a home of its own: the CLI may write its settings folder there even for this
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    version = subprocess.run(
        [str(QWEN), "--version"], capture_output=True, text=True, check=True, timeout=60,
        env=env,
    )  # fmt: skip
    assert version.stdout.strip() == PIN


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One run; and what memsite's hook answers to its SessionStart, asked first on a twin
    project in the same state with the same session id."""
    work = tmp_path_factory.mktemp("qwen")
    sid = str(uuid.uuid4())
    twin = sample_project(work / "twin", settings=False, files={PASSWORDS: BEFORE}, live=False)
    prime = memsite_context(twin, "SessionStart", "--harness", "qwen", source="startup",
                            session_id=sid)  # fmt: skip
    project = sample_project(
        work / "project", settings=False, files={PASSWORDS: BEFORE}, live=False
    )
    init = memsite_init_qwen(project)
    assert init.returncode == 0, init.stderr
    path = str(project / PASSWORDS)
    replies = [
        tool_use("read_file", file_path=path),  # `edit` refuses a file not read first
        tool_use("run_shell_command", command=FAILING, description="run the tests",
                 is_background=False),
        # the last tool call: only Stop (the turn's end) writes its record, -p ends no session
        tool_use("edit", file_path=path, old_string=OLD, new_string=NEW),
        "Use argon2id; the tests fail.",
    ]  # fmt: skip
    run = run_qwen(project, QUESTION, replies, args=["--session-id", sid])
    check = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(project / "memory"), "check"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return {"run": run, "project": project, "prime": prime, "init": init, "check": check}


def _clockless(text: str) -> str:
    """``text`` without the clock's digits (a session id's stamp, a time of day): the twin's
    hook ran a few seconds before the run's."""
    return re.sub(r"\d{8}-\d{6}|\d\d:\d\d(:\d\d)?", "#", text)


def test_the_run_calls_the_model_once_per_step_of_the_script(ran) -> None:
    run: Run = ran["run"]
    assert run.returncode == 0, run.stderr
    assert run.session_id
    assert len(run.messages) == 4
    assert "memsite's Qwen Code hooks" in ran["init"].stdout


def test_the_session_start_memory_reaches_the_first_request_inline_and_whole(ran) -> None:
    run: Run = ran["run"]
    prime = ran["prime"]
    assert prime.startswith("# Persona") and "# Where were we?" in prime
    assert "Qwen Code session" in prime  # the live session the hook started
    [block] = [m.group(1) for t in run.texts(run.messages[0]) for m in START.finditer(t)]
    # Qwen Code escapes < > in hook context; nothing else differs, nothing is cut
    assert _clockless(block.strip()) == _clockless(escaped(prime).strip())


def test_the_question_brings_the_current_argon2id_decision_once(ran) -> None:
    run: Run = ran["run"]
    first = run.all_texts(run.messages[0])
    recalled = first[: first.index(PROMPT)].rsplit(QUESTION, 1)[-1]
    assert CURRENT in recalled and "argon2id" in recalled
    # the empty prompts before each follow-up request recall nothing more
    for request in run.messages:
        assert run.all_texts(request).count(PROMPT) == 1


def test_the_edit_brings_the_governing_decision_with_its_result(ran) -> None:
    run: Run = ran["run"]
    command = str(run.tool_results(run.messages[2])[-1]["content"])
    assert "Exit Code: 3" in command and "Memory about" not in command
    edit = str(run.tool_results(run.messages[3])[-1]["content"])
    assert "has been updated" in edit
    assert f"Memory about `{PASSWORDS}`" in edit and CURRENT in edit


def test_the_warm_log_records_the_edit_with_its_real_lines_and_the_exit_code(ran) -> None:
    project: Path = ran["project"]
    assert (project / PASSWORDS).read_text().count("argon2(p)") == 1
    log = warm_log(project / "memory")
    assert f"file: {PASSWORDS}\nlines: +1 -2\n" in log
    assert f"command: {FAILING}\nexit: 3\n" in log
    assert "Result: 2 tests failed" in log


def test_the_session_is_named_by_the_question_and_stays_live(ran) -> None:
    # `qwen -p` never fires SessionEnd: the session stays live until it goes stale
    project: Path = ran["project"]
    context = (project / "memory" / "hot" / "context.json").read_text("utf-8")
    assert f'"task": "{QUESTION}"' in context
    assert "services/auth/passwords.py" in context


def test_memsite_check_passes_after_the_run(ran) -> None:
    check = ran["check"]
    assert check.returncode == 0, check.stdout + check.stderr
