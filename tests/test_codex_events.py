"""Codex's real hook events (issue 37), recorded from ``codex exec`` 0.169.0 (see
tests/codex_cli.py) and saved under tests/fixtures/harnesses/codex/, fed through
``memsite hook --harness codex`` without the binary: what the model is handed, what the warm
log records, and the one stderr line for what memsite cannot read.

The fixtures name the project ``{cwd}`` and Codex's session log ``{transcript}``; the log
(``rollout.jsonl``) holds the lines Codex wrote for the run's tool calls: a patch of four
files (an update, an update that moves its file, a delete and an add) and two commands, one
exiting 3."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.agents.harnesses import codex, rollout
from memsite.agents.hooks import run as run_hook
from memsite.cli import cli
from tests.claude_code import sample_project

FIXTURES = Path(__file__).parent / "fixtures" / "harnesses" / "codex"
LOG = "rollout-2026-12-04T22-04-11-01a24316.jsonl"  # Codex names its session logs so
PASSWORDS = 'HASHER = "bcrypt"  # cost 12\nX = 1\n'


def recorded(name: str, project: Path, transcript: Path | None = None) -> dict[str, Any]:
    """The recorded event ``name``, in ``project``, its session log at ``transcript``."""
    text = (FIXTURES / f"{name}.json").read_text("utf-8")
    log = str(transcript) if transcript is not None else str(project / LOG)
    return json.loads(text.replace("{cwd}", str(project)).replace("{transcript}", log))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMSITE_WARM", "off")
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    files = {
        "services/auth/passwords.py": PASSWORDS,
        "services/auth/old_name.py": "A = 1\n",
        "services/auth/legacy.py": "a\nb\nc\n",
    }
    path = sample_project(tmp_path / "project", settings=False, files=files)
    log = (FIXTURES / "rollout.jsonl").read_text("utf-8").replace("{cwd}", str(path))
    (path / LOG).write_text(log, "utf-8")
    SAMPLED[path] = {e.id for e in Memory(path / "memory").entries("activity")}
    return path


SAMPLED: dict[Path, set[str]] = {}  # the sample's own activities, per project


def hook(project: Path, event: dict[str, Any] | str, *args: str):
    data = event if isinstance(event, str) else json.dumps(event)
    root = str(project / "memory")
    return CliRunner().invoke(cli, ["--root", root, "hook", *args], input=data)


def context_of(stdout: str, name: str) -> str:
    answer = json.loads(stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == name
    return answer["hookSpecificOutput"]["additionalContext"]


def activities(project: Path, title: str) -> list:
    """The activities titled ``title`` written since the sample was copied."""
    entries = Memory(project / "memory").entries("activity")
    return [e for e in entries if e.title == title and e.id not in SAMPLED[project]]


def details(entry) -> dict[str, str]:
    return dict(entry.details)


def test_a_recorded_codex_session_through_its_table(project: Path) -> None:
    said = {
        name: hook(project, recorded(name, project), "--harness", "codex")
        for name in (
            "session_start",
            "user_prompt_submit",
            "pre_tool_use_patch",
            "post_tool_use_patch",
            "post_tool_use_bash_exit_3",
            "post_tool_use_bash",
            "session_end",
        )
    }
    assert all(r.exit_code == 0 for r in said.values()), {k: r.output for k, r in said.items()}
    prime = context_of(said["session_start"].stdout, "SessionStart")
    assert prime.startswith("# Persona") and "Codex session 01a24316" in prime
    assert len(prime.encode("utf-8")) <= codex.CAP
    assert "argon2id" in context_of(said["user_prompt_submit"].stdout, "UserPromptSubmit")
    why = context_of(said["pre_tool_use_patch"].stdout, "PreToolUse")
    assert "## Memory about `services/auth/passwords.py`" in why and "argon2id" in why
    assert said["post_tool_use_patch"].stdout == ""  # Codex shows PreToolUse's context
    edits = {details(e)["file"]: details(e)["lines"] for e in activities(project, "edited file")}
    assert edits == {  # the lines of the diffs Codex logged, one entry per file of the patch
        "services/auth/passwords.py": "+2 -1",
        "services/auth/new_name.py": "+1 -1",
        "services/auth/legacy.py": "+0 -3",
        "notes/new.txt": "+2 -0",
    }
    ran = {details(e)["command"]: details(e)["exit"] for e in activities(project, "ran command")}
    assert ran == {"echo 2 tests failed; exit 3": "3", "echo fine": "0"}
    # the sample's week-old live session was archived as stale; Codex's own then ended
    ends = [e.result for e in activities(project, "session end")]
    assert ends[-1] == "Session ended by the harness (Codex, reason: other)."


def test_stop_is_not_taken_for_an_end(project: Path) -> None:
    said = hook(project, recorded("stop", project), "--harness", "codex")
    assert said.exit_code == 0 and said.stdout == ""
    assert said.stderr == "memsite hook: Codex event 'Stop' is not one memsite maps; nothing done\n"


def test_without_the_session_log_an_exit_status_is_unknown_and_said(project: Path) -> None:
    event = recorded("post_tool_use_bash_exit_3", project, project / "gone.jsonl")
    said = hook(project, event, "--harness", "codex")
    assert said.exit_code == 0 and said.stdout == ""
    assert said.stderr.count("\n") == 1 and "recorded as unknown (?)" in said.stderr
    (ran,) = activities(project, "ran command")
    assert details(ran)["exit"] == "?"  # never 0: Codex's event says nothing of it


def test_a_session_log_that_is_a_fifo_is_not_waited_for(project: Path) -> None:
    fifo = project / "rollout.fifo"
    os.mkfifo(fifo)
    said = hook(project, recorded("post_tool_use_bash_exit_3", project, fifo), "--harness", "codex")
    # stuck on opening the FIFO, the hook would say "no answer within 5 s" and record nothing
    assert said.exit_code == 0 and "recorded as unknown" in said.stderr
    (ran,) = activities(project, "ran command")
    assert details(ran)["exit"] == "?"


def test_a_patch_without_its_log_counts_the_patch_lines(project: Path) -> None:
    event = recorded("post_tool_use_patch", project, project / "gone.jsonl")
    assert hook(project, event, "--harness", "codex").exit_code == 0
    hook(project, recorded("session_end", project), "--harness", "codex")  # writes the burst
    edits = {details(e)["file"]: details(e)["lines"] for e in activities(project, "edited file")}
    assert edits["services/auth/passwords.py"] == "+2 -1"
    assert edits["services/auth/new_name.py"] == "+1 -1"
    assert edits["services/auth/legacy.py"] == "+0 -0"  # a delete's lines are in the log only


def test_the_log_is_read_from_its_end_only(project: Path) -> None:
    log = project / LOG
    filler = json.dumps({"type": "event_msg", "payload": {"type": "token_count", "x": "y" * 900}})
    with log.open("r+", encoding="utf-8") as f:
        tail = f.read()
        f.seek(0)
        f.write((filler + "\n") * 6_000 + tail)  # ~5.5 MB before the lines of the run
    assert log.stat().st_size > 5 * rollout.TAIL
    said = hook(project, recorded("post_tool_use_bash_exit_3", project), "--harness", "codex")
    assert said.exit_code == 0 and said.stderr == ""
    (ran,) = activities(project, "ran command")
    assert details(ran)["exit"] == "3"


@pytest.mark.parametrize(
    "patch",
    [
        "*** Begin Patch\n*** Update File: \n@@\n-a\n+b\n*** End Patch\n",
        "*** Begin Patch\n*** End Patch\n",
        "not a patch at all",
    ],
)
def test_a_patch_that_names_no_file_is_one_line(project: Path, patch: str) -> None:
    for name in ("pre_tool_use_patch", "post_tool_use_patch"):
        event = recorded(name, project)
        event["tool_input"] = {"command": patch}
        said = hook(project, event, "--harness", "codex")
        assert said.exit_code == 0 and said.stdout == ""
        assert said.stderr == (
            "memsite hook: Codex apply_patch names no file (no *** Add/Update/Delete File: "
            "path); nothing done\n"
        )
    assert activities(project, "edited file") == []


def test_a_patch_without_its_text_is_one_line(project: Path) -> None:
    event = recorded("post_tool_use_patch", project)
    event["tool_input"] = {}
    said = hook(project, event, "--harness", "codex")
    assert said.exit_code == 0 and said.stdout == ""
    assert "apply_patch came without its patch (tool_input.command)" in said.stderr


def test_codex_events_are_told_without_the_flag(project: Path) -> None:
    for name in ("session_start", "post_tool_use_patch", "session_end"):
        assert hook(project, recorded(name, project)).exit_code == 0
    edits = {details(e)["file"]: details(e)["lines"] for e in activities(project, "edited file")}
    assert edits["services/auth/passwords.py"] == "+2 -1"
    ends = [e.result for e in activities(project, "session end")]
    assert ends[-1] == "Session ended by the harness (Codex, reason: other)."


def test_a_prime_over_codexs_byte_cap_is_cut_to_it_and_said(project: Path) -> None:
    persona = project / "memory" / "persona.md"
    # 9,000 characters of two bytes each: within Claude Code's 10,000 characters, but
    # 18,000 bytes for Codex, which would spill the rest to a world-readable file
    persona.write_text("# Persona\n\n" + ("é" * 89 + "\n") * 100, "utf-8")
    said = hook(project, recorded("session_start", project), "--harness", "codex")
    prime = context_of(said.stdout, "SessionStart")
    assert len(prime.encode("utf-8")) <= codex.CAP
    assert "_Cut to fit the harness's 9,800-byte limit; ask memsite for more._" in prime
    assert "cut to fit Codex's 9,800-byte hook context" in said.stderr


def test_codexs_session_end_gives_up_before_codex_kills_it(project: Path) -> None:
    def slow() -> Memory:
        time.sleep(6)
        return Memory(project / "memory")

    raw = json.dumps(recorded("session_end", project)).encode()
    started = time.monotonic()
    said = run_hook(raw, slow, harness="codex")
    assert said.error == "memsite hook: no answer within 2 s; no context added"
    assert time.monotonic() - started < 4.5  # not memsite's 5 s: Codex would have killed it
    other = run_hook(json.dumps(recorded("user_prompt_submit", project)).encode(), slow,
                     harness="codex", time_limit=0.3)  # fmt: skip
    assert other.error == "memsite hook: no answer within 0.3 s; no context added"


def test_a_compaction_keeps_the_summary_codex_logged(project: Path) -> None:
    """Codex's PostCompact carries no summary; the model's reply it marked as the
    compaction's output is in its session log (recorded in ``rollout_compact.jsonl``)."""
    log = project / "rollout-2026-12-04T22-18-19-01a24323.jsonl"
    log.write_text((FIXTURES / "rollout_compact.jsonl").read_text("utf-8"), "utf-8")
    start = recorded("session_start", project, log)
    start["session_id"] = recorded("pre_compact", project)["session_id"]
    for event in (
        start,
        recorded("pre_compact", project, log),
        recorded("post_compact", project, log),
    ):
        said = hook(project, event, "--harness", "codex")
        assert (said.exit_code, said.stderr) == (0, ""), said.output
    after = hook(project, recorded("session_start_compact", project, log), "--harness", "codex")
    context = context_of(after.stdout, "SessionStart")
    assert context.startswith("## Since the last checkpoint")
    assert "SUMMARY: we ran echo one." in context
    first, second = activities(project, "checkpoint")
    assert details(first)["trigger"] == "auto"
    assert details(second)["completes"] == first.id
    assert second.result == "SUMMARY: we ran echo one."


def test_a_compaction_without_its_summary_in_the_log_says_so(project: Path) -> None:
    hook(project, recorded("session_start", project), "--harness", "codex")
    said = hook(project, recorded("post_compact", project), "--harness", "codex")
    assert said.exit_code == 0 and said.stdout == ""
    assert said.stderr == (
        "memsite hook: Codex's session log holds no summary of the compaction; the "
        "checkpoint has none\n"
    )
    (checkpoint,) = activities(project, "checkpoint")  # memsite's own summary, not lost
    assert details(checkpoint)["trigger"] == "auto"


def test_a_patch_codex_says_failed_records_no_edit(project: Path) -> None:
    """Codex 0.169.0 fires no PostToolUse for a patch that does not apply; one whose own
    result says it failed ("Exit code: 1") edited nothing, so nothing is recorded."""
    event = recorded("post_tool_use_patch", project, project / "gone.jsonl")
    event["tool_response"] = "Exit code: 1\nWall time: 0 seconds\nOutput:\nerror: no match\n"
    said = hook(project, event, "--harness", "codex")
    assert (said.exit_code, said.stdout, said.stderr) == (0, "", "")
    hook(project, recorded("session_end", project), "--harness", "codex")
    assert activities(project, "edited file") == []


def test_a_patch_with_one_nameless_header_records_the_rest_and_says_so(project: Path) -> None:
    event = recorded("post_tool_use_patch", project, project / "gone.jsonl")
    event["tool_input"] = {
        "command": "*** Begin Patch\n*** Add File: \n+x\n*** Add File: notes/a.txt\n+a\n+b\n"
        "*** End Patch\n"
    }
    said = hook(project, event, "--harness", "codex")
    assert said.exit_code == 0
    assert said.stderr == "memsite hook: 1 file header(s) of Codex's patch name no file\n"
    hook(project, recorded("session_end", project), "--harness", "codex")
    edits = {details(e)["file"]: details(e)["lines"] for e in activities(project, "edited file")}
    assert edits == {"notes/a.txt": "+2 -0"}
