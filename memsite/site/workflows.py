"""CI workflows that check the memory and publish its site on every commit (``init --ci``).

The memory's folder goes into shell lines of a YAML file read by the CI first: each line
names it as one quoted word, and is itself a YAML scalar that reads back as written (issue
34.8: ``memsite --root $(touch PWN) check`` ran the folder's name in CI).
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import re
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
      - run: {check}
      - run: {build}
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
    - {check}
    - {build}

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
    ``git+URL@COMMIT``, a folder or wheel inside ``repo`` its relative path, a folder
    elsewhere that is a git clone its remote (:func:`checkout_origin`), a wheel at an https
    URL that URL; anything else the :data:`PLACEHOLDER`."""
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
        # a clone elsewhere (issue 25.1): CI installs what the clone's remote holds
        return (checkout_origin(local) if "dir_info" in direct_url else None) or PLACEHOLDER
    if parsed.scheme == "https" and "archive_info" in direct_url:
        return Install(url)
    return PLACEHOLDER


def fetchable(remote: str) -> str | None:
    """A git remote as an https URL a CI runner can clone, credentials left out (a token in
    a remote URL must never reach a workflow); None for a remote on this machine."""
    if "://" not in remote:
        host, colon, path = remote.partition(":")
        if not colon or "." not in host.rpartition("@")[2] or "/" in host or not path:
            return None  # a path on this machine, not "git@host:team/repo"
        remote = f"ssh://{host}/{path.lstrip('/')}"
    parsed = urlparse(remote)
    if parsed.scheme not in ("https", "http", "ssh", "git", "git+ssh") or not parsed.hostname:
        return None
    return f"https://{parsed.hostname}/{parsed.path.lstrip('/')}"


def checkout_origin(folder: Path) -> Install | None:
    """``memsite @ git+URL@COMMIT`` for a git checkout of memsite: the URL of its remote
    (``origin`` first) as https, pinned to the checked-out commit when a branch of that remote
    holds it (else the remote's default branch); None without a remote CI can reach."""
    from ..store import git

    try:
        top = Path(git.run(folder, "rev-parse", "--show-toplevel").decode().strip())
        remotes = git.run(folder, "remote").decode().split()
        if not remotes:
            return None
        name = "origin" if "origin" in remotes else remotes[0]
        url = fetchable(git.run(folder, "remote", "get-url", name).decode().strip())
        if url is None:
            return None
        head = git.run(folder, "rev-parse", "HEAD").decode().strip()
        pushed = git.run(folder, "branch", "-r", "--list", f"{name}/*", "--contains", head)
    except InvalidInput:  # not a checkout, no commit yet, no git
        return None
    spec = f"memsite @ git+{url}" + (f"@{head}" if pushed.strip() else "")
    sub = folder.resolve().relative_to(top.resolve()).as_posix()
    return Install(spec if sub == "." else f"{spec}#subdirectory={sub}")


def _direct_url() -> dict[str, Any] | None:
    """How the running memsite was installed (PEP 610), None when from a package index."""
    try:
        text = importlib.metadata.distribution("memsite").read_text("direct_url.json")
        data = json.loads(text) if text else None
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):
        return None
    return data if isinstance(data, dict) else None


def this_install(repo: Path) -> Install:
    """:func:`install_spec` for the memsite that is running."""
    return install_spec(_direct_url(), repo)


def given_install(spec: str) -> Install:
    """An install spec given by hand (``init --install``): one line of text."""
    return Install(inputs.one_line(spec, "--install"))


def _install_step(kind: str, install: Install, engine: str = "mkdocs") -> str:
    comment = _HOW_TO_CHANGE.replace("KIND", kind) + ("\n" + _UNKNOWN if not install.known else "")
    indent = "      " if kind == "github" else "    "
    lines = [f"{indent}# {line}" for line in comment.splitlines()]
    # JSON is YAML: the command stays one scalar whatever the spec holds
    key = "- run: " if kind == "github" else "- "
    lines.append(f"{indent}{key}{json.dumps(install.command)}")
    if engine == "zensical":  # issue 38: the Zensical memsite is tested with
        from .publish.zensical import ZENSICAL

        lines.append(
            f"{indent}# Zensical builds the site (--engine zensical), at the tested version"
        )
        lines.append(f"{indent}{key}{json.dumps(Install(ZENSICAL).command)}")
    return "\n".join(lines)


# a YAML plain scalar that reads back as the same string: no indicator, quote or colon to
# start or end it, and a space or slash so it is never a number, boolean or null
_PLAIN = re.compile(r"[A-Za-z.][\w./'\"$=-]*(?: [\w./'\"$=-]+)*")
# what GitHub Actions replaces anywhere in a workflow, in a quoted string too
_EXPRESSION = "${{"


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML scalar: as it is when plain YAML reads it back unchanged (the
    usual ``memsite check``), else as a JSON string (which is YAML)."""
    if _PLAIN.fullmatch(text) and (" " in text or "/" in text):
        return text
    return json.dumps(text, ensure_ascii=False)


def run_line(root: str, command: str) -> str:
    """``memsite [--root ROOT] COMMAND`` as the YAML scalar of a shell line: ROOT quoted so
    the shell passes it as one word whatever it holds."""
    option = "" if root in ("memory", "./memory", "") else f" --root {shlex.quote(root)}"
    return yaml_scalar(f"memsite{option} {command}")


def check_names(kind: str, root: str, install: Install = PLACEHOLDER) -> None:
    """Refuse what a workflow of ``kind`` cannot hold as text: a control character in the
    memory's folder (a YAML line holds it), and for GitHub ``${{`` in the folder or the
    install spec, an expression Actions would evaluate before the shell sees the line."""
    bad = next((c for c in root if not c.isprintable()), None)
    if bad is not None:
        raise InvalidInput(
            f"--ci {kind}: the memory folder {root!r} holds U+{ord(bad):04X}; a CI line "
            "cannot name it: rename the folder"
        )
    if kind != "github":
        return
    if _EXPRESSION in root:
        raise InvalidInput(
            f"--ci github: the memory folder {root!r} holds '${{{{', which GitHub Actions "
            "reads as an expression anywhere in a workflow; rename the folder"
        )
    if _EXPRESSION in install.spec:
        raise InvalidInput(
            f"--install {install.spec!r} holds '${{{{', which GitHub Actions reads as an "
            "expression anywhere in a workflow; give the spec without it"
        )


def render_workflow(
    kind: str,
    root: str = "memory",
    install: Install = PLACEHOLDER,
    *,
    techdocs: bool = False,
    component: str = "memory",
    engine: str = "mkdocs",
) -> tuple[str, str]:
    """The path (relative to the repository) and text of the workflow for ``kind``: the
    site's, built with ``engine`` (``mkdocs`` or ``zensical``), or with ``techdocs`` the
    Backstage TechDocs one of component ``component``."""
    if kind not in ("github", "gitlab"):
        raise InvalidInput(f"--ci {kind!r}: expected github or gitlab")
    check_names(kind, root, install)
    parent = PurePosixPath(root or "memory").parent
    cache = yaml_scalar(".memsite/" if str(parent) == "." else f"{parent}/.memsite/")
    step = _install_step(kind, install, "mkdocs" if techdocs else engine)
    built = " --engine zensical" if engine == "zensical" else ""
    run = functools.partial(run_line, root)
    if techdocs:
        from .publish import recipes

        return recipes.render(
            kind, run=run, cache=cache, install=step, component=json.dumps(component)
        )
    if kind == "github":
        build = run(f"build --strict{built} --site-dir site")
        return GITHUB_PATH, _GITHUB.format(
            check=run("check"), build=build, cache=cache, install=step
        )
    if kind == "gitlab":
        build = run(f"build --strict{built} --site-dir public")
        return GITLAB_PATH, _GITLAB.format(
            check=run("check"), build=build, cache=cache, install=step
        )
    raise InvalidInput(f"--ci {kind!r}: expected github or gitlab")


def write_workflow(
    repo: Path,
    kind: str,
    root: str = "memory",
    install: Install = PLACEHOLDER,
    *,
    techdocs: bool = False,
    engine: str = "mkdocs",
) -> tuple[Path, bool]:
    """Write the workflow under ``repo`` unless a file is already there; (path, created).
    The TechDocs one names the component ``memsite build --techdocs`` would name."""
    component = "memory"
    if techdocs:
        from .publish.techdocs import configured_title, default_component

        tree = repo / (root or "memory")
        component = default_component(configured_title(None, tree), repo)
    rel, text = render_workflow(
        kind, root, install, techdocs=techdocs, component=component, engine=engine
    )
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        return path, False
    return path, True
