"""Which agent CLI sent an event, told from its shape when ``memsite hook`` runs without
``--harness`` (issue 37): every event recorded from each CLI's real binary
(``tests/fixtures/harnesses/<cli>/``) is read through that CLI's table, and a Claude Code
event through Claude Code's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsite.agents import harnesses

FIXTURES = Path(__file__).parent / "fixtures" / "harnesses"
RECORDED = sorted(
    (cli.name, path) for cli in FIXTURES.iterdir() if cli.is_dir() for path in cli.glob("*.json")
)


# the recorded events' placeholders for where each CLI keeps its transcript, as each names it
TRANSCRIPTS = {
    "{transcript}": "/home/you/.codex/sessions/2026/12/04/rollout-2026-12-04T22-00-00-01a2.jsonl",
    "$TRANSCRIPT": "/home/you/.gemini/tmp/3f1c9a/chats/session-2026-12-04T22-12-9db166b8.jsonl",
}


def test_every_cli_but_claude_code_has_recorded_events() -> None:
    assert {cli for cli, _ in RECORDED} == set(harnesses.NAMES) - {"claude"}


@pytest.mark.parametrize(("cli", "path"), RECORDED, ids=[f"{c}/{p.name}" for c, p in RECORDED])
def test_a_recorded_event_is_told_as_its_cli(cli: str, path: Path) -> None:
    text = path.read_text("utf-8")
    for placeholder, real in TRANSCRIPTS.items():  # the paths each CLI writes, put back
        text = text.replace(placeholder, real)
    event = json.loads(text)
    assert harnesses.detect(event).name == cli


@pytest.mark.parametrize(
    "event",
    [
        {"hook_event_name": "SessionStart", "session_id": "s", "source": "startup",
         "transcript_path": "/home/u/.claude/projects/p/s.jsonl", "cwd": "/p"},
        {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi",
         "transcript_path": "/home/u/.claude/projects/p/s.jsonl", "cwd": "/p"},
        {"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Edit",
         "tool_input": {"file_path": "/p/a.py", "old_string": "a", "new_string": "b"},
         "tool_response": {"structuredPatch": []}, "cwd": "/p",
         "transcript_path": "/home/u/.claude/projects/p/s.jsonl"},
        {"hook_event_name": "PostToolUseFailure", "session_id": "s", "tool_name": "Bash",
         "tool_input": {"command": "false"}, "error": "Exit code 1", "cwd": "/p",
         "transcript_path": "/home/u/.claude/projects/p/s.jsonl"},
    ],
    ids=["SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure"],
)  # fmt: skip
def test_a_claude_code_event_is_told_as_claude_code(event: dict) -> None:
    assert harnesses.detect(event).name == "claude"
