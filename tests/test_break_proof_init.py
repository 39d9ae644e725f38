"""The break-proof review, round 4 (issue 34, points 7 and 8): what ``memsite init`` writes
beside the tree, into files the project shares with other tools.

``init --claude`` merges memsite's hooks into ``.claude/settings.json``: another tool's hook
in a group memsite's old hook shared was dropped with the group, a link became a plain file,
every rewrite left the file 0600, and 400 KB of nested JSON ended in a ``RecursionError``.
``init --ci`` wrote the memory's folder unquoted into the workflow's shell lines, so a folder
named ``$(touch PWN)`` ran in CI. Each test failed on the code before the fix.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memsite.agents import settings
from memsite.cli import cli
from memsite.site import workflows
from memsite.site.publish import recipes

GUARD = {"type": "command", "command": "./scripts/block-dangerous-commands.sh"}
NOTIFY = {"type": "command", "command": "notify-send 'Claude is done'"}
WELCOME = {"type": "command", "command": "cat .claude/welcome.txt"}
OLD = {"type": "command", "command": "/old/venv/bin/memsite hook", "timeout": 5}


def one_line_error(done) -> str:
    """The error of a command that failed as it should: exit 1, one line, no traceback."""
    assert done.exit_code == 1, (done.exit_code, done.output, done.exception)
    assert isinstance(done.exception, SystemExit), done.exception  # not a traceback
    assert len(done.stderr.splitlines()) == 1, done.stderr
    return done.stderr


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository that will hold ``memory/``, as the current folder."""
    path = tmp_path / "project"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / ".claude").mkdir()
    monkeypatch.chdir(path)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    return path


def init_claude(project: Path):
    return CliRunner().invoke(cli, ["--root", str(project / "memory"), "init", "--claude"])


def ours() -> dict:
    return {"type": "command", "command": settings.hook_command(), "timeout": settings.TIMEOUT}


# -- 34.7: init --claude adds, never removes ------------------------------------------------


def test_init_claude_keeps_other_hooks_in_a_shared_group_and_in_their_own(project: Path) -> None:
    path = project / settings.SETTINGS
    before = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            # the team's guard added to the group of an old memsite hook: the same matcher
            "PreToolUse": [{"matcher": settings.EDITS, "hooks": [GUARD, OLD]}],
            # an old memsite hook added to the team's group: another matcher
            "PostToolUse": [{"matcher": "Bash", "hooks": [OLD, NOTIFY]}],
            # groups and events of their own
            "SessionStart": [{"matcher": "startup", "hooks": [WELCOME]}],
            "Stop": [{"hooks": [NOTIFY]}],
        },
    }
    path.write_text(json.dumps(before, indent=2))
    done = init_claude(project)
    assert done.exit_code == 0, done.output
    after = json.loads(path.read_text())
    hooks = after["hooks"]
    assert after["permissions"] == before["permissions"]
    # memsite's entry replaced where it was, the guard kept beside it
    assert hooks["PreToolUse"] == [{"matcher": settings.EDITS, "hooks": [GUARD, ours()]}]
    # the team's matcher is theirs: memsite's hook leaves it for a group of its own
    assert hooks["PostToolUse"] == [
        {"matcher": "Bash", "hooks": [NOTIFY]},
        {"matcher": settings.EVENTS["PostToolUse"], "hooks": [ours()]},
    ]
    assert hooks["SessionStart"] == [
        {"matcher": "startup", "hooks": [WELCOME]},
        {"matcher": settings.EVENTS["SessionStart"], "hooks": [ours()]},
    ]
    assert hooks["Stop"] == [{"hooks": [NOTIFY]}]
    assert "/old/venv/bin/memsite" not in path.read_text()
    # and once more: nothing changes
    text = path.read_text()
    again = init_claude(project)
    assert again.exit_code == 0 and f"kept    {path}" in again.output
    assert path.read_text() == text


def test_a_hook_that_only_names_memsite_is_not_taken_for_memsite(project: Path) -> None:
    path = project / settings.SETTINGS
    audit = {"type": "command", "command": "./scripts/memsite-audit.sh hook"}
    echo = {"type": "command", "command": "echo memsite hook"}
    path.write_text(json.dumps({"hooks": {"SessionEnd": [{"hooks": [audit, echo]}]}}))
    assert init_claude(project).exit_code == 0
    groups = json.loads(path.read_text())["hooks"]["SessionEnd"]
    assert groups == [{"hooks": [audit, echo]}, {"hooks": [ours()]}]


def test_a_linked_settings_file_is_written_through_and_stays_a_link(project: Path) -> None:
    shared = project / "config" / "claude-settings.json"
    shared.parent.mkdir()
    shared.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [NOTIFY]}]}}))
    link = project / settings.SETTINGS
    link.symlink_to("../config/claude-settings.json")
    done = init_claude(project)
    assert done.exit_code == 0, done.output
    assert link.is_symlink() and os.readlink(link) == "../config/claude-settings.json"
    hooks = json.loads(shared.read_text())["hooks"]
    assert hooks["Stop"] == [{"hooks": [NOTIFY]}]
    assert hooks["SessionEnd"] == [{"hooks": [ours()]}]


def test_a_settings_file_linked_outside_the_repository_is_refused_unchanged(
    project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "home" / ".claude" / "settings.json"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text('{"model": "opus"}\n')
    (project / settings.SETTINGS).symlink_to(elsewhere)
    said = one_line_error(init_claude(project))
    assert f"leads to {elsewhere} through a link, outside the repository; not changed" in said
    assert elsewhere.read_text() == '{"model": "opus"}\n'
    # the folder linked instead of the file
    (project / settings.SETTINGS).unlink()
    (project / ".claude").rmdir()
    (project / ".claude").symlink_to(elsewhere.parent)
    said = one_line_error(init_claude(project))
    assert f"leads to {elsewhere} through a link, outside the repository; not changed" in said
    assert elsewhere.read_text() == '{"model": "opus"}\n'


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o640])
def test_the_settings_file_keeps_its_mode(project: Path, mode: int) -> None:
    path = project / settings.SETTINGS
    path.write_text("{}\n")
    path.chmod(mode)
    assert init_claude(project).exit_code == 0
    assert "memsite hook" in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_a_new_settings_file_has_the_mode_the_umask_gives(project: Path) -> None:
    old = os.umask(0o022)
    try:
        assert init_claude(project).exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((project / settings.SETTINGS).stat().st_mode) == 0o644


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # 400 KB of nesting: json's RecursionError was a traceback
        ('{"env": ' + "[" * 200_000 + "]" * 200_000 + "}", "JSON nested too deeply"),
        ('{"hooks": {"Stop": ' + "[" * 2_000 + "]" * 2_000 + "}}", "JSON nested too deeply"),
        ('{"env": "' + "x" * (2 << 20) + '"}', "over its 1,048,576-byte limit; not read"),
    ],
    ids=["400KB-nested", "2000-deep-hooks", "2MB"],
)
def test_deep_or_huge_settings_are_one_line_and_left_unchanged(
    project: Path, text: str, said: str
) -> None:
    path = project / settings.SETTINGS
    path.write_text(text)
    assert said in one_line_error(init_claude(project))
    assert path.read_text() == text


# -- 34.8: init --ci names the folder as one word -------------------------------------------

STUB = '#!/bin/sh\nfor word in "$@"; do printf "%s\\0" "$word"; done >> "$ARGV_LOG"\n'
FOLDERS = [
    "team memory",
    "$(touch PWN)",
    "`touch PWN`; touch PWN",
    "it's here",
    "notes: #1 -- yes",
    'say "$HOME" ${HOME}',
    "mémoire/équipe",
]


def memsite_lines(kind: str, techdocs: bool, text: str) -> list[str]:
    """The shell lines of a written workflow that run memsite, read as the CI reads them."""
    workflow = yaml.safe_load(text)
    if kind == "github":
        steps = [s for job in workflow["jobs"].values() for s in job.get("steps", [])]
        lines = [s["run"] for s in steps if "run" in s]
    else:
        job = workflow["memsite-techdocs" if techdocs else ".memsite"]
        lines = job["script"]
    return [line for line in lines if line.startswith("memsite ")]


@pytest.mark.parametrize("techdocs", [False, True], ids=["site", "techdocs"])
@pytest.mark.parametrize("kind", ["github", "gitlab"])
@pytest.mark.parametrize("folder", FOLDERS)
def test_init_ci_passes_the_folder_to_memsite_as_one_literal_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, techdocs: bool, folder: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    done = CliRunner().invoke(cli, ["init", folder, "--ci", kind, *(["--techdocs"] * techdocs)])
    assert done.exit_code == 0, done.output
    module = recipes if techdocs else workflows
    written = project / (module.GITHUB_PATH if kind == "github" else module.GITLAB_PATH)
    lines = memsite_lines(kind, techdocs, written.read_text("utf-8"))
    assert len(lines) == 2  # check, then build

    stub = tmp_path / "bin" / "memsite"
    stub.parent.mkdir()
    stub.write_text(STUB)
    stub.chmod(0o755)
    runner = tmp_path / "runner"
    runner.mkdir()
    log = tmp_path / "argv"
    env = {
        "PATH": f"{stub.parent}:{os.environ['PATH']}",
        "HOME": str(tmp_path / "home"),
        "ARGV_LOG": str(log),
        "MEMSITE_COMPONENT": "shop-memory",
    }
    for line in lines:
        log.write_bytes(b"")
        subprocess.run(["bash", "-c", line], cwd=runner, env=env, check=True, timeout=30)
        argv = log.read_bytes().decode().split("\0")[:-1]
        assert argv[:2] == ["--root", folder], (line, argv)
        assert argv[2] in ("check", "build")
    assert not list(runner.iterdir()), "the folder's name ran as a command"


@pytest.mark.parametrize("techdocs", [False, True], ids=["site", "techdocs"])
def test_a_folder_holding_an_actions_expression_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, techdocs: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = "${{ secrets.DEPLOY_TOKEN }}"
    done = CliRunner().invoke(cli, ["init", folder, "--ci", "github", *(["--techdocs"] * techdocs)])
    said = one_line_error(done)
    assert "holds '${{', which GitHub Actions reads as an expression" in said
    assert list(tmp_path.iterdir()) == []


def test_an_install_spec_holding_an_actions_expression_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = "memsite @ git+https://x:${{ secrets.TOKEN }}@example.com/memsite"
    done = CliRunner().invoke(cli, ["init", "--ci", "github", "--install", spec])
    assert "holds '${{', which GitHub Actions reads as an expression" in one_line_error(done)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_with_a_newline_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, ["init", "team\nmemory", "--ci", "gitlab"])
    assert "holds U+000A; a CI line cannot name it" in one_line_error(done)
    assert list(tmp_path.iterdir()) == []


def test_the_default_workflow_lines_are_unchanged() -> None:
    _, text = workflows.render_workflow("github")
    assert "      - run: memsite check\n" in text
    assert "      - run: memsite build --strict --site-dir site\n" in text
    assert "          path: .memsite/\n" in text
