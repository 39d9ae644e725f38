"""ProperDocs as the MkDocs memsite builds with (issue 38): the maintained fork of MkDocs 1.6,
installed without MkDocs, builds the sample with the memsite plugin and Material, both through
``memsite build`` and through its own ``properdocs build``.

The virtualenv is ``$MEMSITE_PROPERDOCS_VENV``, else ``.ci/properdocs-venv`` (git-ignored),
made here when missing: ProperDocs (pinned by ``builder.PROPERDOCS``) and memsite from this
checkout, then MkDocs uninstalled (Material and memsite depend on it by name). Without it these
tests skip; with ``MEMSITE_REQUIRE_PROPERDOCS=1`` (``.ci/run`` sets it) they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memsite import Memory
from memsite.site.builder import PROPERDOCS
from memsite.site.render import anchor

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "memory"
VENV = REPO / ".ci" / "properdocs-venv"


def _missing(what: str) -> None:
    if os.environ.get("MEMSITE_REQUIRE_PROPERDOCS"):
        pytest.fail(f"MEMSITE_REQUIRE_PROPERDOCS is set but {what}", pytrace=False)
    pytest.skip(what)


def _run(*command: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DISABLE_MKDOCS_2_WARNING": "true"}
    env.pop("MEMSITE_ROOT", None)
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


@pytest.fixture(scope="module")
def venv() -> Path:
    """The ProperDocs virtualenv, made (once, then reused) when missing."""
    venv = Path(os.environ.get("MEMSITE_PROPERDOCS_VENV") or VENV)
    python = venv / "bin" / "python"
    if not (venv / "bin" / "memsite").is_file():
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(python), "-m", "pip", "install", "-q", PROPERDOCS, "-e", str(REPO)],
            [str(python), "-m", "pip", "uninstall", "-q", "-y", "mkdocs"],
        ]
        for step in steps:
            made = _run(*step)
            if made.returncode != 0:
                _missing(f"{venv} could not be made: {made.stderr[-300:]}")
    return venv


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("properdocs")
    shutil.copytree(SAMPLE, project / "memory", ignore=shutil.ignore_patterns(".memsite"))
    return project


def _anchored(site: Path) -> None:
    """Every decision of the sample at its anchor, in the page and in the search index."""
    page = (site / "decisions" / "index.html").read_text("utf-8")
    index = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    assert index["docs"] == []  # memsite's sharded index holds the entries
    blocks = "".join(p.read_text("utf-8") for p in (site / "search" / "memsite").rglob("*.js"))
    decisions = Memory(SAMPLE).entries("decision")
    assert len(decisions) == 30
    for entry in decisions:
        assert f'id="{anchor(entry.id)}"' in page
        assert f"decisions/index.html#{anchor(entry.id)}" in blocks


def test_mkdocs_is_provided_by_properdocs_alone(venv: Path) -> None:
    found = _run(venv / "bin" / "python", "-m", "pip", "show", "mkdocs")
    assert found.returncode != 0  # no MkDocs: ProperDocs provides it
    assert (venv / "bin" / "properdocs").is_file()


def test_memsite_build_runs_on_properdocs(venv: Path, project: Path) -> None:
    site = project / "site-memsite"
    done = _run(
        venv / "bin" / "memsite", "--root", project / "memory", "build", "--strict",
        "--site-dir", site, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == f"built {site}\n"
    _anchored(site)


def test_properdocs_build_runs_the_plugin(venv: Path, project: Path) -> None:
    config = {
        "site_name": "Memory",
        "site_dir": "site-properdocs",
        "theme": {"name": "material", "font": False},
        "plugins": ["search", "offline", {"memsite": {"root": "memory"}}],
    }
    (project / "docs").mkdir(exist_ok=True)
    (project / "mkdocs.yml").write_text(yaml.safe_dump(config), "utf-8")
    done = _run(venv / "bin" / "properdocs", "build", "--strict", "-f", "mkdocs.yml", cwd=project)
    assert done.returncode == 0, done.stderr[-2000:]
    _anchored(project / "site-properdocs")


def test_a_strict_warning_on_properdocs_is_named(venv: Path, project: Path) -> None:
    (project / "memory" / "notes" / "broken.md").write_text("# B\n\nSee [it](nowhere.md).\n")
    try:
        done = _run(
            venv / "bin" / "memsite", "--root", project / "memory", "build", "--strict",
            "--site-dir", project / "site-broken", cwd=project,
        )  # fmt: skip
    finally:
        (project / "memory" / "notes" / "broken.md").unlink()
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("Error: site not built: Doc file ")
    assert "nowhere.md" in done.stderr.splitlines()[-1]
