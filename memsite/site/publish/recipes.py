"""The CI recipes of ``memsite init --ci KIND --techdocs`` (issue 28): check the tree, build
its TechDocs source, turn it into a TechDocs site with Backstage's ``techdocs-cli`` and, on the
default branch, publish it to the object storage the portal reads. The storage's settings are
the CI's secrets, named here and never filled in."""

from __future__ import annotations

from collections.abc import Callable

GITHUB_PATH = ".github/workflows/memsite-techdocs.yml"
GITLAB_PATH = ".gitlab-ci.yml"
# the versions the tests build with (tests/test_techdocs.py, .ci/run)
TECHDOCS_CORE = "mkdocs-techdocs-core==1.7.1"
TECHDOCS_CLI = "@techdocs/cli@1.8.15"
SECRETS = ("TECHDOCS_S3_BUCKET_NAME", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")
SOURCE = "techdocs-source"
SITE = "techdocs-site"

_ABOUT = """\
# Written by `memsite init --ci {kind} --techdocs`. Every {commit} checks the memory and builds
# its Backstage TechDocs site; the default branch also publishes it to the object storage
# your Backstage reads (app-config: techdocs.builder: external, techdocs.publisher: awsS3).
# This file only names the storage's secrets; add them as {where}:
#   {secrets}
# For Google Cloud Storage or Azure Blob Storage change --publisher-type and the secrets
# (techdocs-cli publish --help)."""

_GITHUB = """\
{about}
name: memory techdocs
on:
  push:
  workflow_dispatch:
permissions:
  contents: read
env:
  # the Backstage entity these docs belong to: metadata.name in catalog-info.yaml
  MEMSITE_COMPONENT: {component}
jobs:
  techdocs:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - uses: actions/setup-node@v4
        with:
          node-version: "20"
{install}
      # mkdocs-techdocs-core pins another Material than memsite's: a virtualenv of its own
      - run: python -m venv .techdocs-venv && .techdocs-venv/bin/python -m pip install "{core}"
      - uses: actions/cache@v4
        with:
          path: {cache}
          key: memsite-index-${{{{ github.sha }}}}
          restore-keys: memsite-index-
      - run: {check}
      - run: {build}
      - run: >-
          PATH="$PWD/.techdocs-venv/bin:$PATH" npx --yes {cli} generate --no-docker
          --source-dir {source} --output-dir {site}
      - if: github.ref == format('refs/heads/{{0}}', github.event.repository.default_branch)
        run: >-
          npx --yes {cli} publish --publisher-type awsS3
          --storage-name "$TECHDOCS_S3_BUCKET_NAME"
          --entity "default/Component/$MEMSITE_COMPONENT" --directory {site}
        env:
{secret_env}
"""

_GITLAB = """\
{about}
memsite-techdocs:
  # Node for techdocs-cli; Python (Debian's) for memsite and mkdocs-techdocs-core
  image: node:20-bookworm
  variables:
    # the Backstage entity these docs belong to: metadata.name in catalog-info.yaml
    MEMSITE_COMPONENT: {component}
  cache:
    key: memsite-index
    paths:
      - {cache}
  before_script:
    - apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    - python3 -m venv /opt/memsite && . /opt/memsite/bin/activate
{install}
    # mkdocs-techdocs-core pins another Material than memsite's: a virtualenv of its own
    - python3 -m venv /opt/techdocs && /opt/techdocs/bin/python -m pip install "{core}"
  script:
    - {check}
    - {build}
    - >-
      PATH="/opt/techdocs/bin:$PATH" npx --yes {cli} generate --no-docker
      --source-dir {source} --output-dir {site}
    - >-
      if [ "$CI_COMMIT_BRANCH" = "$CI_DEFAULT_BRANCH" ]; then
      npx --yes {cli} publish --publisher-type awsS3
      --storage-name "$TECHDOCS_S3_BUCKET_NAME"
      --entity "default/Component/$MEMSITE_COMPONENT" --directory {site}; fi
"""


def render(
    kind: str, *, run: Callable[[str], str], cache: str, install: str, component: str
) -> tuple[str, str]:
    """The path and text of the TechDocs recipe for ``kind`` (``github`` or ``gitlab``);
    ``run`` makes a memsite command (``"check"``) the YAML scalar of its shell line, with
    the tree's ``--root`` quoted, ``install`` is its install step, already indented for
    ``kind``."""
    fields = {
        "check": run("check"),
        "build": run(f'build --techdocs {SOURCE} --component "$MEMSITE_COMPONENT"'),
        "cache": cache,
        "install": install,
        "component": component,
        "core": TECHDOCS_CORE,
        "cli": TECHDOCS_CLI,
        "source": SOURCE,
        "site": SITE,
    }
    if kind == "github":
        about = _ABOUT.format(
            kind=kind,
            commit="push",
            where="repository secrets (Settings > Secrets and variables > Actions)",
            secrets=", ".join(SECRETS),
        )
        secret_env = "\n".join(f"          {name}: ${{{{ secrets.{name} }}}}" for name in SECRETS)
        return GITHUB_PATH, _GITHUB.format(about=about, secret_env=secret_env, **fields)
    about = _ABOUT.format(
        kind=kind,
        commit="commit",
        where="masked CI/CD variables (Settings > CI/CD > Variables)",
        secrets=", ".join(SECRETS),
    )
    return GITLAB_PATH, _GITLAB.format(about=about, **fields)
