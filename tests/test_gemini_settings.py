"""``memsite init --gemini`` (issue 37): memsite's hooks in Gemini CLI's own terms
(``.gemini/settings.json``: its events, milliseconds, exact session matchers), written or
merged as ``--claude`` writes ``.claude/settings.json``: idempotent, every other hook and
setting kept, the absolute path of the memsite that ran it, and a note of what is left."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memsite.agents import settings
from memsite.agents.harnesses.setup import gemini
from memsite.cli import cli

GUARD = {"type": "command", "command": "./scripts/guard.sh", "timeout": 3000}
OLD = {"type": "command", "command": "/old/venv/bin/memsite hook --harness gemini"}


def init_gemini(project: Path):
    return CliRunner().invoke(cli, ["--root", str(project / "memory"), "init", "--gemini"])


def written(project: Path) -> dict:
    return json.loads((project / ".gemini" / "settings.json").read_text())


def test_init_gemini_writes_every_event_in_gemini_cli_terms(project: Path) -> None:
    done = init_gemini(project)
    assert done.exit_code == 0, done.output
    assert "wrote" in done.output and "memsite's Gemini CLI hooks" in done.output
    assert "note: Gemini CLI reads it only in a trusted folder" in done.output
    hooks = written(project)["hooks"]
    assert list(hooks) == ["SessionStart", "BeforeAgent", "AfterTool", "PreCompress", "SessionEnd"]
    command = settings.hook_command("gemini")
    assert Path(command.split()[0]).is_absolute() and command.endswith(" hook --harness gemini")
    for event, groups in hooks.items():
        (group,) = groups
        assert group["hooks"] == [{"type": "command", "command": command, "timeout": 10_000}]
        # session events match exact strings: a regex-like matcher would match nothing
        assert group.get("matcher") == (gemini.EVENTS[event] or None)
    assert (
        hooks["AfterTool"][0]["matcher"] == "^(replace|write_file|run_shell_command|write_todos)$"
    )


def test_init_gemini_twice_changes_nothing(project: Path) -> None:
    init_gemini(project)
    before = (project / ".gemini" / "settings.json").read_bytes()
    again = init_gemini(project)
    assert again.exit_code == 0 and "kept" in again.output
    assert (project / ".gemini" / "settings.json").read_bytes() == before


def test_init_gemini_keeps_other_settings_and_hooks_and_replaces_an_old_memsite(
    project: Path,
) -> None:
    (project / ".gemini").mkdir()
    mine = {
        "model": {"compressionThreshold": 0.3},
        "hooks": {
            "BeforeTool": [{"matcher": "run_shell_command", "hooks": [GUARD]}],
            "AfterTool": [
                {
                    "matcher": "^(replace|write_file|run_shell_command|write_todos)$",
                    "hooks": [GUARD, OLD],
                }
            ],  # fmt: skip
        },
    }
    (project / ".gemini" / "settings.json").write_text(json.dumps(mine))
    assert init_gemini(project).exit_code == 0
    out = written(project)
    assert out["model"] == {"compressionThreshold": 0.3}
    assert out["hooks"]["BeforeTool"] == mine["hooks"]["BeforeTool"]
    (group,) = out["hooks"]["AfterTool"]
    assert group["hooks"][0] == GUARD  # its neighbour kept, in its place
    assert group["hooks"][1]["command"] == settings.hook_command("gemini")
    assert len(group["hooks"]) == 2


def test_a_broken_settings_file_is_one_line_and_left_unchanged(project: Path) -> None:
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text('{"hooks": []}')
    done = init_gemini(project)
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit)
    assert done.stderr.splitlines() == [
        "Error: .gemini/settings.json: 'hooks' is not an object; fix it by hand first"
    ]
    assert (project / ".gemini" / "settings.json").read_text() == '{"hooks": []}'


def test_claude_and_gemini_hooks_are_both_memsite_s() -> None:
    assert settings.is_ours({"command": settings.hook_command("gemini")})
    assert settings.is_ours({"command": "/v/bin/memsite hook"})
    assert not settings.is_ours({"command": "/v/bin/memsite hook --harness"})
    assert not settings.is_ours({"command": "./guard.sh --harness gemini"})


def test_a_settings_file_with_comments_is_refused_not_stripped(project: Path) -> None:
    """Gemini CLI reads comments in its settings; memsite writes plain JSON, which would drop
    them: it refuses in one line and leaves the file as it was."""
    (project / ".gemini").mkdir()
    text = '{\n  // my model\n  "model": {"name": "gemini-2.5-pro"}\n}\n'
    (project / ".gemini" / "settings.json").write_text(text)
    done = init_gemini(project)
    assert done.exit_code == 1 and isinstance(done.exception, SystemExit)
    (line,) = done.stderr.splitlines()
    assert line.startswith("Error: ") and "holds comments" in line and "not changed" in line
    assert (project / ".gemini" / "settings.json").read_text() == text
