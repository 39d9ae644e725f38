"""Paths typed in a subfolder are relative to it, as in git (issue 25.2): ``--path`` of
decide, learn and log, ``why PATH`` and ``progress --file``. The CLI turns them into paths
relative to the repository root; the library and MCP keep taking those.

Each test runs ``memsite`` from a folder of a real git repository made in ``tmp_path``, with
``memory/`` at its top, and finds the tree from there up (no ``--root``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.store.code import from_folder


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with ``src/shop/cart.py`` and ``src/shop/discounts.py``, and a memory
    tree made by ``memsite init`` at its top."""
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    project = tmp_path / "project"
    (project / "src" / "shop").mkdir(parents=True)
    (project / "src" / "shop" / "cart.py").write_text("ITEMS = []\n")
    (project / "src" / "shop" / "discounts.py").write_text("RATE = 0.1\n")
    (project / "README.md").write_text("project\n")
    git(project, "init", "-q")
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["init"])
    assert result.exit_code == 0, result.output
    return project


def memsite(cwd: Path, *args: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(cli, list(args))


def paths_of(repo: Path, entry_id: str) -> list[str]:
    return Memory(repo / "memory").get(entry_id).entry.paths


def test_decide_in_a_subfolder_stores_the_path_from_the_root(repo, monkeypatch):
    result = memsite(repo / "src" / "shop", "decide", "Carts", "--why", "y",
                     "--path", "./cart.py", monkeypatch=monkeypatch)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert paths_of(repo, result.stdout.strip()) == ["src/shop/cart.py"]


def test_learn_and_log_and_globs_and_folders_too(repo, monkeypatch):
    src = repo / "src"
    learnt = memsite(src, "learn", "L", "--category", "c", "--path", "shop/*.py",
                     "--path", "shop/", monkeypatch=monkeypatch)  # fmt: skip
    logged = memsite(src, "log", "A", "--path", "shop/cart.py", monkeypatch=monkeypatch)
    assert learnt.exit_code == 0 and logged.exit_code == 0, learnt.output + logged.output
    assert learnt.stderr == "" and logged.stderr == ""
    assert paths_of(repo, learnt.stdout.strip()) == ["src/shop/*.py", "src/shop/"]
    assert paths_of(repo, logged.stdout.strip()) == ["src/shop/cart.py"]


def test_why_in_a_subfolder_finds_what_governs_the_file(repo, monkeypatch):
    decided = memsite(repo, "decide", "Discounts cap at 50%", "--why", "margins",
                      "--path", "src/shop/discounts.py", monkeypatch=monkeypatch)  # fmt: skip
    result = memsite(repo / "src", "why", "shop/discounts.py", "--json", monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["path"] == "src/shop/discounts.py"
    assert [item["id"] for item in found["items"]] == [decided.stdout.strip()]
    assert found["items"][0]["match"] == "file"


def test_a_missing_path_warns_in_one_line_and_is_still_written(repo, monkeypatch):
    result = memsite(repo / "src", "decide", "D", "--why", "y", "--path", "gone.py",
                     monkeypatch=monkeypatch)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"memsite: --path 'gone.py' (src/gone.py from the repository root) does not exist in "
        f"{repo.resolve()}; written anyway\n"
    )
    assert paths_of(repo, result.stdout.strip()) == ["src/gone.py"]


def test_a_root_relative_path_typed_in_a_subfolder_warns(repo, monkeypatch):
    # the old reading: typed in src/, src/shop/cart.py is src/src/shop/cart.py, which is absent
    result = memsite(repo / "src", "decide", "D", "--why", "y", "--path", "src/shop/cart.py",
                     monkeypatch=monkeypatch)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr.count("\n") == 1
    assert "src/src/shop/cart.py from the repository root" in result.stderr


def test_an_absolute_path_and_dot_dot_still_work(repo, monkeypatch):
    shop = repo / "src" / "shop"
    absolute = memsite(shop, "decide", "A", "--why", "y", "--path", str(shop / "cart.py"),
                       monkeypatch=monkeypatch)  # fmt: skip
    up = memsite(shop, "decide", "B", "--why", "y", "--path", "../../README.md",
                 monkeypatch=monkeypatch)  # fmt: skip
    assert absolute.exit_code == 0 and up.exit_code == 0, absolute.output + up.output
    assert absolute.stderr == "" and up.stderr == ""
    assert paths_of(repo, absolute.stdout.strip()) == ["src/shop/cart.py"]
    assert paths_of(repo, up.stdout.strip()) == ["README.md"]


def test_a_path_leading_out_of_the_repository_is_refused(repo, monkeypatch):
    result = memsite(repo / "src", "decide", "D", "--why", "y", "--path", "../../x.py",
                     monkeypatch=monkeypatch)  # fmt: skip
    assert result.exit_code == 1
    outside = (repo.parent / "x.py").resolve()
    assert result.stderr == (
        f"Error: --path '{outside}' is outside the repository {repo.resolve()}\n"
    )


def test_progress_files_are_stored_from_the_root(repo, monkeypatch):
    memsite(repo, "session", "start", "shop", monkeypatch=monkeypatch)
    memsite(repo / "src", "progress", "edit", "--file", "shop/cart.py", monkeypatch=monkeypatch)
    result = memsite(repo, "decide", "D", "--why", "y", "--paths-from-session",
                     monkeypatch=monkeypatch)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert paths_of(repo, result.stdout.strip()) == ["src/shop/cart.py"]


def test_from_the_root_or_outside_the_repository_a_path_is_as_given(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    assert from_folder("./a/../b.py", repo, repo) == "./a/../b.py"
    assert from_folder("src/b.py", repo, tmp_path) == "src/b.py"
    assert from_folder("/abs/b.py", repo, repo / "src") == "/abs/b.py"
    assert from_folder("./b.py", repo, repo / "src") == "src/b.py"
    assert from_folder("lib/", repo, repo / "src") == "src/lib/"
    assert from_folder("**/*.py", repo, repo / "src") == "src/**/*.py"
    assert from_folder("..", repo, repo / "src") == "."
