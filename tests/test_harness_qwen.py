"""Qwen Code's hooks through ``memsite hook --harness qwen`` (issue 37), without the binary:
the events in ``tests/fixtures/harnesses/qwen/`` were recorded from the real ``qwen -p``
(0.24.4, tests/qwen_cli.py) against the Messages stand-in, their paths made generic
(``/home/you/project``); here the project is the sample memory's folder. And ``memsite init
--qwen``, which writes the hooks that send them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.agents import settings
from memsite.agents.harnesses import detect
from memsite.agents.harnesses.setup import qwen as qwen_setup
from memsite.agents.hooks import answer
from memsite.cli import cli
from tests.claude_code import warm_log
from tests.conftest import Clock

FIXTURES = Path(__file__).parent / "fixtures" / "harnesses" / "qwen"
RECORDED = "/home/you/project"
PASSWORDS = "services/auth/passwords.py"


def recorded(name: str, project: Path) -> dict[str, Any]:
    """A recorded event, its project paths made ``project``'s."""
    text = (FIXTURES / f"{name}.json").read_text("utf-8")
    return json.loads(text.replace(RECORDED, str(project)))


@pytest.fixture
def feed(sample: Path, monkeypatch: pytest.MonkeyPatch):
    """Feed one recorded event to ``memsite hook`` (``--harness qwen`` unless told
    otherwise), in the sample memory's project folder."""
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    runner = CliRunner()

    def run(name: str, *args: str, **changes: Any):
        event = {**recorded(name, sample.parent), **changes}
        options = args or ("--harness", "qwen")
        return runner.invoke(
            cli, ["--root", str(sample), "hook", *options], input=json.dumps(event)
        )

    return run


def started(feed) -> None:
    done = feed("session_start")
    assert done.exit_code == 0 and not done.stderr, done.output


def context(done, event: str) -> str:
    said = json.loads(done.stdout)["hookSpecificOutput"]
    assert said["hookEventName"] == event
    return said["additionalContext"]


def test_the_recorded_events_are_told_from_their_shape(sample: Path) -> None:
    for name in ("session_start", "user_prompt_submit", "post_tool_use_edit"):
        assert detect(recorded(name, sample.parent)).name == "qwen", name


def test_a_qwen_session_is_named_for_it_and_its_first_prompt_names_the_task(
    feed, sample: Path
) -> None:
    done = feed("session_start", "--lexical")  # no --harness: told from its shape
    assert done.exit_code == 0 and not done.stderr
    assert context(done, "SessionStart").startswith("# Persona")
    task = Memory(sample, author="").session().task
    assert task.startswith("Qwen Code session be127bc9")
    asked = feed("user_prompt_submit")
    assert "argon2id" in context(asked, "UserPromptSubmit")
    assert Memory(sample, author="").session().task == "how should we hash passwords?"


def test_the_empty_follow_up_prompt_recalls_nothing_and_renames_nothing(feed, sample: Path) -> None:
    # Qwen Code fires UserPromptSubmit with prompt "" before each follow-up model request
    started(feed)
    before = Memory(sample, author="").session()
    done = feed("follow_up_prompt")
    assert (done.exit_code, done.stdout, done.stderr) == (0, "", "")
    after = Memory(sample, author="").session()
    assert after.task == before.task and after.task.startswith("Qwen Code session")
    assert feed("follow_up_prompt", prompt="   \n").stdout == ""


def test_an_edit_is_logged_with_the_lines_of_its_real_diff(feed, sample: Path) -> None:
    # the edit's strings are +2 -3 lines; the file changed by +1 -2 (returnDisplay.fileDiff)
    started(feed)
    assert feed("post_tool_use_edit").exit_code == 0
    assert feed("post_tool_use_write_file").exit_code == 0  # ends the edit's burst
    assert feed("user_prompt_submit").exit_code == 0  # writes the open burst
    log = warm_log(sample)
    assert f"file: {PASSWORDS}\nlines: +1 -2\n" in log
    assert "file: notes.txt\nlines: +3 -0\n" in log


def test_a_write_that_changes_nothing_is_logged_as_no_lines(feed, sample: Path) -> None:
    # the same content written again: a diff without hunks, not the content's 3 lines
    started(feed)
    write = recorded("post_tool_use_write_file", sample.parent)
    response = write["tool_response"]
    display = {**response["returnDisplay"], "fileDiff": "Index: notes.txt\n"}
    assert feed("post_tool_use_write_file", tool_response={**response, "returnDisplay": display})
    assert feed("stop").exit_code == 0
    assert "file: notes.txt\nlines: +0 -0\n" in warm_log(sample)


def test_a_runs_last_edit_is_written_at_the_end_of_its_turn(feed, sample: Path) -> None:
    # `qwen -p` never fires SessionEnd; Stop (each turn's end) writes the open burst
    started(feed)
    assert feed("post_tool_use_edit").exit_code == 0
    assert f"file: {PASSWORDS}\nlines: +1 -2\n" not in warm_log(sample)  # more may follow
    done = feed("stop")
    assert (done.exit_code, done.stdout, done.stderr) == (0, "", "")
    assert f"file: {PASSWORDS}\nlines: +1 -2\n" in warm_log(sample)


def test_the_governing_decision_comes_with_the_edits_result_once(feed, sample: Path) -> None:
    # PreToolUse context never reaches the model outside ACP: it must not spend the why
    started(feed)
    before = feed("pre_tool_use_edit")
    assert (before.exit_code, before.stdout, before.stderr) == (0, "", "")
    after = feed("post_tool_use_edit")
    why = context(after, "PostToolUse")
    assert f"Memory about `{PASSWORDS}`" in why and "argon2id" in why
    assert feed("post_tool_use_edit").stdout == ""  # once per session and file


def test_a_command_that_exits_3_is_recorded_with_3_and_its_output(feed, sample: Path) -> None:
    started(feed)
    assert feed("post_tool_use_failure_shell").exit_code == 0
    assert feed("post_tool_use_shell").exit_code == 0
    log = warm_log(sample)
    assert "command: echo 2 tests failed; exit 3\nexit: 3\n" in log
    assert "Result: 2 tests failed" in log
    assert "command: echo ok\nexit: 0\n" in log


def test_a_command_whose_result_names_no_exit_code_is_unknown_never_0(feed, sample: Path) -> None:
    started(feed)
    shell = recorded("post_tool_use_shell", sample.parent)
    killed = shell["tool_response"]["llmContent"].replace("Exit Code: 0", "Exit Code: (none)")
    done = feed("post_tool_use_shell", tool_response={"llmContent": killed})
    assert done.exit_code == 0
    failed = recorded("post_tool_use_failure_shell", sample.parent)
    cut = failed["error"].split("\nExit")[0]  # no "Exit Code:" line
    assert feed("post_tool_use_failure_shell", error=cut).exit_code == 0
    log = warm_log(sample)
    assert "command: echo ok\nexit: ?\n" in log and "command: echo ok\nexit: 0" not in log
    assert "command: echo 2 tests failed; exit 3\nexit: ?\n" in log


def test_a_qwen_session_whose_end_never_fires_is_archived_once_stale(sample: Path) -> None:
    # `qwen -p` never fires SessionEnd: the next session after a day archives it (the
    # sample's live session, last touched on 2026-11-27, is archived by the first)
    clock = Clock(dt.datetime(2026, 12, 4, 22, 0))

    def open_memory() -> Memory:
        return Memory(sample, author="", clock=clock)

    first = recorded("session_start", sample.parent)
    assert answer(first, open_memory, 20_000, 1_500, lexical=True, harness="qwen")
    own = open_memory().session()
    assert own.task.startswith("Qwen Code session be127bc9")
    clock.tick(days=1, minutes=1)
    second = {**first, "session_id": "0654d95c-3bc1-48d5-905c-65d6b840c0c4"}
    answer(second, open_memory, 20_000, 1_500, lexical=True, harness="qwen")
    now = open_memory().session()
    assert now.session_id != own.session_id and now.task.startswith("Qwen Code session 0654d95c")
    ends = [e for e in open_memory().entries("activity") if "Archived as stale" in e.result]
    assert len(ends) == 2 and "untouched since 2026-12-04 22:00" in ends[-1].result


# -- memsite init --qwen --------------------------------------------------------------------


def init_qwen(project: Path):
    return CliRunner().invoke(cli, ["--root", str(project / "memory"), "init", "--qwen"])


def test_init_qwen_writes_every_hook_by_absolute_path_and_says_what_is_left(
    project: Path,
) -> None:
    done = init_qwen(project)
    assert done.exit_code == 0, done.output
    assert "memsite's Qwen Code hooks" in done.stdout
    assert "trusted folder" in done.stdout.splitlines()[-1]
    hooks = json.loads((project / ".qwen" / "settings.json").read_text())["hooks"]
    assert set(hooks) == set(qwen_setup.EVENTS)
    assert "PreToolUse" not in hooks  # its context is dropped: the why comes after the tool
    for event, groups in hooks.items():
        [group] = groups
        [hook] = group["hooks"]
        assert hook["command"].endswith(" hook --harness qwen")
        assert Path(hook["command"].split()[0]).is_absolute()
        assert hook["timeout"] == 10  # seconds (1000 or more would be milliseconds)
        assert group.get("matcher", "") == qwen_setup.EVENTS[event]
    # anchored: an unanchored "edit" would match notebook_edit too
    assert hooks["PostToolUse"][0]["matcher"] == "^(edit|write_file|run_shell_command|todo_write)$"


def test_init_qwen_again_changes_nothing_and_keeps_other_hooks(project: Path) -> None:
    guard = {"type": "command", "command": "./guard.sh", "timeout": 5}
    old = {"type": "command", "command": "/old/venv/bin/memsite hook --harness qwen"}
    path = project / ".qwen" / "settings.json"
    path.parent.mkdir()
    mine = {
        "model": {"name": "qwen3-coder"},
        "hooks": {"PostToolUse": [{"matcher": "^run_shell_command$", "hooks": [guard, old]}]},
    }
    path.write_text(json.dumps(mine))
    assert init_qwen(project).exit_code == 0
    written = json.loads(path.read_text())
    assert written["model"] == {"name": "qwen3-coder"}
    post = written["hooks"]["PostToolUse"]
    assert post[0] == {"matcher": "^run_shell_command$", "hooks": [guard]}
    assert [h["command"] for h in post[1]["hooks"]] == [settings.hook_command("qwen")]
    text = path.read_text()
    again = init_qwen(project)
    assert again.exit_code == 0 and "kept    " in again.stdout
    assert path.read_text() == text


def test_init_qwen_refuses_settings_that_are_not_json_in_one_line(project: Path) -> None:
    path = project / ".qwen" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": ')
    done = init_qwen(project)
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit)
    assert len(done.stderr.splitlines()) == 1 and ".qwen/settings.json: not JSON" in done.stderr
    assert path.read_text() == '{"hooks": '


def test_init_qwen_refuses_settings_with_comments_naming_them(project: Path) -> None:
    # Qwen Code reads its settings as JSON with comments; a rewrite would lose them
    path = project / ".qwen" / "settings.json"
    path.parent.mkdir()
    text = '{\n  // the team\'s model\n  "model": {"name": "qwen3-coder"} /* pinned */\n}\n'
    path.write_text(text)
    done = init_qwen(project)
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit)
    assert len(done.stderr.splitlines()) == 1
    assert "holds comments" in done.stderr and "by hand" in done.stderr
    assert path.read_text() == text
