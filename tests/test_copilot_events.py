"""GitHub Copilot CLI's hook events through ``memsite hook --harness copilot`` (issue 37),
without the binary: each fixture in ``tests/fixtures/harnesses/copilot/`` is an event the real
CLI (``tests/copilot_cli.py``'s PIN) sent to a capture hook, its project's path made
``$PROJECT``. Before the table, ``--harness copilot`` did not exist and every one of them was
read as Claude Code's: nested output (which Copilot ignores), an edit without ``file_path``
(not recorded), a command exiting 3 recorded as 0, sessions named "Claude Code session".
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.agents import harnesses
from memsite.cli import cli

FIXTURES = Path(__file__).parent / "fixtures" / "harnesses" / "copilot"
PASSWORDS = "services/auth/passwords.py"
BEFORE = 'HASHER = "bcrypt"  # cost 12\nROUNDS = 12\n'


@pytest.fixture
def project(sample: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sample memory in a git repository holding the file the recorded edit changed."""
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.setenv("MEMSITE_WARM", "off")
    path = sample.parent
    (path / PASSWORDS).parent.mkdir(parents=True)
    (path / PASSWORDS).write_text(BEFORE)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def recorded(name: str, project: Path) -> dict[str, Any]:
    """The recorded event ``name``, in ``project``."""
    text = (FIXTURES / f"{name}.json").read_text("utf-8")
    return json.loads(text.replace("$PROJECT", str(project)))


def feed(project: Path, event: dict[str, Any], *args: str):
    return CliRunner().invoke(
        cli,
        ["--root", str(project / "memory"), "hook", "--lexical", *args],
        input=json.dumps(event),
    )


def context(done) -> str:
    """The top-level ``additionalContext`` Copilot reads (it ignores ``hookSpecificOutput``)."""
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert "hookSpecificOutput" not in answer
    return answer["additionalContext"]


def warm(project: Path) -> str:
    """Today's day log (the sample's own are older)."""
    today = project / "memory" / "warm" / f"{dt.date.today().isoformat()}.md"
    return today.read_text() if today.exists() else ""


def test_a_session_is_primed_recalled_and_named_at_the_top_level(project: Path) -> None:
    start = context(feed(project, recorded("session-start", project), "--harness", "copilot"))
    assert start.startswith("# Persona")
    assert (
        "Where were we" in start and "how should we hash passwords?" in start
    )  # "new" started one
    recall = context(feed(project, recorded("user-prompt-submit", project), "--harness", "copilot"))
    assert recall.startswith("## Recalled memory")
    live = Memory(project / "memory").session()
    assert live is not None and live.task == "how should we hash passwords?"


def test_the_first_prompt_names_the_session_though_its_hook_ran_first(project: Path) -> None:
    """Copilot starts UserPromptSubmit's hook a few hundred ms after SessionStart's, without
    waiting for it: the prompt came before the session it should name. SessionStart's own
    ``initial_prompt`` names it."""
    feed(project, recorded("user-prompt-submit", project), "--harness", "copilot")
    feed(project, recorded("session-start", project), "--harness", "copilot")
    live = Memory(project / "memory").session()
    assert live is not None and live.task == "how should we hash passwords?"


def test_an_edit_brings_its_decision_and_is_recorded_with_its_real_lines(project: Path) -> None:
    feed(project, recorded("session-start", project), "--harness", "copilot")
    why = context(feed(project, recorded("pre-tool-use-edit", project), "--harness", "copilot"))
    assert why.startswith(f"## Memory about `{PASSWORDS}`") and "argon2id" in why
    after = feed(project, recorded("post-tool-use-edit", project), "--harness", "copilot")
    assert after.exit_code == 0 and after.stdout == ""
    # a second edit whose strings share their first and last lines: only the middle changed
    edit = recorded("post-tool-use-edit", project)
    edit["tool_input"] = {**edit["tool_input"], "old_str": "A\nB\nC\n", "new_str": "A\nb\nC\n"}
    edit["tool_input"]["path"] = str(project / "services/auth/other.py")
    feed(project, edit, "--harness", "copilot")
    feed(project, recorded("session-end", project), "--harness", "copilot")
    log = warm(project)
    assert f"file: {PASSWORDS}\nlines: +1 -2\n" in log
    assert "file: services/auth/other.py\nlines: +1 -1\n" in log  # not +3 -3
    assert "Session ended by the harness (Copilot CLI, reason: complete)." in log
    assert "Claude Code" not in log


def test_a_created_file_is_recorded_with_its_lines(project: Path) -> None:
    feed(project, recorded("session-start", project), "--harness", "copilot")
    feed(project, recorded("post-tool-use-write", project), "--harness", "copilot")
    feed(project, recorded("session-end", project), "--harness", "copilot")
    assert "file: notes.txt\nlines: +3 -0\n" in warm(project)


def test_a_failed_edit_is_not_recorded(project: Path) -> None:
    feed(project, recorded("session-start", project), "--harness", "copilot")
    done = feed(project, recorded("post-tool-use-failure-edit", project), "--harness", "copilot")
    assert done.exit_code == 0 and done.stdout == "" and done.stderr == ""
    feed(project, recorded("session-end", project), "--harness", "copilot")
    assert "— edited file" not in warm(project)


def test_a_compaction_is_a_checkpoint(project: Path) -> None:
    """Copilot has PreCompact (``/compact``, or its own compaction) and no PostCompact."""
    feed(project, recorded("session-start", project), "--harness", "copilot")
    done = feed(project, recorded("pre-compact", project), "--harness", "copilot")
    assert done.exit_code == 0 and done.stdout == "" and done.stderr == ""
    log = warm(project)
    assert "— checkpoint" in log and "trigger: manual" in log


def test_a_command_s_exit_status_is_read_from_its_result(project: Path) -> None:
    feed(project, recorded("session-start", project), "--harness", "copilot")
    feed(project, recorded("post-tool-use-bash-exit3", project), "--harness", "copilot")
    feed(project, recorded("post-tool-use-bash-exit0", project), "--harness", "copilot")
    # a command Copilot left running in the background has no status line
    feed(project, recorded("post-tool-use-bash-async", project), "--harness", "copilot")
    log = warm(project)
    assert "command: echo 2 tests failed; exit 3\nexit: 3\n" in log
    assert "Result: 2 tests failed\n" in log  # the output, not Copilot's status line
    assert "command: echo ok\nexit: 0\n" in log
    assert "command: echo started; sleep 20\nexit: ?\n" in log  # unknown, never 0


@pytest.mark.parametrize(
    "name",
    [
        "camel-sessionStart",
        "camel-userPromptSubmitted",
        "camel-postToolUse-edit",
        "camel-sessionEnd",
    ],
)
def test_a_camel_case_event_is_one_line_on_stderr(project: Path, name: str) -> None:
    """Copilot's camelCase event names send no event name: nothing to map, said, exit 0."""
    done = feed(project, recorded(name, project), "--harness", "copilot")
    assert done.exit_code == 0 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert "Copilot CLI event" in done.stderr and "not one memsite maps" in done.stderr


def test_copilot_s_events_are_told_from_their_shape() -> None:
    for name in sorted(FIXTURES.glob("*.json")):
        event = json.loads(name.read_text("utf-8"))
        assert harnesses.detect(event).name == "copilot", name.name
    claude = {"session_id": "s", "transcript_path": "/t.jsonl", "hook_event_name": "Stop"}
    assert harnesses.detect(claude).name == "claude"


def test_without_the_flag_a_copilot_event_is_answered_as_copilot_reads_it(project: Path) -> None:
    start = context(feed(project, recorded("session-start", project)))
    assert start.startswith("# Persona")


def check(project: Path):
    return CliRunner().invoke(cli, ["--root", str(project / "memory"), "check"])


def test_hooks_that_send_only_camel_case_events_are_reported_by_check(project: Path) -> None:
    """Silence is not success: hooks named in camelCase reach memsite on every turn and get
    nothing; `memsite check` says so in one line naming the CLI and the fix, until the hooks
    send events memsite maps."""
    assert "warning" not in check(project).stdout
    for name in ("camel-sessionStart", "camel-userPromptSubmitted", "camel-sessionEnd"):
        feed(project, recorded(name, project))  # told from their shape, no --harness
    feed(project, recorded("camel-postToolUse-edit", project), "--harness", "copilot")
    done = check(project)
    assert done.exit_code == 0  # a warning, not an error
    (line,) = [line for line in done.stdout.splitlines() if "hooks" in line]
    assert line.startswith("hot/hooks.json:1: warning")
    assert "Copilot CLI's hooks sent memsite 4 event(s) in a row it could not map" in line
    assert "an event without a name" in line and "memsite init --copilot" in line
    assert check(project).stdout == done.stdout  # check itself changes nothing
    # once the hooks send PascalCase events, the warning goes
    feed(project, recorded("session-start", project), "--harness", "copilot")
    assert "hooks" not in check(project).stdout


def test_a_sound_setup_never_writes_the_record(project: Path) -> None:
    for name in ("session-start", "user-prompt-submit", "post-tool-use-edit", "session-end"):
        feed(project, recorded(name, project), "--harness", "copilot")
    assert not (project / "memory" / "hot" / "hooks.json").exists()
