"""The command line, as an agent or a person uses it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.store.check import check_tree

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def run(root: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    runner = CliRunner()

    def invoke(*args: str, input: str | bytes | None = None):
        return runner.invoke(cli, ["--root", str(root), *args], input=input)

    return invoke


def test_init_creates_the_skeleton_and_never_overwrites(tmp_path: Path) -> None:
    runner = CliRunner()
    target = tmp_path / "mem"
    first = runner.invoke(cli, ["init", str(target)])
    assert first.exit_code == 0
    assert "hot/ (the live session) is git-ignored" in first.output
    assert (target / ".gitattributes").read_text().count("merge=union") == 3
    assert "hot/" in (target / ".gitignore").read_text()
    (target / "persona.md").write_text("# Me\n")
    second = runner.invoke(cli, ["init", str(target)])
    assert f"kept    {target / 'persona.md'} (already there)" in second.output
    assert (target / "persona.md").read_text() == "# Me\n"


def test_write_commands_print_the_new_id(run) -> None:
    assert (
        run("decide", "Use Postgres", "--why", "durability", "--at", "2026-06-08T10:00:00").stdout
        == "2026-06-08-use-postgres\n"
    )
    assert (
        run(
            "learn", "Mock the clock", "--category", "testing", "--at", "2026-06-08T10:01:00"
        ).stdout
        == "2026-06-08-mock-the-clock\n"
    )
    result = run(
        "log",
        "ran tests",
        "--detail",
        "cmd=pytest -q",
        "--result",
        "ok",
        "--at",
        "2026-06-08T10:02:00",
    )
    assert result.stdout == "2026-06-08-ran-tests\n"


def test_body_dash_reads_standard_input(run, root: Path) -> None:
    body = "## looks like a heading\n" + "long line " * 20000
    result = run("log", "big body", "--body", "-", "--at", "2026-06-08T10:00:00", input=body)
    assert result.exit_code == 0, result.output
    text = (root / "warm" / "2026-06-08.md").read_text()
    assert "\\## looks like a heading" in text


def one_line_error(result) -> str:
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) >= 1
    return lines[-1]


@pytest.mark.parametrize(
    ("args", "stdin", "expected"),
    [
        (("decide", "", "--why", "x"), None, "Error: title is empty"),
        (
            ("decide", "x", "--why", "y", "--at", "2026-02-30"),
            None,
            "day is out of range for month",
        ),
        (("log", "x", "--body", "-"), "a\x00b", "Error: body contains a NUL byte"),
        (("log", "x", "--body", "-"), b"\xff\xfe", "standard input is not UTF-8"),
        (
            ("log", "x", "--body", "-"),
            "x" * (1024 * 1024 + 1),
            "the limit is 1,048,576 bytes (1 MiB)",
        ),
        (("log", "esc\x1b[31m"), None, "control character (U+001B)"),
        (("learn", "x"), None, "Missing option '--category'"),
        (("decide", "x", "--why", "y", "--supersedes", "nope"), None, "no decision with that id"),
        (("progress", "step"), None, "no active session"),
        (("log", "x", "--detail", "novalue"), None, "is not KEY=VALUE"),
    ],
)
def test_bad_input_gets_one_clear_line_and_nothing_is_written(
    run, root: Path, args, stdin, expected
) -> None:
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    result = run(*args, input=stdin)
    assert expected in one_line_error(result)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot


def test_a_root_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "file.txt"
    path.write_text("x")
    result = CliRunner().invoke(cli, ["--root", str(path), "log", "x"])
    assert (
        one_line_error(result)
        == f"Error: {path}: is a file, not a memory tree (give --root a folder)"
    )


def test_root_from_environment(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSITE_ROOT", str(root))
    assert CliRunner().invoke(cli, ["log", "x", "--at", "2026-06-08T10:00:00"]).exit_code == 0
    assert (root / "warm" / "2026-06-08.md").exists()


def test_secret_redaction_is_reported_on_stderr(run, root: Path) -> None:
    result = run("log", "deploy", "--result", "used ghp_" + "a" * 36, "--at", "2026-06-08T10:00:00")
    assert result.exit_code == 0
    assert (
        result.stderr
        == "memsite: redacted 1 secret(s) in result (github token); pass --allow-secrets to keep them\n"
    )
    assert "[redacted: github token]" in (root / "warm" / "2026-06-08.md").read_text()


def test_session_commands(run) -> None:
    started = run("session", "start", "Refactor auth", "--id", "s1", "--at", "2026-06-08T09:00:00")
    assert started.output.startswith("# Where were we?\n\n**Task:** Refactor auth\n")
    run(
        "progress", "Reading session.py", "--file", "auth/session.py", "--at", "2026-06-08T09:05:00"
    )
    assert run("pending", "add", "write tests").stdout == "1 pending\n- [ ] write tests\n"
    shown = json.loads(run("session", "show", "--json").stdout)
    assert shown["session_id"] == "s1" and shown["current_step"] == "Reading session.py"
    assert shown["files_modified"] == ["auth/session.py"] and shown["pending_actions"] == [
        "write tests"
    ]
    assert set(shown) == {
        "session_id",
        "task",
        "current_step",
        "files_modified",
        "decisions",
        "pending_actions",
        "started",
        "updated",
    }
    markdown = run("session", "show").stdout
    assert "**Current step:** Reading session.py" in markdown and "- [ ] write tests" in markdown
    ended = run("session", "end", "--summary", "done", "--at", "2026-06-08T11:00:00")
    assert ended.stdout == "2026-06-08-session-end-s1\n"
    assert run("session", "show", "--json").stdout == "null\n"


def test_check_is_clean_then_names_problems_with_path_and_line(run, root: Path) -> None:
    run("decide", "A", "--why", "x", "--at", "2026-06-08T10:00:00")
    clean = run("check")
    assert (clean.exit_code, clean.stdout) == (0, "")
    with (root / "cold" / "decisions.md").open("a") as handle:
        handle.write(
            "\n## 2026-02-30 — Impossible\n\n## 2026-06-09 — Dangling\n- **Supersedes:** 2026-01-01-gone\n"
        )
    (root / "warm" / "bad.md").write_bytes(b"# x\n\xff\n")
    result = run("check")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "cold/decisions.md:8: error: invalid date '2026-02-30': day is out of range for month",
        "cold/decisions.md:10: error: supersedes '2026-01-01-gone', which is not a decision id",
        "warm/bad.md:2: error: not valid UTF-8 (byte 0xff); file skipped, re-save it as UTF-8",
    ]


def test_check_reports_the_same_id_written_twice(run, root: Path) -> None:
    run("decide", "A", "--why", "x", "--at", "2026-06-08T10:00:00")
    text = (root / "cold" / "decisions.md").read_text()
    entry = text[text.index("## 2026") :]
    (root / "cold" / "decisions.md").write_text(text + "\n" + entry)
    result = run("check")
    assert result.exit_code == 1
    assert "duplicate id '2026-06-08-a' (also at cold/decisions.md:3)" in result.output


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def test_check_since_refuses_rewritten_history(run, root: Path) -> None:
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    run("decide", "Keep me", "--why", "original reason", "--at", "2026-06-08T10:00:00")
    run("log", "work", "--at", "2026-06-08T10:05:00")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    run("decide", "Appended", "--why", "fine", "--at", "2026-06-08T11:00:00")
    assert run("check", "--since", "HEAD").exit_code == 0
    path = root / "cold" / "decisions.md"
    path.write_text(path.read_text().replace("original reason", "rewritten reason"))
    (root / "warm" / "2026-06-08.md").write_text("# 2026-06-08\n")
    result = run("check", "--since", "HEAD")
    assert result.exit_code == 1
    assert "entry '2026-06-08-keep-me' was changed since HEAD" in result.output
    assert "entry '2026-06-08-work' was removed since HEAD" in result.output
    assert one_line_error(run("check", "--since", "no-such-ref")).startswith(
        "Error: --since 'no-such-ref': no such commit in this repository"
    )


def test_prune_command(run, root: Path) -> None:
    run("log", "old", "--at", "2020-01-01T10:00:00")
    result = run("prune", "--keep-days", "7")
    assert result.stdout == "warm/2020-01-01.md -> warm/archive/2020/2020-01-01.md\n"
    assert (root / "warm/archive/2020/2020-01-01.md").exists()


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    context = click.Context(group)
    for name in group.list_commands(context):  # the top group imports a command's module
        command = group.get_command(context, name)
        assert command is not None, f"{prefix}{name} is listed but not found"
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix}{name} ")
    return found


def test_every_command_has_help_and_is_documented() -> None:
    docs = (REPO / "docs" / "cli.md").read_text()
    for name, command in _commands(cli):
        assert command.help, f"{name} has no help"
        assert re.search(rf"memsite {re.escape(name)}\b", docs), (
            f"memsite {name} is not in docs/cli.md"
        )
        assert CliRunner().invoke(cli, [*name.split(), "--help"]).exit_code == 0


def test_python_dash_m_works(root: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memsite",
            "--root",
            str(root),
            "log",
            "via -m",
            "--at",
            "2026-06-08T10:00:00",
        ],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout) == (0, "2026-06-08-via-m\n")


def test_session_start_reports_and_archives_an_unfinished_session(run) -> None:
    run("session", "start", "First", "--id", "s1", "--at", "2026-06-08T09:00:00")
    run("pending", "add", "carry me")
    run("decide", "Use Postgres", "--why", "durability", "--at", "2026-06-08T09:30:00")
    result = run("session", "start", "Second", "--id", "s2", "--at", "2026-06-08T10:00:00")
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == "Archived unfinished session `s1` (First) as 2026-06-08-session-archived-s1; last step: (none)."
    )
    assert lines[1] == "Carried over 1 pending action(s)."
    assert "- [ ] carry me (carried from `s1`)" in lines
    assert "- 2026-06-08 — Use Postgres (`2026-06-08-use-postgres`)" in lines


def test_init_in_a_git_repo_makes_union_merges_keep_entries_whole(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    runner = CliRunner(env={"MEMSITE_AUTHOR": "claude"})
    root = repo / "memory"
    said = runner.invoke(cli, ["init", str(root)]).stdout
    assert "set git merge.conflictStyle=diff3 in this repository" in said

    def write(*args: str) -> None:
        assert runner.invoke(cli, ["--root", str(root), *args]).exit_code == 0

    write("log", "base", "--at", "2026-06-08T09:00:00")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "other")
    for name, hour in (("other", "11"), ("main", "10")):
        if name == "main":
            git(repo, "checkout", "-q", "main")
        # identical details and results: the lines a plain union merge would share
        write(
            "log",
            f"{name} tests",
            "--detail",
            "cmd=pytest -q",
            "--result",
            "ok",
            "--at",
            f"2026-06-08T{hour}:00:00",
        )
        write(
            "learn", f"{name} learning", "--category", "testing", "--at", f"2026-06-08T{hour}:05:00"
        )
        git(repo, "commit", "-qam", name)
    before = {e.id for e in Memory(root).entries()}
    git(repo, "merge", "-q", "--no-edit", "other")
    entries = Memory(root).entries()
    assert {e.id for e in entries} > before
    by_title = {e.title: e for e in entries}
    for name in ("main", "other"):
        assert by_title[f"{name} tests"].details == {"cmd": "pytest -q"}
        assert by_title[f"{name} tests"].result == "ok"
    assert check_tree(root) == []


def test_the_commands_people_reach_for(run, root: Path) -> None:
    # Issue 39.2: `pending list`, `get ID` and `--json` on check, log, pending and note were
    # "No such command" / "No such option"
    run("session", "start", "Refactor auth")
    assert run("pending", "add", "write the guide").exit_code == 0
    listed = run("pending", "list")
    assert listed.exit_code == 0 and listed.stdout == "1 pending\n- [ ] write the guide\n"
    assert json.loads(run("pending", "list", "--json").stdout) == {"pending": ["write the guide"]}
    done = json.loads(run("pending", "done", "guide", "--json").stdout)
    assert done == {"pending": []}
    logged = json.loads(run("log", "ran the tests", "--json").stdout)
    assert list(logged) == ["id"] and logged["id"].endswith("-ran-the-tests")
    noted = json.loads(run("note", "Runbook", "--body", "steps", "--json").stdout)
    assert noted["citation"] == "notes/runbook.md" and noted["path"].endswith("notes/runbook.md")
    checked = run("check", "--json")
    assert checked.exit_code == 0
    assert json.loads(checked.stdout)["errors"] == 0
    decided = run("decide", "Use Postgres", "--why", "one database").stdout.strip()
    shown = run("get", decided)
    assert shown.exit_code == 0
    assert re.match(r"## \d{4}-\d\d-\d\d — Use Postgres\n", shown.stdout)
    assert "**Why:** one database" in shown.stdout
    assert json.loads(run("get", decided, "--json").stdout)["title"] == "Use Postgres"
    assert run("get", "nope").exit_code == 1


def test_check_json_names_each_problem(run, root: Path) -> None:
    (root / "cold" / "decisions.md").write_text("# Decisions\n\n## not a date — x\n")
    result = run("check", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["errors"] >= 1
    assert {"path", "line", "message", "severity"} <= set(data["problems"][0])


@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (("decide", "x", "--reason", "y"), "--why"),
        (("learn", "x", "--category", "c", "--reason", "y"), "--why"),
        (("log", "x", "--file", "a.py"), "--path"),
        (("check", "--jsn"), "--json"),
    ],
)
def test_a_wrong_option_suggests_the_one_meant(run, args: tuple[str, ...], meant: str) -> None:
    # decide --reason was told "Did you mean '--json'?", check --json "Did you mean '--since'?"
    result = run(*args)
    assert result.exit_code == 2
    assert f"'{meant}'" in one_line_error(result)


def test_session_show_json_fields_are_the_documented_ones(run, root: Path) -> None:
    # Issue 39.7: `session show --json` had fields docs/cli.md did not list
    run("session", "start", "Refactor auth")
    run("checkpoint", "--summary", "half way")
    run("decide", "Use Postgres", "--why", "one database")
    fields = set(json.loads(run("session", "show", "--json").stdout))
    docs = (REPO / "docs" / "cli.md").read_text()
    section = docs[docs.index("### `memsite session show") :]
    section = section[: section.index("\n### ")]
    for name in fields | {"decided_files", "recalled", "carried"}:
        assert re.search(rf"[`\s]{name}[`,]", section), f"{name} is not in docs/cli.md"


def test_the_group_imports_the_module_of_every_command() -> None:
    """Issue 35: the group imports a command's module only when the command is asked for, by
    ``app.COMMANDS``; a command a module registers that the table misses would never be found,
    and one the table sends to the wrong module would not be registered."""
    import importlib
    import pkgutil

    import memsite.cli as package
    from memsite.cli.app import COMMANDS

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"memsite.cli.{info.name}")
    assert sorted(cli.commands) == sorted(COMMANDS)
    for name, module in COMMANDS.items():
        callback = cli.commands[name].callback
        assert callback is not None and callback.__module__ == f"memsite.cli.{module}", name
