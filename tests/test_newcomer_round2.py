"""A newcomer's first hour, round 2 (issue 25, points 1, 3 and 8): installing memsite into
one's own project, `init` advice that holds, and the smaller cuts of the command line."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.search.snippets import clip
from memsite.store.tree import PERSONA_TEMPLATE, init_tree

REPO = Path(__file__).resolve().parent.parent


def memsite(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input)


def git(folder: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    done = subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


# -- 1: install into your own project ------------------------------------------------------


def _documented_pip_lines() -> list[str]:
    """The pip lines of docs/agents.md's "Install into your project", as written."""
    text = (REPO / "docs" / "agents.md").read_text("utf-8")
    section = text.split("\n## Install into your project\n", 1)[1].split("\n## ", 1)[0]
    return [
        line.split("  #", 1)[0].strip()
        for line in section.splitlines()
        if line.startswith("pip install ")
    ]


def test_no_page_tells_to_install_memsite_from_a_package_index() -> None:
    pages = [REPO / "README.md", *(REPO / "docs").glob("*.md")]
    # `memsite[mcp] @ git+URL` names where from; `memsite[mcp]` alone asks an index
    wrong = re.compile(r"pip install (--\S+ )*['\"]?memsite\[\w+(,\w+)*\]['\"]?(?! @)")
    assert [page.name for page in pages if wrong.search(page.read_text("utf-8"))] == []
    # the README's own line is the one docs/agents.md holds
    (from_clone, _) = _documented_pip_lines()
    assert f"`{from_clone}`" in (REPO / "README.md").read_text("utf-8")


def test_the_documented_install_lines_work_from_a_fresh_virtualenv(tmp_path: Path) -> None:
    """Both lines of docs/agents.md, run as written (the clone's path and URL filled in) in a
    new virtualenv, install this project with its mcp extra; memsite then runs from there.
    ``--no-deps`` keeps it fast: the dependencies come from this environment."""
    lines = _documented_pip_lines()
    assert lines == [
        'pip install -e "/path/to/memsite[mcp]"',
        'pip install "memsite[mcp] @ git+<your clone\'s URL>"',
    ]
    if not (REPO / ".git").exists():
        pytest.skip("the git line needs this checkout to be a git repository")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    url = f"file://localhost{REPO}"  # a URL with a host: what pip takes in `name @ URL`
    for number, line in enumerate(lines):
        filled = line.replace("/path/to/memsite", str(REPO)).replace("<your clone's URL>", url)
        argv = shlex.split(filled)
        assert argv[:2] == ["pip", "install"]
        report = tmp_path / f"report-{number}.json"
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            + ["--no-deps", "--report", str(report), *argv[2:]],
            check=True,
            timeout=240,
        )
        (installed,) = json.loads(report.read_text())["install"]
        assert installed["metadata"]["name"] == "memsite"
        assert installed["requested_extras"] == ["mcp"]
        assert "mcp" in installed["metadata"]["provides_extra"]
    # the dependencies, from this environment, after the site-packages of the new one
    purelib = sysconfig.get_paths()["purelib"]
    fresh = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(fresh, "zz-dependencies.pth").write_text(purelib + "\n")
    done = subprocess.run(
        [str(venv / "bin" / "memsite"), "--version"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (0, "memsite, version 0.1.0\n"), done.stderr


# -- 3: init advice that holds ---------------------------------------------------------------


def test_root_given_the_project_above_its_tree_points_at_the_tree(tmp_path: Path) -> None:
    project = tmp_path / "project"
    init_tree(project / "memory")
    done = memsite("--root", str(project), "search", "anything")
    assert done.exit_code == 1
    assert done.output == (
        f"Error: {project} holds a memory tree at {project / 'memory'}: "
        f"pass --root {project / 'memory'}\n"
    )
    # and init there refuses to make a second tree beside it
    again = memsite("init", str(project))
    assert again.exit_code == 2
    assert again.output == (
        f"Error: {project} holds a memory tree at {project / 'memory'}: run 'memsite init "
        f"{project / 'memory'}' (init DIR makes DIR itself the tree)\n"
    )
    assert not (project / "persona.md").exists() and not (project / "hot").exists()


def test_init_says_hot_is_ignored_only_when_git_ignores_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    target = repo / "memory"
    target.mkdir()
    (target / ".gitignore").write_text("*.log\n")  # the project's own, kept by init
    first = memsite("init", str(target))
    assert first.exit_code == 0, first.output
    assert "is git-ignored" not in first.output
    assert (
        f"hot/ (the live session) is NOT git-ignored: add the line hot/ to "
        f"{target / '.gitignore'} to keep live sessions out of git.\n" in first.output
    )
    probe = ["git", "-C", str(repo), "check-ignore", "-q", "memory/hot/context.json"]
    assert subprocess.run(probe, check=False).returncode == 1  # git agrees: not ignored
    (target / ".gitignore").write_text("*.log\nhot/\n")
    second = memsite("init", str(target))
    assert "hot/ (the live session) is git-ignored by " in second.output
    assert f"{target / '.gitignore'}:2" in second.output or "memory/.gitignore:2" in second.output


def test_init_outside_git_reads_the_tree_gitignore(tmp_path: Path) -> None:
    target = tmp_path / "memory"
    target.mkdir()
    (target / ".gitignore").write_text("hot/\n!hot/\n")  # taken back
    said = memsite("init", str(target)).output
    assert "hot/ (the live session) is NOT git-ignored" in said
    fresh = memsite("init", str(tmp_path / "other")).output
    assert f"is git-ignored by {tmp_path / 'other' / '.gitignore'}:3" in fresh


# -- 8: the smaller cuts --------------------------------------------------------------------


def test_check_since_a_bad_revision_names_it_and_what_is_accepted(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_tree(repo / "memory")
    git(repo, "init", "-q")
    done = memsite("--root", str(repo / "memory"), "check", "--since", "nope")
    assert done.exit_code == 2
    assert done.output == (
        "Error: --since 'nope': no such commit in this repository; give a branch, tag, commit "
        "hash or HEAD~N (e.g. --since origin/main)\n"
    )
    outside = tmp_path / "loose" / "memory"
    init_tree(outside)
    done = memsite("--root", str(outside), "check", "--since", "HEAD")
    assert (done.exit_code, done.output) == (
        1,
        f"Error: --since needs git history: {outside} is not in a git work tree\n",
    )


def test_a_failing_summarizer_is_said_on_stderr_and_the_checkpoint_kept(root: Path) -> None:
    memsite("--root", str(root), "session", "start", "Refactor auth")
    done = memsite("--root", str(root), "checkpoint", "--summarizer", "false")
    assert done.exit_code == 0
    assert done.stderr == (
        "memsite: checkpoint: summarizer false exited 1; the built-in summary is used\n"
    )
    written = Memory(root).latest_checkpoint()
    assert written is not None and written.id == done.stdout.strip()
    assert written.summary.startswith("Task: Refactor auth")


def test_serve_on_a_busy_port_names_the_address_and_dev_addr(root: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        address = f"127.0.0.1:{busy.getsockname()[1]}"
        done = memsite("--root", str(root), "serve", "--dev-addr", address)
    assert done.exit_code == 1
    assert done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"Error: cannot serve on {address}: Address already in use; pass --dev-addr IP:PORT "
        "for another address (e.g. --dev-addr 127.0.0.1:8001)"
    )


def test_serve_refuses_an_address_it_cannot_bind_before_building(sample: Path) -> None:
    # Issue 39.4: serve --dev-addr 10.1.2.3:80 built the whole site (2.3 s) before saying so
    started = time.monotonic()
    done = memsite("--root", str(sample), "serve", "--dev-addr", "10.1.2.3:8000")
    took = time.monotonic() - started
    assert done.exit_code == 1
    assert done.stderr.splitlines() == [
        "Error: cannot serve on 10.1.2.3:8000: Cannot assign requested address; pass --dev-addr "
        "IP:PORT for another address (e.g. --dev-addr 127.0.0.1:8001)"
    ]  # no "Documentation built" line before it: nothing was built
    assert took < 1.0, f"refused after {took:.2f} s"


def test_search_says_which_file_it_skipped(root: Path) -> None:
    Memory(root).decide("Keep the cafe list", why="the cafe is where we meet")
    (root / "notes").mkdir()
    (root / "notes" / "latin1.md").write_bytes("# Caf\xe9\n\ncafe menu\n".encode("latin-1"))
    done = memsite("--root", str(root), "search", "cafe", "--lexical")
    assert done.exit_code == 0
    assert "memsite: skipped notes/latin1.md: not UTF-8; re-save it as UTF-8\n" in done.stderr
    assert "Keep the cafe list" in done.stdout
    checked = memsite("--root", str(root), "check")
    assert "notes/latin1.md:1: error: not valid UTF-8 (byte 0xe9)" in checked.stdout


def test_a_fresh_persona_template_is_not_injected_and_check_says_so(root: Path) -> None:
    assert (root / "persona.md").read_text() == PERSONA_TEMPLATE
    memory = Memory(root)
    memory.decide("Use Postgres", why="durable")
    assert memory.prime(task="anything").markdown.count("# Persona") == 0
    checked = memsite("--root", str(root), "check")
    assert "persona.md is still the template: nothing injected (edit it)\n" in checked.stderr
    (root / "persona.md").write_text(PERSONA_TEMPLATE + "I review code tersely.\n")
    assert "I review code tersely." in memory.prime(task="anything").markdown
    assert "template" not in memsite("--root", str(root), "check").stderr


def test_the_sample_persona_is_injected(sample: Path) -> None:
    assert Memory(sample).prime(task="auth").markdown.startswith("# Persona")


LABELLED = (
    "Reads stay on Mongo until Postgres has proven it holds every session. "
    "**Risk:** a lag. **Tags:** sessions, postgres, mongodb **Paths:** services/auth/store.py"
)


def test_a_snippet_never_ends_or_starts_inside_a_label() -> None:
    tags = LABELLED.index("**Tags:**")
    # a cut in the middle of "**Tags:**" at the end leaves the label out, not "**Tag"
    assert clip(LABELLED, 0, tags + 5).endswith("**Risk:** a lag.")
    # a cut just after "**Paths" (the word a fragmenter stops at) leaves the label out too
    paths = LABELLED.index("**Paths:**")
    assert clip(LABELLED, tags, paths + 7) == "**Tags:** sessions, postgres, mongodb"
    # a cut after "Tags:" at the start takes the label whole, with its value
    assert clip(LABELLED, tags + 7, paths).startswith("**Tags:** sessions")
    marked = LABELLED.index("postgres")
    assert clip(LABELLED, tags + 3, paths, [(marked, marked + 8)]) == (
        "**Tags:** sessions, **postgres**, mongodb"
    )


def test_a_snippet_inside_a_long_code_span_drops_the_lone_delimiter() -> None:
    text = "The fixture: ```python def validate(token, keys, now): return decode(token) ```"
    start = text.index("validate")
    shown = clip(text, start, len(text) - 10)
    assert shown == "validate(token, keys, now): return decode(token)"


def test_search_snippets_of_the_sample_keep_markup_whole(sample: Path) -> None:
    """On the sample memory these queries once gave snippets ending in ``**Paths`` and
    starting with ``** claude ```details``."""
    memory = Memory(sample)
    for query in ("postgres", "why bcrypt", "feature flag", "refresh token"):
        for hit in memory.search(query, lexical=True):
            for fragment in hit.snippet.removesuffix(" …").split(" … "):
                # every ** and ``` opens and closes inside its fragment
                assert fragment.count("**") % 2 == 0, (query, hit.snippet)
                assert fragment.count("```") % 2 == 0, (query, hit.snippet)
