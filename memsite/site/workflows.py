"""CI workflows that check the memory and publish its site on every commit (``init --ci``)."""

from __future__ import annotations

import importlib.metadata
import json
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from ..errors import InvalidInput
from ..store import inputs

GITHUB_PATH = ".github/workflows/memsite.yml"
GITLAB_PATH = ".gitlab-ci.yml"

_GITHUB = """\
# Written by `memsite init --ci github`. Every push checks the memory and builds its site;
# pushes to the default branch also publish it to GitHub Pages (Settings > Pages > Source:
# GitHub Actions).
name: memory site
on:
  push:
  workflow_dispatch:
permissions:
  contents: read
  pages: write
  id-token: write
concurrency:
  group: memsite-pages-${{{{ github.ref }}}}
  cancel-in-progress: true
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
{install}
      # the search index is a cache: restoring the last one makes the build incremental
      - uses: actions/cache@v4
        with:
          path: {cache}
          key: memsite-index-${{{{ github.sha }}}}
          restore-keys: memsite-index-
      - run: memsite{root} check
      - run: memsite{root} build --strict --site-dir site
      - uses: actions/upload-pages-artifact@v3
        with:
          path: site
  deploy:
    if: github.ref == format('refs/heads/{{0}}', github.event.repository.default_branch)
    needs: build
    runs-on: ubuntu-latest
    environment:
      name: github-pages
      url: ${{{{ steps.deployment.outputs.page_url }}}}
    steps:
      - id: deployment
        uses: actions/deploy-pages@v4
"""

_GITLAB = """\
# Written by `memsite init --ci gitlab`. Every commit checks the memory and builds its site;
# commits to the default branch also publish it with GitLab Pages (the `pages` job).
.memsite:
  image: python:3.12-slim
  # the search index is a cache: keeping it between pipelines makes the build incremental
  cache:
    key: memsite-index
    paths:
      - {cache}
  before_script:
{install}
  script:
    - memsite{root} check
    - memsite{root} build --strict --site-dir public

memsite-check:
  extends: .memsite
  rules:
    - if: $CI_COMMIT_BRANCH != $CI_DEFAULT_BRANCH

pages:
  extends: .memsite
  artifacts:
    paths:
      - public
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
"""


@dataclass(frozen=True)
class Install:
    """Where CI installs memsite from: a pip requirement, or a placeholder to replace."""

    spec: str
    known: bool = True

    @property
    def command(self) -> str:
        return f"python -m pip install {shlex.quote(self.spec)}"


PLACEHOLDER = Install("SET-WHERE-TO-INSTALL-MEMSITE-FROM", known=False)

_HOW_TO_CHANGE = """\
memsite is installed from the spec below; change it to any pip requirement: a version
from your package index (memsite==VERSION), a git URL (git+https://HOST/OWNER/memsite@COMMIT),
a path in this repository (./tools/memsite) or a wheel (./wheels/memsite-VERSION.whl).
`memsite init --ci KIND --install SPEC` writes it for you."""
_UNKNOWN = """\
memsite could not tell where it was installed from: replace the placeholder below
before the first run, or the run stops here."""


def install_spec(direct_url: dict[str, Any] | None, repo: Path) -> Install:
    """Where CI should install memsite from, told by how this copy was installed (PEP 610
    ``direct_url.json``, None when it came from a package index): a VCS checkout gives
    ``git+URL@COMMIT``, a folder or wheel inside ``repo`` its relative path, a wheel at an
    https URL that URL; anything else the :data:`PLACEHOLDER`."""
    if not direct_url or not isinstance(direct_url.get("url"), str):
        return PLACEHOLDER
    url = direct_url["url"]
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("commit_id"):
        spec = f"{vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}"
        sub = direct_url.get("subdirectory")
        return Install(f"{spec}#subdirectory={sub}" if sub else spec)
    parsed = urlparse(url)
    if parsed.scheme == "file":
        local = Path(unquote(parsed.path)).resolve()
        base = repo.resolve()
        if local == base or base in local.parents:
            rel = local.relative_to(base).as_posix()
            return Install("." if rel == "." else f"./{rel}")
        return PLACEHOLDER
    if parsed.scheme == "https" and "archive_info" in direct_url:
        return Install(url)
    return PLACEHOLDER


def this_install(repo: Path) -> Install:
    """:func:`install_spec` for the memsite that is running."""
    try:
        text = importlib.metadata.distribution("memsite").read_text("direct_url.json")
        data = json.loads(text) if text else None
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):
        return PLACEHOLDER
    return install_spec(data if isinstance(data, dict) else None, repo)


def given_install(spec: str) -> Install:
    """An install spec given by hand (``init --install``): one line of text."""
    return Install(inputs.one_line(spec, "--install"))


def _install_step(kind: str, install: Install) -> str:
    comment = _HOW_TO_CHANGE.replace("KIND", kind) + ("\n" + _UNKNOWN if not install.known else "")
    indent = "      " if kind == "github" else "    "
    lines = [f"{indent}# {line}" for line in comment.splitlines()]
    # JSON is YAML: the command stays one scalar whatever the spec holds
    key = "- run: " if kind == "github" else "- "
    return "\n".join([*lines, f"{indent}{key}{json.dumps(install.command)}"])


def render_workflow(
    kind: str, root: str = "memory", install: Install = PLACEHOLDER
) -> tuple[str, str]:
    """The path (relative to the repository) and text of the workflow for ``kind``."""
    option = "" if root in ("memory", "./memory", "") else f" --root {root}"
    parent = PurePosixPath(root or "memory").parent
    cache = ".memsite/" if str(parent) == "." else f"{parent}/.memsite/"
    step = _install_step(kind, install)
    if kind == "github":
        return GITHUB_PATH, _GITHUB.format(root=option, cache=cache, install=step)
    if kind == "gitlab":
        return GITLAB_PATH, _GITLAB.format(root=option, cache=cache, install=step)
    raise InvalidInput(f"--ci {kind!r}: expected github or gitlab")


def write_workflow(
    repo: Path, kind: str, root: str = "memory", install: Install = PLACEHOLDER
) -> tuple[Path, bool]:
    """Write the workflow under ``repo`` unless a file is already there; (path, created)."""
    rel, text = render_workflow(kind, root, install)
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        return path, False
    return path, True
