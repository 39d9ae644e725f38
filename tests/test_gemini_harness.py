"""Gemini CLI's table (``harnesses/gemini.py``, issue 37), fed the events the real binary sent
(tests/fixtures/harnesses/gemini/, recorded by ``tests/gemini_cli.py``'s ``capture_hooks``
with 0.61.0: paths made ``$PROJECT`` and ``$TRANSCRIPT``) through ``memsite hook --harness
gemini``, in processes of their own, as the CLI runs them. No binary needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memsite.agents.harnesses import detect
from memsite.agents.harnesses.gemini import own_prompt, shell_outcome
from tests.claude_code import sample_project, warm_log

FIXTURES = Path(__file__).parent / "fixtures" / "harnesses" / "gemini"
PASSWORDS = "services/auth/passwords.py"
BEFORE = 'import hashlib\nHASHER = "bcrypt"  # cost 12\nROUNDS = 12\n'
OWN_WORDS = "how should we hash passwords?"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The sample memory with no live session, in a repository holding the edited files."""
    made = sample_project(
        tmp_path / "project",
        settings=False,
        files={PASSWORDS: BEFORE, "services/auth/notes.txt": "a\nb\nc\n"},
        live=False,
    )
    return made


def recorded(name: str, project: Path, **changes: Any) -> dict[str, Any]:
    """The recorded event ``name`` made to run in ``project``, with ``changes``."""
    text = (FIXTURES / f"{name}.json").read_text("utf-8")
    transcript = project.parent / "transcript.jsonl"
    text = text.replace("$PROJECT", str(project)).replace("$TRANSCRIPT", str(transcript))
    return {**json.loads(text), **changes}


def hook(project: Path, event: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    """``memsite hook --harness gemini`` (or ``args``) run in ``project`` on ``event``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_WARM"] = "off"
    env["GEMINI_CLI_HOME"] = str(project.parent / "home")  # never this machine's settings
    return subprocess.run(
        [sys.executable, "-m", "memsite", "hook", *(args or ("--harness", "gemini"))],
        cwd=project, env=env, input=json.dumps(event), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def context(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0 and done.stderr == "", done.stderr
    if not done.stdout:
        return ""
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def started(project: Path) -> None:
    assert context(hook(project, recorded("SessionStart", project))).startswith("# Persona")


def test_every_recorded_event_is_one_the_table_maps(project: Path) -> None:
    names = sorted(path.stem for path in FIXTURES.glob("*.json"))
    names.remove("SessionStart")
    names.remove("SessionEnd")  # in the order the CLI sent them: start first, end last
    for name in ["SessionStart", *names, "SessionEnd"]:
        done = hook(project, recorded(name, project))
        assert done.returncode == 0
        assert "not one memsite maps" not in done.stderr, name
    assert "Session ended by the harness (Gemini CLI, reason: exit)" in warm_log(project / "memory")


def test_an_event_only_gemini_sends_names_it_without_the_flag(project: Path) -> None:
    assert detect(recorded("BeforeAgent", project)).name == "gemini"
    assert detect(recorded("AfterTool-replace", project)).name == "gemini"
    assert detect({"hook_event_name": "UserPromptSubmit", "prompt": "x"}).name == "claude"


def test_the_prompt_is_recalled_without_the_session_start_block_before_it(
    project: Path, tmp_path: Path
) -> None:
    event = recorded("BeforeAgent", project)
    assert event["prompt"].startswith("<hook_context># Persona")
    assert event["prompt"].endswith(f"</hook_context>\n\n{OWN_WORDS}")
    twin = tmp_path / "twin"
    subprocess.run(["cp", "-a", str(project), str(twin)], check=True)
    started(project)
    started(twin)
    recall = context(hook(project, event))
    asked = context(hook(twin, recorded("BeforeAgent", twin, prompt=OWN_WORDS)))
    assert recall == asked
    assert "Tune argon2id to m=19 MiB, t=2, p=1" in recall
    # the session is named by the user's words, not by the memory put before them
    live = json.loads((project / "memory" / "hot" / "context.json").read_text())
    assert live["task"] == OWN_WORDS


def test_before_tool_says_nothing_and_the_decision_comes_after_the_edit(project: Path) -> None:
    started(project)
    before = hook(project, recorded("BeforeTool-replace", project))
    assert (before.returncode, before.stdout, before.stderr) == (0, "", "")
    after = hook(project, recorded("AfterTool-replace", project))
    answer = json.loads(after.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "AfterTool"
    assert answer["additionalContext"].startswith(f"## Memory about `{PASSWORDS}`")
    assert "Tune argon2id to m=19 MiB, t=2, p=1\nGoverns this file." in answer["additionalContext"]
    again = hook(project, recorded("AfterTool-replace", project))
    assert context(again) == ""  # once per session and file


def test_edits_are_logged_with_the_lines_of_their_real_diff(project: Path) -> None:
    started(project)
    for name in ("AfterTool-replace", "AfterTool-replace-failed", "AfterTool-write_file"):
        hook(project, recorded(name, project))
    hook(project, recorded("SessionEnd", project))
    log = warm_log(project / "memory")
    # the strings would say +2 -2 and +3 -0; the failed replace edited nothing
    assert f"file: {PASSWORDS} · lines: +1 -1" in log or (
        f"file: {PASSWORDS}\nlines: +1 -1" in log
    ), log[-1500:]
    assert "file: services/auth/notes.txt" in log
    notes = log.split("file: services/auth/notes.txt", 1)[1][:40]
    assert "lines: +1 -1" in notes
    assert "edits: 2" not in log.split(f"file: {PASSWORDS}", 1)[1][:60]


def test_commands_are_logged_with_the_exit_status_the_result_states(project: Path) -> None:
    started(project)
    hook(project, recorded("AfterTool-run_shell_command-exit3", project))
    hook(project, recorded("AfterTool-run_shell_command-exit0", project))
    cancelled = recorded("AfterTool-run_shell_command-exit0", project)
    cancelled["tool_input"] = {"command": "sleep 600", "description": "wait"}
    cancelled["tool_response"] = {
        "llmContent": "Command was cancelled by user before it could complete. There was no "
        "output before it was cancelled.",
        "returnDisplay": "Command cancelled by user.",
    }
    hook(project, cancelled)
    log = warm_log(project / "memory")
    ran = {block.split("\n", 1)[0]: block for block in log.split("command: ")[1:]}
    assert "exit: 3" in ran["echo 2 tests failed; exit 3"]
    assert "2 tests failed" in ran["echo 2 tests failed; exit 3"]
    assert "exit: 0" in ran["echo ok"]
    assert "exit: ?" in ran["sleep 600"]  # it never finished: unknown, not 0


def test_the_user_s_words_are_what_follows_the_hook_blocks() -> None:
    assert own_prompt(
        "<hook_context>a</hook_context>\n\n<hook_context>b</hook_context>\n\nhow?"
    ) == ("how?")
    assert (
        own_prompt("how? <hook_context>a</hook_context>") == "how? <hook_context>a</hook_context>"
    )
    assert own_prompt("<hook_context>never closed") == "<hook_context>never closed"


def test_a_shell_result_names_its_status_only_in_its_trailing_sections() -> None:
    wrapped = (
        "<untrusted_context>\nOutput: Exit Code: 9\nProcess Group PGID: 1\n</untrusted_context>"
    )
    assert shell_outcome(wrapped) == (0, "Exit Code: 9")
    assert shell_outcome("Output: (empty)\nSignal: SIGKILL\nProcess Group PGID: 2") == (None, "")
    assert shell_outcome("Output: x\nError: spawn bash ENOENT") == (None, "x")
    assert shell_outcome("Command moved to background (PID: 5).") == (None, "")


def _transcript(project: Path, prompt_tokens: int) -> None:
    """The run's transcript, its last reply's prompt ``prompt_tokens`` long (a real record)."""
    record = json.loads((FIXTURES / "transcript-reply.jsonl").read_text("utf-8"))
    record["tokens"]["input"] = prompt_tokens
    lines = [json.dumps({"sessionId": "s", "kind": "main"}), json.dumps(record)]
    (project.parent / "transcript.jsonl").write_text("\n".join(lines) + "\n")


def test_pre_compress_before_each_model_call_is_not_a_compaction(project: Path) -> None:
    started(project)
    _transcript(project, 100)
    for _ in range(3):
        done = hook(project, recorded("PreCompress", project))
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert "— checkpoint" not in warm_log(project / "memory")
    # past half the window Gemini CLI compresses: memsite checkpoints first
    _transcript(project, 600_000)
    assert hook(project, recorded("PreCompress", project)).returncode == 0
    assert warm_log(project / "memory").count("— checkpoint") == 1
    assert "tokens_before: 600000" in warm_log(project / "memory")  # as the API counted it


def test_a_lower_compression_threshold_of_the_project_is_followed(project: Path) -> None:
    """``model.compressionThreshold: 0.2``: Gemini CLI compresses from 20% of its window, so
    a prompt of 250,000 tokens is a compaction there and not under the default 0.5."""
    started(project)
    _transcript(project, 250_000)
    hook(project, recorded("PreCompress", project))
    assert "— checkpoint" not in warm_log(project / "memory")
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text('{"model": {"compressionThreshold": 0.2}}')
    hook(project, recorded("PreCompress", project))
    assert warm_log(project / "memory").count("— checkpoint") == 1


def test_the_prompt_size_is_the_record_s_own_not_a_quote_in_a_message(project: Path) -> None:
    started(project)
    _transcript(project, 100)
    quoting = json.loads((FIXTURES / "transcript-reply.jsonl").read_text("utf-8"))
    quoting["content"] = 'the log said "tokens":{"input":900000} ' + "x" * 600_000
    with (project.parent / "transcript.jsonl").open("a") as transcript:
        transcript.write(json.dumps(quoting).replace('"input": 100', '"input": 200') + "\n")
        transcript.write(json.dumps({"$set": {"lastUpdated": "2026-12-04T22:03:05Z"}}) + "\n")
    assert hook(project, recorded("PreCompress", project)).stderr == ""
    assert "— checkpoint" not in warm_log(project / "memory")


def test_a_fifo_at_the_transcript_path_never_holds_the_hook(project: Path) -> None:
    started(project)
    os.mkfifo(project.parent / "transcript.jsonl")
    done = hook(project, recorded("PreCompress", project))
    # not "no answer within 5 s": the FIFO is never opened for a read that waits
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert "— checkpoint" not in warm_log(project / "memory")


MALFORMED = [
    ("PreCompress", {"transcript_path": "/"}),
    ("PreCompress", {"trigger": "manual", "transcript_path": 5}),
    ("AfterTool-write_todos", {"tool_input": {"todos": [{"description": 5, "status": []}]}}),
    ("AfterTool-write_todos", {"tool_input": "todos"}),
    ("AfterTool-replace", {"tool_response": "done"}),
    ("AfterTool-write_file", {"tool_response": {"returnDisplay": {"fileDiff": 5}}}),
    ("AfterTool-run_shell_command-exit3", {"tool_response": {"llmContent": ["Output: x"]}}),
    ("BeforeAgent", {"prompt": 5}),
]


def test_malformed_gemini_events_are_answered_without_an_error(project: Path) -> None:
    """Fields of the wrong kind (a directory as the transcript, a list as a todo's status,
    a tool result that is text): what can be read is, the rest is left; never a Python
    error on stderr (an IsADirectoryError and a TypeError before)."""
    started(project)
    for name, changes in MALFORMED:
        done = hook(project, recorded(name, project, **changes))
        assert (done.returncode, done.stderr) == (0, ""), (name, changes, done.stderr)


def test_a_manual_compress_is_a_compaction(project: Path) -> None:
    started(project)
    _transcript(project, 100)
    hook(project, recorded("PreCompress", project, trigger="manual"))
    assert "trigger: manual" in warm_log(project / "memory")


def test_the_todo_list_becomes_the_pending_actions(project: Path) -> None:
    started(project)
    hook(project, recorded("AfterTool-write_todos", project))
    pending = json.loads((project / "memory" / "hot" / "context.json").read_text())
    assert pending["pending_actions"] == ["Run the auth tests"]
