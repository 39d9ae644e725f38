"""A newcomer's first hour: the paper cuts of issue 13, each pinned as a person meets it."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner
from conftest import NOW, Clock

from memsite import BadValue, InvalidInput, Memory
from memsite.cli import cli
from memsite.site import workflows
from memsite.store.check import check_tree


@pytest.fixture
def run(root: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(cli, ["--root", str(root), *args], input=input)

    return invoke


def stderr_lines(result) -> list[str]:  # type: ignore[no-untyped-def]
    assert "Traceback" not in result.output
    return [line for line in result.stderr.splitlines() if line.strip()]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


# -- the CI workflow installs memsite from a spec that works ------------------------------


def _install_step(kind: str, text: str) -> str:
    workflow = yaml.safe_load(text)
    if kind == "github":
        steps = workflow["jobs"]["build"]["steps"]
        (command,) = [s["run"] for s in steps if "pip install" in s.get("run", "")]
        return command
    (command,) = [c for c in workflow[".memsite"]["before_script"] if "pip install" in c]
    return command


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_init_ci_install_writes_the_given_spec_into_a_workflow_that_parses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = "memsite @ git+https://example.com/team/memsite@0123abc"
    result = CliRunner().invoke(cli, ["init", "--ci", kind, "--install", spec])
    assert result.exit_code == 0, result.output
    command = "python -m pip install 'memsite @ git+https://example.com/team/memsite@0123abc'"
    assert f"CI installs memsite with: {command}" in result.stdout
    path, _ = workflows.render_workflow(kind)
    text = (tmp_path / path).read_text("utf-8")
    assert _install_step(kind, text) == command
    # the comment right above says how to change it
    assert f"`memsite init --ci {kind} --install SPEC` writes it for you" in text
    assert "pip install memsite\n" not in text


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_init_ci_without_install_never_installs_a_package_that_is_not_on_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.chdir(tmp_path)  # outside the checkout this memsite runs from
    result = CliRunner().invoke(cli, ["init", "--ci", kind])
    assert result.exit_code == 0, result.output
    path, _ = workflows.render_workflow(kind)
    text = (tmp_path / path).read_text("utf-8")
    command = _install_step(kind, text)
    assert command != "python -m pip install memsite"
    assert command == f"python -m pip install {workflows.PLACEHOLDER.spec}"
    assert "could not tell where it was installed from" in text
    assert f"replace {workflows.PLACEHOLDER.spec} with a pip requirement" in result.stdout


def test_the_default_install_spec_follows_how_memsite_was_installed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tools" / "memsite").mkdir(parents=True)
    vcs = {
        "url": "https://github.com/team/memsite.git",
        "vcs_info": {"vcs": "git", "commit_id": "0123abc", "requested_revision": "main"},
    }
    assert (
        workflows.install_spec(vcs, repo).spec == "git+https://github.com/team/memsite.git@0123abc"
    )
    inside = {"url": (repo / "tools" / "memsite").as_uri(), "dir_info": {"editable": True}}
    assert workflows.install_spec(inside, repo).spec == "./tools/memsite"
    wheel = {"url": (repo / "w" / "memsite-0.1.0-py3-none-any.whl").as_uri(), "archive_info": {}}
    assert workflows.install_spec(wheel, repo).spec == "./w/memsite-0.1.0-py3-none-any.whl"
    outside = {"url": (tmp_path / "elsewhere").as_uri(), "dir_info": {}}
    assert workflows.install_spec(outside, repo) == workflows.PLACEHOLDER
    assert (
        workflows.install_spec(None, repo) == workflows.PLACEHOLDER
    )  # from an index: which one is unknown


def test_install_without_ci_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "m"), "--install", "x"])
    assert result.exit_code == 2
    assert stderr_lines(result) == [
        "Error: --install is for the CI workflow: give --ci github or gitlab too"
    ]
    assert not (tmp_path / "m").exists()


# -- empty queries ----------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "*", "?!", '""'])
def test_an_empty_or_punctuation_query_is_a_usage_error(run, query: str) -> None:
    result = run("search", query)
    assert result.exit_code == 2
    (line,) = stderr_lines(result)
    assert line.startswith(f"Error: query {query!r} has nothing to search for")
    assert 'e.g. "why postgres" or tag:security' in line


def test_a_query_of_filters_alone_still_searches(run, memory: Memory) -> None:
    memory.decide("Use Postgres", why="durability", tags=["db"])
    result = run("search", "tag:db")
    assert result.exit_code == 0 and "Use Postgres" in result.stdout


@pytest.mark.parametrize("prompt", ["", "  \n"])
def test_recall_of_an_empty_prompt_is_silent_and_succeeds(run, memory: Memory, prompt) -> None:
    memory.decide("Use Postgres", why="durability")
    result = run("recall", "-", input=prompt)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert memory.recall(prompt).hits == ()


# -- one style for bad option values -----------------------------------------------------

BAD_VALUES = [
    (("search", "x", "--since", "11/20/2026"), "--since", "e.g. 2026-11-01"),
    (("search", "x", "--until", "2026-02-30"), "--until", "e.g. 2026-11-01"),
    (("decide", "x", "--why", "y", "--at", "2026/11/20"), "--at", "e.g. 2026-06-08T14:30:00"),
    (("session", "start", "t", "--at", "noon"), "--at", "e.g. 2026-06-08T14:30:00"),
    (("search", "x", "--limit", "0"), "--limit", "e.g. 10"),
    (("recall", "x", "--budget", "lots"), "--budget", "e.g. 1500"),
    (("related", "x", "--limit", "-1"), "--limit", "e.g. 5"),
    (("eval", "q.jsonl", "--min-recall", "2"), "--min-recall", "e.g. 0.7"),
    (("log", "x", "--detail", "novalue"), "--detail", "e.g. command=pytest"),
    (("prune", "--keep-days", "-1"), "--keep-days", "e.g. 7"),
    (("serve", "--dev-addr", "localhost"), "--dev-addr", "e.g. 127.0.0.1:8000"),
]


@pytest.mark.parametrize(("args", "option", "example"), BAD_VALUES, ids=[b[1] for b in BAD_VALUES])
def test_every_bad_option_value_is_one_usage_line_naming_it_once(
    run, args: tuple[str, ...], option: str, example: str
) -> None:
    result = run(*args)
    assert result.exit_code == 2
    (line,) = stderr_lines(result)
    assert line.startswith(f"Error: Invalid value for '{option}': ")
    assert line.count(option) == 1, line
    assert line.endswith(example)


def test_the_at_message_says_what_is_wrong_once(run) -> None:
    result = run("decide", "x", "--why", "y", "--at", "2026/11/20")
    assert stderr_lines(result) == [
        "Error: Invalid value for '--at': '2026/11/20': not an ISO-8601 date or date-time; "
        "e.g. 2026-06-08T14:30:00"
    ]


# -- dates in the future -----------------------------------------------------------------


def test_an_entry_dated_more_than_a_day_ahead_is_refused(memory: Memory, root: Path) -> None:
    before = (root / "cold" / "decisions.md").read_bytes()
    with pytest.raises(InvalidInput, match="more than a day ahead of the clock") as err:
        memory.decide("Typo in the year", why="x", at="2030-01-01")
    # the Python API names its keyword, not the command line's flag (issue 25.5)
    assert str(err.value).endswith("pass allow_future=True") and "--" not in str(err.value)
    assert (root / "cold" / "decisions.md").read_bytes() == before
    # within a day is fine (time zones, a skewed clock)
    memory.log("tomorrow morning", at=NOW + dt.timedelta(hours=23))


def test_allow_future_accepts_a_date_ahead(root: Path, clock: Clock) -> None:
    memory = Memory(root, author="", clock=clock, allow_future=True)
    assert memory.decide("Planned", why="x", at="2030-01-01") == "2030-01-01-planned"


def test_the_cli_refuses_a_future_at_in_one_line_and_allow_future_overrides(run) -> None:
    refused = run("decide", "Planned", "--why", "x", "--at", "2999-01-01")
    assert refused.exit_code == 2
    (line,) = stderr_lines(refused)
    assert "--at 2999-01-01T12:00:00 is more than a day ahead of the clock" in line
    assert "pass --allow-future" in line
    allowed = run("decide", "Planned", "--why", "x", "--at", "2999-01-01", "--allow-future")
    assert (allowed.exit_code, allowed.stdout) == (0, "2999-01-01-planned\n")


# -- dates before 1970, empty titles (issue 25.8) -----------------------------------------


@pytest.mark.parametrize("at", ["0001-01-01", "1969-12-31T23:59:59", dt.date(1, 1, 1)])
def test_an_entry_dated_before_1970_is_refused_unless_allow_past(
    memory: Memory, root: Path, clock: Clock, at: object
) -> None:
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    for write in (
        lambda m: m.decide("Year one", why="x", at=at),
        lambda m: m.log("Year one", at=at),
        lambda m: m.start_session("Year one", at=at),
    ):
        with pytest.raises(BadValue, match="is before 1970-01-01") as err:
            write(memory)
        assert str(err.value).endswith("pass allow_past=True") and "--" not in str(err.value)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert memory.log("Epoch", at="1970-01-01T00:00:00").startswith("1970-01-01-epoch")
    allowed = Memory(root, author="", clock=clock, allow_past=True)
    assert allowed.decide("Year one", why="x", at=at).endswith("-year-one")


@pytest.mark.parametrize(
    "command",
    [
        ["decide", "Year one", "--why", "x"],
        ["learn", "Year one", "--category", "c"],
        ["log", "Year one"],
        ["note", "Year one"],
        ["session", "start", "Year one"],
    ],
)
def test_the_cli_refuses_year_one_in_one_usage_line_naming_allow_past(
    run, root: Path, command: list[str]
) -> None:
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    refused = run(*command, "--at", "0001-01-01")
    assert refused.exit_code == 2
    assert stderr_lines(refused) == [
        "Error: --at 0001-01-01T12:00:00 is before 1970-01-01; if that is really meant, "
        "pass --allow-past"
    ]
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert run(*command, "--at", "0001-01-01", "--allow-past").exit_code == 0


def test_a_refused_year_one_leaves_prune_nothing_to_archive_under_0001(run, root: Path) -> None:
    assert run("log", "Typo", "--at", "0001-01-01").exit_code == 2
    assert run("prune", "--keep-days", "0").exit_code == 0
    assert not (root / "warm" / "archive" / "0001").exists()


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["decide", "", "--why", "x"], "Error: title is empty"),
        (["decide", "  ", "--why", "x"], "Error: title is empty"),
        (["decide", "Use Postgres", "--why", ""], "Error: --why is empty: say why"),
        (["decide", "Use Postgres", "--why", " \n "], "Error: --why is empty: say why"),
        (["learn", "", "--category", "testing"], "Error: title is empty"),
        (["learn", "Mock less", "--category", ""], "Error: --category is empty"),
        (["log", ""], "Error: action is empty"),
        (["note", ""], "Error: title is empty"),
    ],
)
def test_an_empty_title_or_why_is_a_usage_error(
    run, root: Path, command: list[str], said: str
) -> None:
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    refused = run(*command)
    assert (refused.exit_code, stderr_lines(refused)) == (2, [said])
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


# -- check: text after the last entry, a lost id line -------------------------------------


def test_a_stray_line_after_the_last_entry_is_named_with_its_line_and_fix(
    memory: Memory, root: Path
) -> None:
    memory.decide("First", why="a")
    path = root / "cold" / "decisions.md"
    path.write_text(path.read_text() + "stray line\n")
    (problem,) = [str(p) for p in check_tree(root)]
    assert "None" not in problem
    assert problem == (
        "cold/decisions.md:7: error: text after the id line of entry '2026-06-08-first' "
        "(line 6): an entry ends with its id line; move the text above that line, or give it "
        "an entry heading of its own"
    )
    assert [e.id for e in memory.entries("decision")] == ["2026-06-08-first"]


def test_a_deleted_id_line_of_an_entry_memsite_wrote_is_an_error(
    memory: Memory, root: Path
) -> None:
    memory.decide("First", why="a")
    memory.decide("Second", why="b")
    path = root / "cold" / "decisions.md"
    path.write_text(path.read_text().replace("<!-- id: 2026-06-08-first -->\n", ""))
    assert [str(p) for p in check_tree(root)] == [
        "cold/decisions.md:3: error: entry '2026-06-08-first' has lost its id line (its pointer "
        "at warm/2026-06-08.md:3 names it); add '<!-- id: 2026-06-08-first -->' as its last "
        "line, after line 4"
    ]


def test_a_deleted_id_line_of_memsites_own_activity_is_an_error(memory: Memory, root: Path) -> None:
    memory.learn("Pin the clock", category="testing")
    path = root / "warm" / "2026-06-08.md"
    path.write_text(path.read_text().replace("<!-- id: 2026-06-08-learning-pin-the-clock -->", ""))
    (problem,) = [str(p) for p in check_tree(root)]
    assert problem.startswith(
        "warm/2026-06-08.md:3: error: entry '2026-06-08-learning-pin-the-clock' has lost its "
        "id line (memsite writes the 'learning' activities); add "
        "'<!-- id: 2026-06-08-learning-pin-the-clock -->' as its last line"
    )


def test_hand_written_entries_without_ids_stay_clean(root: Path, sample: Path) -> None:
    (root / "cold" / "decisions.md").write_text(
        "# Decisions\n\n## 2026-03-01 — By hand\n- **Why:** no id needed\n\n"
        "## 2026-03-02 — Also by hand\nA body.\n"
    )
    (root / "warm" / "2026-03-01.md").write_text(
        "# 2026-03-01\n\n### 10:00:00 — ran the tests by hand\n"
    )
    assert check_tree(root) == []
    assert check_tree(sample) == []


# -- a backfilled decision is not this session's -----------------------------------------


def test_session_show_leaves_out_decisions_dated_before_the_session(run) -> None:
    run("session", "start", "Auth", "--id", "s1", "--at", "2026-06-08T09:00:00")
    run("decide", "Old call", "--why", "history", "--at", "2026-06-01T10:00:00")
    run("decide", "New call", "--why", "now", "--at", "2026-06-08T10:00:00")
    shown = run("session", "show").stdout
    assert "## Decisions this session\n\n- 2026-06-08-new-call\n" in shown
    assert "old-call" not in shown
    assert '"updated": "2026-06-08T10:00:00"' in run("session", "show", "--json").stdout


# -- output polish -----------------------------------------------------------------------


def test_pending_add_and_done_print_one_shape(run) -> None:
    run("session", "start", "t", "--at", "2026-06-08T09:00:00")
    assert run("pending", "add", "write docs").stdout == "1 pending\n- [ ] write docs\n"
    added = run("pending", "add", "write tests").stdout
    assert added == "2 pending\n- [ ] write docs\n- [ ] write tests\n"
    several = run("pending", "done", "write")
    assert stderr_lines(several) == [
        "Error: 'write' matches several pending actions (pending: write docs; write tests)"
    ]
    assert run("pending", "done", "docs").stdout == "1 pending\n- [ ] write tests\n"


@pytest.mark.parametrize("command", ["search", "related"])
def test_limit_has_help(command: str) -> None:
    found = cli.get_command(click.Context(cli), command)
    assert found is not None
    (limit,) = [p for p in found.params if p.name == "limit"]
    assert limit.help  # type: ignore[attr-defined]


def test_matches_are_styled_on_a_terminal_and_plain_in_a_pipe(
    run, memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.decide("Use Postgres", why="durability of sessions")
    piped = run("search", "durability").stdout
    assert "**Why:** **durability** of sessions" in piped
    monkeypatch.setattr("memsite.cli.recall.on_terminal", lambda stream="stderr": True)
    styled = (
        CliRunner()
        .invoke(cli, ["--root", str(memory.root), "search", "durability"], color=True)
        .stdout
    )
    assert "**Why:** \x1b[33m\x1b[1mdurability\x1b[0m of sessions" in styled
    assert "**durability**" not in styled


# -- first use and long work say what they do ---------------------------------------------


def test_the_first_search_says_it_builds_the_index(run, memory: Memory) -> None:
    memory.decide("Use Postgres", why="durability")
    result = run("search", "postgres")
    assert result.exit_code == 0
    assert stderr_lines(result) == ["memsite: building the search index (first use)"]
    assert stderr_lines(run("search", "postgres")) == []


def test_the_index_build_reports_progress_per_file(root: Path, memory: Memory) -> None:
    memory.decide("Use Postgres", why="durability")
    memory.log("ran tests")
    seen: list[tuple[int, int]] = []
    Memory(root, on_progress=lambda done, total: seen.append((done, total))).index()
    files = len(list(root.rglob("*.md"))) - 1  # every markdown file but the persona
    assert seen == [(done, files) for done in range(1, files + 1)]


def test_progress_shows_on_a_terminal_after_a_second_and_is_wiped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memsite.cli import progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "EVERY", 0.0)
    shown = progress.Progress("indexing files", shown=True)
    shown(1, 3)
    shown(2, 3)
    shown(3, 3)
    assert capsys.readouterr().err == (
        "\rindexing files: 1/3\x1b[K\rindexing files: 2/3\x1b[K\r\x1b[K"
    )
    quiet = progress.Progress("indexing files", shown=False)
    quiet(1, 3)
    assert capsys.readouterr().err == ""


def test_quiet_and_pipes_show_no_progress(run, memory: Memory) -> None:
    memory.decide("Use Postgres", why="durability")
    result = (
        run("--quiet", "index")
        if False
        else CliRunner().invoke(cli, ["--quiet", "--root", str(memory.root), "index"])
    )
    assert result.exit_code == 0 and "\r" not in result.stderr


# -- memsite note --------------------------------------------------------------------------


def test_note_creates_a_note_from_body_and_never_overwrites(run, root: Path) -> None:
    made = run("note", "Runbook: deploys", "--body", "-", "--at", "2026-06-08", input="## Steps\n")
    assert (made.exit_code, made.stdout) == (0, f"{root / 'notes' / 'runbook-deploys.md'}\n")
    path = root / "notes" / "runbook-deploys.md"
    assert path.read_text() == "# Runbook: deploys\n\nDate: 2026-06-08\n\n## Steps\n"
    (entry,) = Memory(root).entries("note")
    assert (entry.title, entry.date, entry.id) == (
        "Runbook: deploys",
        dt.date(2026, 6, 8),
        "note-notes-runbook-deploys",
    )
    again = run("note", "Runbook: deploys", "--body", "other")
    assert again.exit_code == 1
    assert stderr_lines(again) == [
        f"Error: {path} already exists; give the note another title, or edit it"
    ]
    assert path.read_text().endswith("## Steps\n")


def test_note_redacts_and_limits_like_an_entry(run, root: Path) -> None:
    run("note", "Keys", "--body", "token ghp_" + "a" * 36, "--at", "2026-06-08")
    assert "[redacted: github token]" in (root / "notes" / "keys.md").read_text()
    big = run("note", "Big", "--body", "-", input="x" * (1024 * 1024 + 1))
    assert big.exit_code == 1 and "the limit is 1,048,576 bytes" in big.stderr
    assert not (root / "notes" / "big.md").exists()


def test_readme_mentions_notes_and_pending_done() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert "memsite note " in readme and "memsite pending done " in readme


# -- housekeeping --------------------------------------------------------------------------


def test_init_appends_site_and_cache_to_the_repositorys_gitignore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("node_modules/\nsite")  # no final newline
    monkeypatch.chdir(tmp_path)
    said = CliRunner().invoke(cli, ["init"]).stdout
    assert "added .memsite/ to .gitignore" in said
    assert (tmp_path / ".gitignore").read_text() == (
        "node_modules/\nsite\n\n# built by memsite, not memory\n.memsite/\n"
    )
    CliRunner().invoke(cli, ["init"])
    assert (tmp_path / ".gitignore").read_text().count(".memsite/") == 1


def test_init_outside_git_writes_no_repository_gitignore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert CliRunner().invoke(cli, ["init"]).exit_code == 0
    assert not (tmp_path / ".gitignore").exists()


# -- the site: progress while pages are written, serve stopped by SIGTERM -----------------


def test_a_site_build_reports_pages_written(
    tmp_path: Path, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memsite.site import builder

    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    monkeypatch.chdir(tmp_path)
    seen: list[tuple[int, int]] = []
    builder.build(sample, site_dir=tmp_path / "site", progress=lambda d, t: seen.append((d, t)))
    total = seen[-1][1]
    assert total > 20 and seen[-1] == (total, total)
    assert [done for done, _ in seen[:-1]] == list(range(1, total + 1))


def test_serve_stopped_with_sigterm_removes_its_temporary_folders(
    tmp_path: Path, sample: Path
) -> None:
    import os
    import signal
    import socket
    import sys
    import threading

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "NO_MKDOCS_2_WARNING": "1"}
    env.pop("MEMSITE_ROOT", None)
    command = [sys.executable, "-m", "memsite", "--root", str(sample), "serve"]
    with subprocess.Popen(
        [*command, "--dev-addr", f"127.0.0.1:{port}"],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        serving = threading.Event()

        def watch() -> None:
            assert server.stderr is not None
            for line in server.stderr:
                if "Serving on" in line:
                    serving.set()

        reader = threading.Thread(target=watch, daemon=True)
        reader.start()
        try:
            assert serving.wait(60), "serve did not start"
            assert any(p.name.startswith("memsite-config-") for p in temp.iterdir())
            server.send_signal(signal.SIGTERM)
            server.wait(30)
        finally:
            if server.poll() is None:
                server.kill()
        reader.join(10)
    assert list(temp.iterdir()) == []


# -- related entries without noise ----------------------------------------------------------


@pytest.mark.parametrize("lexical", [True, False], ids=["lexical", "default"])
def test_a_one_word_why_gets_no_related_entries_rather_than_noise(
    sample: Path, lexical: bool
) -> None:
    memory = Memory(sample)
    thin = memory.decide("Use tabs", why="speed", at="2026-11-24T10:00:00")
    assert memory.related(thin, lexical=lexical) == []
    # an entry with a topic still has its related ones
    topical = "2026-11-03-hash-new-passwords-with-bcrypt-at-cost-12"
    assert len(memory.related(topical, lexical=lexical)) == 5
    memory.close()


def test_related_entries_share_more_than_a_common_word(sample: Path) -> None:
    memory = Memory(sample)
    # it shares only "use", "instead", "depend" with the entries it used to list last
    related = memory.related("2026-11-04-use-pyjwt-instead-of-python-jose-for-jwts", lexical=True)
    assert [hit.id for hit in related] == [
        "2026-11-04-always-pin-the-accepted-algorithms-when-decoding-a-jwt"
    ]
    memory.close()
