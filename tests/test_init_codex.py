"""``memsite init --codex`` (issue 37): memsite's hooks in Codex's ``.codex/hooks.json``,
merged as ``init --claude`` merges Claude Code's settings: every event Codex sends memsite,
the absolute path of the memsite that ran it with ``--harness codex``, Codex's seconds
(SessionEnd's 3, which Codex clamps to), its tool names as matchers, other hooks kept, the
same file twice unchanged, and one line on what the user must still do."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memsite.agents import settings
from memsite.agents.harnesses.setup import codex
from memsite.cli import cli

TEAM = {"type": "command", "command": "./scripts/guard.sh", "timeout": 30}
OLD = {"type": "command", "command": "/old/venv/bin/memsite hook --harness codex", "timeout": 5}


def init(project: Path, *flags: str):
    return CliRunner().invoke(cli, ["--root", str(project / "memory"), "init", *flags])


def hooks_of(project: Path) -> dict:
    return json.loads((project / codex.HOOKS).read_text("utf-8"))["hooks"]


def test_init_codex_writes_every_event_codex_sends_memsite(project: Path) -> None:
    done = init(project, "--codex")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert f"wrote {project / codex.HOOKS} (memsite's Codex hooks)" in lines
    assert lines[-1] == f"note: {codex.NOTE}" and "trust" in lines[-1] and "/hooks" in lines[-1]
    hooks = hooks_of(project)
    assert set(hooks) == {
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact",
        "PostCompact", "SessionEnd",
    }  # fmt: skip
    command = settings.hook_command() + " --harness codex"
    assert command.split()[0].startswith("/")  # the memsite that ran init, by its path
    for event, groups in hooks.items():
        (group,) = groups
        (entry,) = group["hooks"]
        wait = 3 if event == "SessionEnd" else 10  # Codex clamps SessionEnd to 3 seconds
        assert entry == {"type": "command", "command": command, "timeout": wait}
    assert hooks["PreToolUse"][0]["matcher"] == "apply_patch"
    assert hooks["PostToolUse"][0]["matcher"] == "apply_patch|Bash"
    assert "matcher" not in hooks["SessionStart"][0]


def test_init_codex_twice_changes_nothing(project: Path) -> None:
    init(project, "--codex")
    before = (project / codex.HOOKS).read_bytes()
    done = init(project, "--codex")
    assert done.exit_code == 0
    assert f"kept    {project / codex.HOOKS} (memsite's Codex hooks)" in done.stdout
    assert (project / codex.HOOKS).read_bytes() == before


def test_init_codex_keeps_the_teams_hooks_and_replaces_an_old_memsite(project: Path) -> None:
    path = project / codex.HOOKS
    path.parent.mkdir()
    before = {
        "hooks": {
            "PostToolUse": [{"matcher": "apply_patch|Bash", "hooks": [TEAM, OLD]}],
            "Stop": [{"hooks": [TEAM]}],
        },
        "other": {"kept": True},
    }
    path.write_text(json.dumps(before))
    assert init(project, "--codex").exit_code == 0
    written = json.loads(path.read_text("utf-8"))
    assert written["other"] == {"kept": True}
    assert written["hooks"]["Stop"] == [{"hooks": [TEAM]}]
    (group,) = written["hooks"]["PostToolUse"]
    assert group["hooks"][0] == TEAM
    assert group["hooks"][1]["command"] == settings.hook_command("codex")  # the old one replaced
    assert len(group["hooks"]) == 2


def test_init_codex_beside_init_claude_writes_each_its_own(project: Path) -> None:
    assert init(project, "--claude", "--codex").exit_code == 0
    claude = json.loads((project / settings.SETTINGS).read_text("utf-8"))["hooks"]
    assert claude["PreToolUse"][0]["hooks"][0]["command"] == settings.hook_command()
    assert "PostToolUseFailure" in claude and "PostToolUseFailure" not in hooks_of(project)


def test_a_broken_hooks_file_is_one_line_and_left_unchanged(project: Path) -> None:
    path = project / codex.HOOKS
    path.parent.mkdir()
    path.write_text('{"hooks": []}')
    done = init(project, "--codex")
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit)
    assert done.stderr == (
        "Error: .codex/hooks.json: 'hooks' is not an object; fix it by hand first\n"
    )
    assert path.read_text() == '{"hooks": []}'
