"""Entries that name the code they govern (issue 14): ``--path`` and ``--commit`` on the
writes, ``memsite why PATH``, recall before an edit (``PreToolUse``), prime and check.

The repository is a real git repository made in ``tmp_path``; the memory tree lives in it as
``memory/``, as in a project.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.store.check import check_tree
from memsite.store.tree import init_tree


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with some code and a memory tree at its top."""
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    project = tmp_path / "project"
    (project / "auth").mkdir(parents=True)
    (project / "auth" / "tokens.py").write_text("SECRET_LIFETIME = 900\n")
    (project / "auth" / "login.py").write_text("def login(): ...\n")
    (project / "README.md").write_text("project\n")
    git(project, "init", "-q")
    git(project, "config", "user.email", "t@example.invalid")
    git(project, "config", "user.name", "t")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "code")
    init_tree(project / "memory")
    return project


@pytest.fixture
def run(repo: Path):
    runner = CliRunner()

    def invoke(*args: str, stdin: str | None = None):
        return runner.invoke(cli, ["--root", str(repo / "memory"), *args], input=stdin)

    return invoke


def written(run, *args: str) -> str:
    result = run(*args)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def one_line_error(result) -> str:
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_decisions_name_file_folder_glob_and_commit_and_why_orders_them(run, repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    glob = written(
        run, "decide", "All auth code is typed", "--why", "mypy strict", "--path", "auth/**",
        "--at", "2026-06-01T10:00:00",
    )  # fmt: skip
    folder = written(
        run, "decide", "Auth owns its folder", "--why", "one package", "--path", "auth/",
        "--at", "2026-06-02T10:00:00",
    )  # fmt: skip
    old = written(
        run, "decide", "Tokens live 60 minutes", "--why", "fewer refreshes",
        "--path", "./auth/../auth/tokens.py", "--commit", "HEAD", "--at", "2026-06-03T10:00:00",
    )  # fmt: skip
    new = written(
        run, "decide", "Tokens live 15 minutes", "--why", "a leaked token dies sooner",
        "--path", str(repo / "auth" / "tokens.py"), "--supersedes", old,
        "--at", "2026-06-04T10:00:00",
    )  # fmt: skip
    learned = written(
        run, "learn", "Token tests need a fixed clock", "--category", "testing",
        "--path", "auth/tokens.py", "--at", "2026-06-05T10:00:00",
    )  # fmt: skip
    written(
        run, "log", "read auth/tokens.py while debugging", "--at", "2026-06-05T11:00:00",
    )  # fmt: skip
    written(run, "decide", "Unrelated", "--why", "w", "--path", "README.md")

    text = (repo / "memory" / "cold" / "decisions.md").read_text()
    assert f"- **Paths:** auth/tokens.py\n- **Commit:** {head}\n" in text
    assert "- **Paths:** auth/**\n" in text and "- **Paths:** auth/\n" in text
    entries = {e.id: e for e in Memory(repo / "memory").entries()}
    assert entries[old].paths == ["auth/tokens.py"] and entries[old].commit == head
    assert entries[new].paths == ["auth/tokens.py"] and entries[new].commit is None

    result = run("why", "auth/tokens.py")
    assert result.exit_code == 0, result.output
    headings = [line for line in result.stdout.splitlines() if line.startswith("### ")]
    assert [h.split(" › ", 1)[1] for h in headings[:5]] == [
        "Token tests need a fixed clock",  # the file itself, current, newest first
        "Tokens live 15 minutes",  # the file itself, current
        "Auth owns its folder",  # the folder above it
        "All auth code is typed",  # a glob
        "Tokens live 60 minutes",  # superseded: after every current one
    ]
    assert headings[5].endswith("— read auth/tokens.py while debugging")  # mentions it
    assert len(headings) == 6
    lines = result.stdout.splitlines()
    superseded = lines.index(headings[4])
    assert lines[superseded + 1] == "Governs this file."
    assert lines[superseded + 2] == (
        f"**Superseded** by Tokens live 15 minutes ({new}) on 2026-06-04; do not act on this one."
    )
    assert "Governs the folder `auth/`." in lines and "Governs `auth/**`." in lines
    assert lines[lines.index(headings[5]) + 1] == "Mentions this path."
    assert "Unrelated" not in result.stdout

    as_json = json.loads(written(run, "why", "auth/tokens.py", "--json"))
    items = as_json["items"]
    search_fields = set(json.loads(written(run, "search", "tokens", "--json", "--lexical"))[0])
    assert search_fields <= set(items[0])
    assert [(i["id"], i["match"], i["pattern"], i["status"]) for i in items[:5]] == [
        (learned, "file", "auth/tokens.py", "current"),
        (new, "file", "auth/tokens.py", "current"),
        (folder, "folder", "auth/", "current"),
        (glob, "glob", "auth/**", "current"),
        (old, "file", "auth/tokens.py", "superseded"),
    ]
    assert items[4]["superseded_by"]["id"] == new
    assert items[5]["match"] == "mentions"

    small = json.loads(written(run, "why", "auth/tokens.py", "--json", "--budget", "150"))
    assert 0 < len(small["items"]) < len(items) and small["left_out"] == len(items) - len(
        small["items"]
    )
    assert small["tokens"] <= 150 and small["items"][0]["id"] == learned


def test_a_path_outside_the_repository_and_a_bad_commit_are_one_line_errors(
    run, repo: Path
) -> None:
    decisions = repo / "memory" / "cold" / "decisions.md"
    before = decisions.read_bytes()
    assert one_line_error(run("decide", "X", "--why", "w", "--path", "../elsewhere.py")) == (
        f"Error: --path '../elsewhere.py' is outside the repository {repo}"
    )
    assert one_line_error(run("decide", "X", "--why", "w", "--path", "/etc/passwd")) == (
        f"Error: --path '/etc/passwd' is outside the repository {repo}"
    )
    assert one_line_error(run("learn", "X", "--category", "c", "--commit", "no-such-ref")) == (
        f"Error: --commit 'no-such-ref' is not a commit of the repository {repo}"
    )
    assert one_line_error(run("log", "X", "--commit", "--help")).startswith("Error: --commit")
    assert one_line_error(run("decide", "X", "--why", "w", "--path", "a,b")) == (
        "Error: --path 'a,b' contains a comma; give each path its own --path"
    )
    assert decisions.read_bytes() == before
    assert one_line_error(run("why", "../outside.py")) == (
        f"Error: PATH '../outside.py' is outside the repository {repo}"
    )


def test_paths_are_normalised_and_a_commit_outside_git_is_kept_as_given(tmp_path: Path) -> None:
    root = tmp_path / "plain" / "memory"
    init_tree(root)
    memory = Memory(root, author="")
    entry_id = memory.decide(
        "Layout", why="w", paths=["./src/a/../b.py", "src//lib/", str(tmp_path / "plain" / "x.py")],
        commit="v1.2.0",
    )  # fmt: skip
    entry = memory.entry(entry_id)
    assert entry.paths == ["src/b.py", "src/lib/", "x.py"]
    assert entry.commit == "v1.2.0"
    assert memory.why("src/lib/deep/file.py").items[0].how == "folder"
    assert memory.why("./src/./b.py").items[0].how == "file"


def test_paths_from_session_takes_the_files_touched_since_the_previous_decision(
    repo: Path,
) -> None:
    memory = Memory(repo / "memory", author="")
    memory.start_session("Tokens")
    memory.progress("editing", files=["auth/tokens.py", "../outside.py"])
    plain = memory.decide("Nothing taken silently", why="w")
    assert memory.entry(plain).paths == []
    memory.progress("more", files=["auth/login.py"])
    first = memory.decide("Taken from the session", why="w", paths_from_session=True)
    assert memory.entry(first).paths == ["auth/login.py"]  # only since the previous decision
    memory.progress("again", files=["README.md"])
    second = memory.decide("And again", why="w", paths=["auth/"], paths_from_session=True)
    assert memory.entry(second).paths == ["auth/", "README.md"]
    memory.notices.clear()
    third = memory.decide("Nothing new", why="w", paths_from_session=True)
    assert memory.entry(third).paths == []
    assert memory.notices == ["--paths-from-session: no files touched since the previous decision"]
    memory.end_session()
    runner = CliRunner()
    result = runner.invoke(
        cli, ["--root", str(repo / "memory"), "decide", "X", "--why", "w", "--paths-from-session"]
    )
    assert one_line_error(result).startswith("Error: --paths-from-session: no live session")


def hook_event(path: str, tool: str = "Edit") -> dict:
    """A ``PreToolUse`` event as Claude Code's hooks reference gives it."""
    field = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return {
        "session_id": "8f2c5b1e-claude",
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": "/home/you/project",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {field: path, "old_string": "a", "new_string": "b"},
        "tool_use_id": "toolu_01",
    }


def test_pre_tool_use_gives_the_governing_decision_once_per_file_and_never_blocks(
    run, repo: Path
) -> None:
    decided = written(run, "decide", "Tokens live 15 minutes", "--why", "leaks", "--path", "auth/")
    written(run, "session", "start", "Refactor auth")

    def hook(payload: dict):
        result = run("hook", stdin=json.dumps(payload))
        assert result.exit_code == 0, result.output
        return result.stdout

    first = json.loads(hook(hook_event(str(repo / "auth" / "tokens.py"))))
    assert set(first["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert first["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    context = first["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("## Memory about `auth/tokens.py` (1 item)")
    assert f"cold/decisions.md#{decided}" in context and "Governs the folder `auth/`." in context
    assert hook(hook_event(str(repo / "auth" / "tokens.py"), "MultiEdit")) == ""  # once
    assert hook(hook_event(str(repo / "README.md"), "Write")) == ""  # nothing governs it
    assert hook(hook_event(str(repo / "auth" / "login.py"), "Read")) == ""  # not an edit
    assert hook(hook_event(str(repo / "auth" / "nb.ipynb"), "NotebookEdit")) != ""
    session = json.loads((repo / "memory" / "hot" / "context.json").read_text())
    assert session["recalled"] == ["auth/tokens.py", "auth/nb.ipynb"]
    written(run, "session", "end")
    written(run, "session", "start", "Next")
    assert hook(hook_event(str(repo / "auth" / "tokens.py"))) != ""  # a new session: again
    assert hook(hook_event(str(repo / "auth" / "tokens.py"))) == ""
    compacting = {"hook_event_name": "PreCompact", "trigger": "auto", "session_id": "s"}
    assert hook(compacting) == ""
    # compaction rewrote the agent's context: what it was given before is gone, so again
    assert hook(hook_event(str(repo / "auth" / "tokens.py"))) != ""


def test_prime_lists_the_decisions_governing_the_session_files(run, repo: Path) -> None:
    decided = written(run, "decide", "Tokens live 15 minutes", "--why", "leaks", "--path", "auth/")
    written(run, "decide", "Readme style", "--why", "w", "--path", "README.md")
    written(run, "session", "start", "Refactor auth")
    written(run, "progress", "editing", "--file", "auth/tokens.py")
    primed = written(run, "prime", "--lexical")
    section = primed.split("## Decisions governing this session's files\n\n", 1)[1]
    assert section.split("\n\n", 1)[0] == (
        f"- Tokens live 15 minutes (`{decided}`): governs `auth/tokens.py`"
    )


def test_check_warns_when_a_current_decision_names_a_path_that_is_gone(run, repo: Path) -> None:
    gone = written(run, "decide", "Login lives here", "--why", "w", "--path", "auth/login.py")
    old = written(run, "decide", "Old rule", "--why", "w", "--path", "auth/old.py")
    written(run, "decide", "New rule", "--why", "w", "--path", "auth/**", "--supersedes", old)
    elsewhere = "0" * 40  # a commit of another repository: its paths are not this one's
    written(run, "decide", "Other repo", "--why", "w", "--path", "x/y.py", "--commit", "HEAD")
    text = (repo / "memory" / "cold" / "decisions.md").read_text()
    head = git(repo, "rev-parse", "HEAD")
    (repo / "memory" / "cold" / "decisions.md").write_text(text.replace(head, elsewhere))
    assert run("check").stdout == ""
    (repo / "auth" / "login.py").unlink()
    result = run("check")
    assert result.exit_code == 0  # a warning, not an error
    line = next(p for p in check_tree(repo / "memory") if p.severity == "warning")
    assert result.stdout.splitlines() == [str(line)]
    assert str(line) == (
        f"cold/decisions.md:{Memory(repo / 'memory').entry(gone).line}: warning: path "
        "'auth/login.py' of this decision no longer exists in the working tree; the decision "
        "may need a successor (--supersedes)"
    )


def test_the_bundled_sample_names_code_without_check_warnings(sample: Path) -> None:
    named = [e for e in Memory(sample).entries("decision") if e.paths]
    assert len(named) >= 5 and all(e.commit for e in named)
    assert check_tree(sample) == []


@pytest.mark.parametrize(
    "args",
    [
        ("why", ""),
        ("decide", "X", "--why", "w", "--commit", "nope"),
        ("decide", "X", "--why", "w", "--supersedes", "nope"),
        ("learn", "X", "--category", "c", "--commit", "nope"),
        ("decide", "X", "--why", "w", "--path", ""),
        ("check", "--since", "nope"),
    ],
)
def test_a_value_that_cannot_be_used_is_a_usage_error(run, args: tuple[str, ...]) -> None:
    # Issue 39.3: `why ""`, `--commit nope` and `--supersedes nope` exited 1 while every other
    # empty argument and `check --since nope` exited 2, as docs/cli.md says usage errors do
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert one_line_error(result).startswith("Error: ")


def test_search_governs_filters_to_the_entries_that_govern_a_code_path(sample: Path) -> None:
    # Issue 39.7: search "path:src/shop/cart.py" found nothing although decisions govern the
    # file (path: names memory files); governs:PATH uses the matcher why uses, globs included
    memory = Memory(sample)
    wanted = "services/auth/store/postgres.py"
    ids = {h.id for h in memory.search(f"governs:{wanted}", limit=20, lexical=True)}
    why = memory.why(wanted, budget=4000)
    governing = {item.hit.record or item.hit.id for item in why.items if item.governs}
    assert ids and ids == governing
    assert "2026-11-05-move-the-session-store-from-mongodb-to-postgres" in ids
    narrowed = memory.search(f"mongodb governs:{wanted}", limit=20, lexical=True)
    assert narrowed and {h.id for h in narrowed} <= ids
    globbed = {h.id for h in memory.search("governs:services/auth/store/*.py", lexical=True)}
    assert "2026-11-05-move-the-session-store-from-mongodb-to-postgres" in globbed
    assert memory.search("governs:nothing/here.py", lexical=True) == []
