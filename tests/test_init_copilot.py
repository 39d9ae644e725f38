"""``memsite init --copilot`` (issue 37): memsite's hooks in GitHub Copilot CLI's
``.github/hooks/memsite.json``, written new or merged like ``init --claude``'s: PascalCase
events (the only ones whose input names the event), ``bash`` commands calling this memsite by
its absolute path with ``--harness copilot``, timeouts in seconds, tool matchers in the names
Copilot's events carry; other hooks kept; a second run changes nothing; what the user must
still do (trust the folder) in one line. Before it, ``--copilot`` was no option of init.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite.agents import harnesses, settings
from memsite.agents.harnesses.setup import copilot
from memsite.cli import cli

LINT = {"type": "command", "bash": "./scripts/lint.sh", "timeoutSec": 30, "matcher": "Edit"}
AUDIT = {"type": "command", "bash": "./scripts/memsite-audit.sh hook"}
OLD = {"type": "command", "bash": "/old/venv/bin/memsite hook", "timeoutSec": 5}


def init_copilot(project: Path):
    return CliRunner().invoke(cli, ["--root", str(project / "memory"), "init", "--copilot"])


def ours(matcher: str = "") -> dict:
    entry = {
        "type": "command",
        "bash": f"{settings.hook_command()} --harness copilot",
        "timeoutSec": 10,
    }
    return {**entry, "matcher": matcher} if matcher else entry


def test_init_copilot_writes_every_event_calling_this_memsite(project: Path) -> None:
    done = init_copilot(project)
    assert done.exit_code == 0, done.output
    path = project / copilot.CONFIG
    assert f"wrote {path} (memsite's Copilot CLI hooks)" in done.output
    note = [line for line in done.output.splitlines() if line.startswith("note: ")]
    assert len(note) == 1 and "trust" in note[0]
    config = json.loads(path.read_text())
    assert config["version"] == 1
    hooks = config["hooks"]
    # every event Claude Code's table maps, but PostCompact, which Copilot does not have
    assert set(hooks) == set(harnesses.CLAUDE.events) - {"PostCompact"}
    assert hooks["SessionStart"] == [ours()]
    assert hooks["PreToolUse"] == [ours("Edit|Write")]
    assert hooks["PostToolUse"] == [ours("Edit|Write|Bash")]
    command = hooks["SessionEnd"][0]["bash"]
    assert Path(command.split()[0]).is_absolute()
    again = init_copilot(project)
    assert again.exit_code == 0 and f"kept    {path}" in again.output


def test_init_copilot_keeps_other_hooks_and_replaces_its_old_one(project: Path) -> None:
    path = project / copilot.CONFIG
    path.parent.mkdir(parents=True)
    before = {
        "version": 1,
        "hooks": {
            "PostToolUse": [LINT, OLD, AUDIT],
            "SessionStart": [{"matcher": "new", "hooks": [OLD, AUDIT]}],
            "agentStop": [AUDIT],
            # memsite's hooks under camelCase names, which send no event name: they go
            "sessionStart": [OLD, AUDIT],
            "userPromptSubmitted": [{"hooks": [OLD]}],
            "sessionEnd": [OLD],
        },
        "disableAllHooks": False,
    }
    path.write_text(json.dumps(before))
    assert init_copilot(project).exit_code == 0
    after = json.loads(path.read_text())
    hooks = after["hooks"]
    assert after["disableAllHooks"] is False
    assert hooks["PostToolUse"] == [LINT, ours("Edit|Write|Bash"), AUDIT]
    assert hooks["SessionStart"] == [{"matcher": "new", "hooks": [AUDIT]}, ours()]
    assert hooks["agentStop"] == [AUDIT]
    assert hooks["sessionStart"] == [AUDIT]
    assert "userPromptSubmitted" not in hooks and "sessionEnd" not in hooks
    assert "/old/venv/bin/memsite" not in path.read_text()
    text = path.read_text()
    assert init_copilot(project).exit_code == 0
    assert path.read_text() == text


@pytest.mark.parametrize(
    "text",
    ['{"hooks": [1, 2]}', '{"hooks": {"SessionEnd": {}}}', "[1]", "{not json"],
)
def test_a_config_memsite_cannot_merge_is_one_line_and_left_unchanged(
    project: Path, text: str
) -> None:
    path = project / copilot.CONFIG
    path.parent.mkdir(parents=True)
    path.write_text(text)
    done = init_copilot(project)
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit)
    assert len(done.stderr.splitlines()) == 1 and "fix it by hand" in done.stderr
    assert path.read_text() == text


def test_a_config_linked_outside_the_repository_is_refused(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    path = project / copilot.CONFIG
    path.parent.mkdir(parents=True)
    path.symlink_to(outside)
    done = init_copilot(project)
    assert done.exit_code == 1 and "outside the repository" in done.stderr
    assert outside.read_text() == "{}"
