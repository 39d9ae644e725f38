"""CI workflows that check the memory and publish its site on every commit (``init --ci``)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ..errors import InvalidInput

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
      - run: python -m pip install memsite
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
    - python -m pip install memsite
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


def render_workflow(kind: str, root: str = "memory") -> tuple[str, str]:
    """The path (relative to the repository) and text of the workflow for ``kind``."""
    option = "" if root in ("memory", "./memory", "") else f" --root {root}"
    parent = PurePosixPath(root or "memory").parent
    cache = ".memsite/" if str(parent) == "." else f"{parent}/.memsite/"
    if kind == "github":
        return GITHUB_PATH, _GITHUB.format(root=option, cache=cache)
    if kind == "gitlab":
        return GITLAB_PATH, _GITLAB.format(root=option, cache=cache)
    raise InvalidInput(f"--ci {kind!r}: expected github or gitlab")


def write_workflow(repo: Path, kind: str, root: str = "memory") -> tuple[Path, bool]:
    """Write the workflow under ``repo`` unless a file is already there; (path, created)."""
    rel, text = render_workflow(kind, root)
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        return path, False
    return path, True
