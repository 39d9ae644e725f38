"""Where `init --ci` installs memsite from, for a memsite run from a clone (issue 25, point 1).

An editable install from a clone used to write ``pip install SET-WHERE-TO-INSTALL-MEMSITE-FROM``
into every project's workflow; now the workflow installs what the clone's remote holds.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memsite.cli import cli
from memsite.site import workflows

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def clone(tmp_path: Path, remote: str | None, *, pushed: bool = True) -> tuple[Path, str]:
    """A git checkout of memsite with ``remote`` as origin; (checkout, HEAD). ``pushed``: a
    branch of origin holds HEAD (as after a clone or a push)."""
    checkout = tmp_path / "memsite-clone"
    checkout.mkdir()
    git(checkout, "init", "-q", "-b", "main")
    (checkout / "pyproject.toml").write_text('[project]\nname = "memsite"\n', "utf-8")
    git(checkout, "add", "pyproject.toml")
    git(checkout, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x")
    head = git(checkout, "rev-parse", "HEAD")
    if remote is not None:
        git(checkout, "remote", "add", "origin", remote)
        if pushed:
            git(checkout, "update-ref", "refs/remotes/origin/main", head)
    return checkout, head


def editable(folder: Path) -> dict[str, object]:
    return {"url": folder.as_uri(), "dir_info": {"editable": True}}


def test_a_clone_elsewhere_installs_its_remote_at_the_checked_out_commit(tmp_path: Path) -> None:
    checkout, head = clone(tmp_path, "https://alice:s3cret-token@example.com/team/memsite.git")
    project = tmp_path / "shop"
    project.mkdir()
    spec = workflows.install_spec(editable(checkout), project)
    # the credentials of the remote URL never reach the workflow
    assert spec == workflows.Install(f"memsite @ git+https://example.com/team/memsite.git@{head}")


def test_a_commit_no_remote_branch_holds_installs_the_remote_default_branch(
    tmp_path: Path,
) -> None:
    checkout, _ = clone(tmp_path, "git@example.com:team/memsite.git", pushed=False)
    spec = workflows.install_spec(editable(checkout), tmp_path / "shop")
    assert spec.spec == "memsite @ git+https://example.com/team/memsite.git" and spec.known


def test_a_package_in_a_subfolder_of_the_clone_names_it(tmp_path: Path) -> None:
    checkout, head = clone(tmp_path, "ssh://git@example.com:2222/team/tools.git")
    package = checkout / "python" / "memsite"
    package.mkdir(parents=True)
    spec = workflows.install_spec(editable(package), tmp_path / "elsewhere")
    assert spec.spec == (
        f"memsite @ git+https://example.com/team/tools.git@{head}#subdirectory=python/memsite"
    )


@pytest.mark.parametrize("remote", [None, "/srv/git/memsite.git", "../memsite", "myalias:x/y"])
def test_a_clone_without_a_remote_ci_can_reach_keeps_the_placeholder(
    tmp_path: Path, remote: str | None
) -> None:
    checkout, _ = clone(tmp_path, remote)
    assert workflows.install_spec(editable(checkout), tmp_path / "p") == workflows.PLACEHOLDER


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_init_ci_from_an_editable_clone_writes_an_install_that_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    checkout, head = clone(tmp_path, "https://example.com/team/memsite.git")
    monkeypatch.setattr(workflows, "_direct_url", lambda: editable(checkout))
    project = tmp_path / "shop"
    project.mkdir()
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["init", "--ci", kind])
    assert result.exit_code == 0, result.output
    command = f"python -m pip install 'memsite @ git+https://example.com/team/memsite.git@{head}'"
    assert f"CI installs memsite with: {command}" in result.stdout
    assert workflows.PLACEHOLDER.spec not in result.stdout
    path, _ = workflows.render_workflow(kind)
    workflow = yaml.safe_load((project / path).read_text("utf-8"))
    if kind == "github":
        steps = [s.get("run", "") for s in workflow["jobs"]["build"]["steps"]]
    else:
        steps = workflow[".memsite"]["before_script"]
    assert command in steps
