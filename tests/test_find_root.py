"""Without --root, the memory tree is found the way git finds .git (issue 10)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite.cli import cli
from memsite.errors import NotFound
from memsite.store.tree import find_root, init_tree


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with its memory/ and a folder three levels below, where commands run."""
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    top = tmp_path / "project"
    (top / ".git").mkdir(parents=True)
    init_tree(top / "memory")
    deep = top / "src" / "auth" / "tokens"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    return top


def test_the_tree_beside_the_start_is_given_relative_to_it(project: Path) -> None:
    assert find_root(project) == project / "memory"
    assert find_root(Path(".")) == project / "memory"  # from three levels below: absolute
    assert find_root(Path(".")).is_absolute()


def test_a_memory_folder_that_is_not_a_tree_is_passed_over(project: Path) -> None:
    (project / "src" / "memory").mkdir()  # a source package that happens to be called memory
    (project / "src" / "memory" / "__init__.py").write_text("")
    assert find_root(Path(".")) == project / "memory"


def test_the_search_stops_at_the_top_of_a_git_repository(tmp_path: Path) -> None:
    init_tree(tmp_path / "memory")  # a tree above the repository is not this project's
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    start = repo / "lib"
    start.mkdir()
    with pytest.raises(NotFound) as caught:
        find_root(start)
    assert str(caught.value) == (
        f"no memory tree found: looked for {start / 'memory'}, {repo / 'memory'}, and stopped "
        f"at {repo}, the top of a git repository; run 'memsite init' to create ./memory, or "
        "pass --root DIR (or set $MEMSITE_ROOT)"
    )


def test_search_decide_and_build_find_the_tree_from_three_levels_below(project: Path) -> None:
    runner = CliRunner()
    decided = runner.invoke(cli, ["decide", "Rotate signing keys monthly", "--why", "audit"])
    assert decided.exit_code == 0, decided.output
    assert "Rotate signing keys monthly" in (project / "memory/cold/decisions.md").read_text()
    found = runner.invoke(cli, ["search", "signing keys"])
    assert found.exit_code == 0, found.output
    assert "cold/decisions.md#" in found.output
    built = runner.invoke(cli, ["build"])
    assert built.exit_code == 0, built.output
    assert (project / "site" / "decisions" / "index.html").is_file()  # beside the tree
    assert not Path("site").exists()


def test_build_uses_the_projects_own_mkdocs_yml_beside_the_tree(project: Path) -> None:
    (project / "site-docs").mkdir()
    (project / "mkdocs.yml").write_text(
        "site_name: Team memory\ndocs_dir: site-docs\nsite_dir: published\n"
        "theme: {name: material}\nplugins: [memsite]\n"
    )
    built = CliRunner().invoke(cli, ["build"])
    assert built.exit_code == 0, built.output
    assert "Team memory" in (project / "published" / "index.html").read_text("utf-8")


def test_outside_any_project_the_error_lists_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    start = tmp_path / "nowhere" / "deeper"
    start.mkdir(parents=True)
    monkeypatch.chdir(start)
    for args in (["search", "x"], ["decide", "x", "--why", "y"], ["build"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1
        message = result.output.strip()
        assert "\n" not in message and "Traceback" not in message
        assert message.startswith(
            f"Error: no memory tree found: looked for {start / 'memory'}, "
            f"{start.parent / 'memory'}, "
        )
        assert f", {Path(start.anchor) / 'memory'}; run 'memsite init'" in message


def test_init_still_creates_memory_right_here(project: Path) -> None:
    shutil.rmtree(project / "memory")  # no tree serves this folder yet
    result = CliRunner().invoke(cli, ["init"])
    assert result.exit_code == 0, result.output
    assert (Path("memory") / "persona.md").is_file()
    assert find_root(Path(".")) == Path("memory")


@pytest.mark.parametrize("below", ["src/shop", "memory", "memory/cold"])
def test_init_below_a_tree_names_it_and_makes_no_second_one(
    project: Path, below: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 39.1: from src/shop/ init made src/shop/memory/, from memory/ it made memory/memory/
    start = project / below
    start.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(start)
    result = CliRunner().invoke(cli, ["init"])
    assert result.exit_code == 1
    message = result.output.strip()
    assert "\n" not in message and "Traceback" not in message
    assert str(project / "memory") in message and "memsite init DIR" in message
    assert not (start / "memory").exists()


def test_init_with_a_folder_makes_a_second_tree_deliberately(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project / "src")
    result = CliRunner().invoke(cli, ["init", "team-memory"])
    assert result.exit_code == 0, result.output
    assert (project / "src" / "team-memory" / "persona.md").is_file()
