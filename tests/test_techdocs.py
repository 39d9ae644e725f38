"""`memsite build --techdocs` and `init --ci KIND --techdocs` (issue 28): the memory as a
Backstage TechDocs source, built by the real TechDocs tools.

``mkdocs-techdocs-core`` pins another Material than memsite's, so it lives in a virtualenv of
its own: ``$MEMSITE_TECHDOCS_VENV``, else ``.ci/techdocs-venv`` (git-ignored), made here when it
is missing. Backstage's ``techdocs-cli`` (npm) is ``$MEMSITE_TECHDOCS_CLI``, else the one
``.ci/run`` installs into ``.ci/techdocs``. Without them these tests skip; with
``MEMSITE_REQUIRE_TECHDOCS=1`` (``.ci/run`` sets it) they fail instead. Each slow build runs
once per module.
"""

from __future__ import annotations

import html.parser
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.site.publish import recipes
from memsite.site.publish.inert import inert
from memsite.site.render import anchor
from memsite.store.tree import init_tree

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "memory"
VENV = REPO / ".ci" / "techdocs-venv"
CLI = REPO / ".ci" / "techdocs" / "node_modules" / ".bin" / "techdocs-cli"
MARK = "PWNED"
SNIPPET_TEXT = "SNIPPET-FILE-CONTENT-7f3a"
# the hostile matrix's payloads (tests/test_hostile_matrix.py) and the syntax of TechDocs'
# extra extensions, each in prose and in a code block of an entry
PAYLOADS = {
    "script": f"<script>window.{MARK}=1</script>",
    "event handler": f'<img src=x onerror="window.{MARK}=1">',
    "javascript link": f"[go](javascript:window.{MARK}=1)",
    "title breakout": f"x</title><script>window.{MARK}=1</script>",
    "snippet": '--8<-- "snippet.txt"',
    "snippet block": "--8<--\nsnippet.txt\n--8<--",
    "emoji": "I :smile: at :+1:",
    "plantuml fence": f"```plantuml\nAlice -> Bob: {MARK}\n```",
    "uml block": f"::uml::\nAlice -> Bob: {MARK}\n::end-uml::",
    "graphviz": '{% dot g.svg\ndigraph G { a [URL="javascript:window.PWNED=1"] }\n%}',
    "graphviz fence": f"```graphviz dot g.svg\n<script>window.{MARK}=1</script>\n```",
    "fence attributes": f'```{{.py onclick="window.{MARK}=1"}}\nx = 1\n```',
    "critic": f"{{++<b onmouseover=window.{MARK}=1>x</b>++}}",
}


def _required() -> bool:
    return bool(os.environ.get("MEMSITE_REQUIRE_TECHDOCS"))


def _missing(what: str) -> None:
    if _required():
        pytest.fail(f"MEMSITE_REQUIRE_TECHDOCS is set but {what}", pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="module")
def mkdocs() -> Path:
    """``mkdocs`` of the TechDocs virtualenv, made (once, then reused) when missing."""
    venv = Path(os.environ.get("MEMSITE_TECHDOCS_VENV") or VENV)
    binary = venv / "bin" / "mkdocs"
    if not binary.is_file():
        made = subprocess.run(
            [sys.executable, "-m", "venv", str(venv)], capture_output=True, check=False
        )
        if made.returncode == 0:
            made = subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", recipes.TECHDOCS_CORE],
                capture_output=True,
                check=False,
            )
        if made.returncode != 0 or not binary.is_file():
            _missing(f"{venv} could not be made: {made.stderr.decode()[-300:]}")
    return binary


@pytest.fixture(scope="module")
def techdocs_cli() -> Path:
    named = os.environ.get("MEMSITE_TECHDOCS_CLI")
    path = Path(named) if named else CLI
    if not (path.is_file() and shutil.which("node")):
        _missing(f"{path} (and node) are not installed; .ci/run installs them")
    return path


def _export(root: Path, out: Path, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["--root", str(root), "build", "--techdocs", str(out), *extra])
    assert result.exit_code == 0, result.output
    return result.output


def _mkdocs_build(mkdocs: Path, source: Path) -> Path:
    done = subprocess.run(
        [str(mkdocs), "build", "--strict"], cwd=source, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return source / "site"


def _locations(site: Path) -> dict[str, dict[str, str]]:
    index = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    return {doc["location"]: doc for doc in index["docs"]}


@pytest.fixture(scope="module")
def sample_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("sample")
    shutil.copytree(SAMPLE, project / "memory", ignore=shutil.ignore_patterns(".memsite"))
    out = project / "techdocs"
    output = _export(project / "memory", out, "--owner", "team-auth")
    assert f"wrote {out / 'catalog-info.yaml'}" in output
    return out


@pytest.fixture(scope="module")
def sample_site(mkdocs: Path, sample_source: Path) -> Path:
    return _mkdocs_build(mkdocs, sample_source)


def _decisions() -> list[tuple[str, str]]:
    return [(anchor(e.id), e.title) for e in Memory(SAMPLE).entries("decision")]


def test_the_sample_builds_strict_with_techdocs_core_and_every_decision_is_searchable(
    sample_site: Path,
) -> None:
    config = yaml.safe_load((sample_site.parent / "mkdocs.yml").read_text("utf-8"))
    assert config["plugins"] == ["techdocs-core"]
    assert "extra" not in config  # no polyfill script
    assert json.loads((sample_site / "techdocs_metadata.json").read_text("utf-8"))["site_name"]
    docs = _locations(sample_site)
    decisions = _decisions()
    assert len(decisions) == 30
    for ref, title in decisions:
        doc = docs[f"decisions/#{ref}"]  # the entry's own section, at its anchor
        assert title.split()[0] in doc["title"]
        assert f'id="{ref}"' in (sample_site / "decisions" / "index.html").read_text("utf-8")


def test_techdocs_cli_generate_writes_its_metadata_and_searchable_entries(
    techdocs_cli: Path, mkdocs: Path, sample_source: Path, tmp_path: Path
) -> None:
    out = tmp_path / "generated"
    env = {**os.environ, "PATH": f"{mkdocs.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [str(techdocs_cli), "generate", "--no-docker", "--source-dir", str(sample_source)]
        + ["--output-dir", str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "dangerous" not in done.stdout + done.stderr  # it had nothing to take out
    metadata = json.loads((out / "techdocs_metadata.json").read_text("utf-8"))
    config = yaml.safe_load((sample_source / "mkdocs.yml").read_text("utf-8"))
    assert metadata["site_name"] == config["site_name"]
    assert "decisions/index.html" in metadata["files"]
    docs = _locations(out)
    for ref, _title in _decisions():
        assert f"decisions/#{ref}" in docs


class _Fetches(html.parser.HTMLParser):
    """What a page would run or fetch: handlers, script URLs, and outside resources."""

    FETCH = {"script": "src", "img": "src", "iframe": "src", "embed": "src", "source": "src"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.live: list[str] = []
        self.outside: list[str] = []
        self.scripts: list[str] = []
        self._script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        for name, value in values.items():
            plain = "".join(ch for ch in value if ch > " ").lower()
            if name.startswith("on") or plain.startswith(("javascript:", "data:text/html")):
                self.live.append(f"<{tag} {name}={value}>")
        fetched = values.get(self.FETCH.get(tag, ""), "")
        if tag == "link" and values.get("rel") in ("stylesheet", "preload", "modulepreload"):
            fetched = values.get("href", "")
        if tag == "object":
            fetched = values.get("data", "")
        if fetched.startswith(("http:", "https:", "//")):
            self.outside.append(f"<{tag}> {fetched}")
        self._script = tag == "script"

    def handle_data(self, data: str) -> None:
        if self._script:
            self.scripts.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._script = False


def _pages(site: Path) -> dict[Path, _Fetches]:
    pages = {}
    for page in site.rglob("*.html"):
        parser = _Fetches()
        parser.feed(page.read_text("utf-8"))
        pages[page] = parser
    return pages


def test_no_page_of_the_techdocs_build_fetches_from_outside(sample_site: Path) -> None:
    pages = _pages(sample_site)
    assert len(pages) > 30
    for page, found in pages.items():
        assert found.outside == [], page
        assert found.live == [], page
    # memsite's own scripts stay out: TechDocs runs none, the portal searches
    assert not (sample_site / "assets" / "memsite" / "search-worker.js").exists()


def hostile_tree(project: Path, payloads: dict[str, str]) -> Path:
    """``project/memory``, a decision per payload: in prose, and in a code block (where
    memsite's escaping leaves text as it is)."""
    root = project / "memory"
    init_tree(root)
    memory = Memory(root, author="")
    for name, payload in payloads.items():
        memory.decide(f"Decision {name}", why="w", body=f"{payload}\n\n~~~~\n{payload}\n~~~~")
    return root


@pytest.fixture(scope="module")
def hostile_site(mkdocs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("hostile")
    root = hostile_tree(project, PAYLOADS)
    out = project / "techdocs"
    _export(root, out)
    for folder in (project, out, out / "docs"):  # what a snippet line would paste in
        (folder / "snippet.txt").write_text(SNIPPET_TEXT, "utf-8")
    return _mkdocs_build(mkdocs, out)


def test_hostile_entries_stay_inert_in_the_techdocs_html(hostile_site: Path) -> None:
    pages = _pages(hostile_site)
    decisions = (hostile_site / "decisions" / "index.html").read_text("utf-8")
    for page, found in pages.items():
        text = page.read_text("utf-8")
        assert found.live == [], (page, found.live)
        assert found.outside == [], (page, found.outside)
        assert not [s for s in found.scripts if MARK in s], page
        assert SNIPPET_TEXT not in text, page  # no file of the machine pasted in
        assert "emojione" not in text and "twemoji" not in text, page
        assert "plantuml" not in text.lower() or "<img" not in text, page
    # each payload is still there, shown as the text it was
    shown = decisions.replace("\u200b", "")
    for needle in ['--8&lt;-- "snippet.txt"', ":smile:", "::uml::", "{% dot g.svg"]:
        assert needle in shown or needle.replace('"', "&quot;") in shown, needle
    assert "&lt;script&gt;window.PWNED=1&lt;/script&gt;" in decisions


def test_techdocs_triggers_become_text_for_the_real_extensions() -> None:
    """The extensions memsite's own environment has (pymdownx) read none of the triggers."""
    import markdown

    text = '--8<-- "snippet.txt"\n\nI :smile:\n\n```\n--8<-- "snippet.txt"\n```\n'
    rendered = markdown.markdown(
        inert(text),
        extensions=["pymdownx.snippets", "pymdownx.emoji", "pymdownx.superfences"],
        extension_configs={"pymdownx.snippets": {"base_path": [str(REPO / "memory")]}},
    )
    assert rendered.count('--8&lt;-- "snippet.txt"') + rendered.count("--8<-- &quot;") == 2
    assert "<img" not in rendered and ":\u200bsmile:" in rendered
    # a diagram fence stays a fence: its code is not read as markup
    fence = inert(f'x\n\n```plantuml\n<b onclick="{MARK}">\n```\n')
    rendered = markdown.markdown(fence, extensions=["pymdownx.superfences"])
    assert "<code>&lt;b onclick" in rendered and "<b " not in rendered
    # what memsite writes itself is left as it is
    assert inert("**Why:** at 12:30:00 `std::vector::push`") == (
        "**Why:** at 12:30:00 `std::vector::push`"
    )


MARKED = "Runbook **bold** `code` <b>x</b> & [link](https://x.y)"
PLAIN = "Runbook bold code \u2039b\u203ax\u2039/b\u203a &amp; link"  # as MkDocs takes a title


def _marked_source(tmp_path: Path) -> Path:
    """A TechDocs source of a tree whose note, decision and learning are titled ``MARKED``."""
    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="")
    memory.note(MARKED, body="Some text.")
    memory.decide(MARKED, why="w")
    memory.learn(MARKED, why="w", category="ops")
    out = tmp_path / "techdocs"
    _export(root, out)
    return out


def _labels(nav: object) -> list[str]:
    if isinstance(nav, list):
        return [label for item in nav for label in _labels(item)]
    if isinstance(nav, dict):
        return [label for key, item in nav.items() for label in [key, *_labels(item)]]
    return []


def test_the_nav_of_the_techdocs_source_titles_pages_in_plain_text(tmp_path: Path) -> None:
    """The nav's labels are the pages' titles in the portal's search index (issue 34)."""
    config = yaml.safe_load((_marked_source(tmp_path) / "mkdocs.yml").read_text("utf-8"))
    labels = _labels(config["nav"])
    assert PLAIN in labels
    assert not [label for label in labels if any(m in label for m in ("**", "`", "](", "<"))]
    assert {"Home", "Timeline", "All notes", "Ops"} <= set(labels)  # plain ones kept


def test_titles_in_the_techdocs_search_index_are_plain_text(mkdocs: Path, tmp_path: Path) -> None:
    site = _mkdocs_build(mkdocs, _marked_source(tmp_path))
    titles = [doc["title"] for doc in _locations(site).values()]
    marked = [title for title in titles if "Runbook" in title]
    # the note's page, its heading, the decision's and the learning's sections
    assert len(marked) >= 4 and set(marked) == {PLAIN}, marked
    (page,) = (site / "notes").rglob("runbook*/index.html")
    assert "<title>Runbook bold code \u2039b\u203ax\u2039/b\u203a & link - " in page.read_text()


def test_a_secret_is_refused_and_nothing_is_exported(root: Path, tmp_path: Path) -> None:
    # written by hand: memsite's own writes redact a token before it reaches a file
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "deploy.md").write_text("# Deploy\n\ntoken ghp_" + "Zq7" * 12, "utf-8")
    out = tmp_path / "techdocs"
    result = CliRunner().invoke(cli, ["--root", str(root), "build", "--techdocs", str(out)])
    assert result.exit_code == 1
    assert "refusing to export secrets" in result.stderr and "Traceback" not in result.output
    assert not (out / "mkdocs.yml").exists() and not (out / "catalog-info.yaml").exists()
    # --allow-secrets exports anyway, as for --docs-only
    args = ["--root", str(root), "build", "--techdocs", str(out), "--allow-secrets"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    assert (out / "mkdocs.yml").exists()


def test_the_catalog_entity_names_the_component_owner_and_techdocs_ref(
    root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "td"
    output = _export(root, out, "--component", "shop-memory", "--owner", "group:default/shop")
    entity = yaml.safe_load((out / "catalog-info.yaml").read_text("utf-8"))
    assert entity["kind"] == "Component"
    assert entity["metadata"]["name"] == "shop-memory"
    assert entity["metadata"]["annotations"] == {"backstage.io/techdocs-ref": "dir:."}
    assert entity["spec"]["owner"] == "group:default/shop"
    assert "Component shop-memory, owner group:default/shop" in output


def test_a_catalog_info_the_repository_has_is_never_overwritten(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    mine = "apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: shop\n"
    (project / "catalog-info.yaml").write_text(mine, "utf-8")
    init_tree(project / "memory")
    out = project / "docs" / "memory"
    output = _export(project / "memory", out)
    assert (project / "catalog-info.yaml").read_text("utf-8") == mine
    assert not (out / "catalog-info.yaml").exists()
    assert (
        f"kept    {project / 'catalog-info.yaml'} (already there): add to its "
        "metadata.annotations: backstage.io/techdocs-ref: dir:./docs/memory"
    ) in output
    # and again over the export's own: kept too
    (out / "catalog-info.yaml").write_text("# mine\n", "utf-8")
    _export(project / "memory", out)
    assert (out / "catalog-info.yaml").read_text("utf-8") == "# mine\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--techdocs", "X", "--component", "no spaces"], "--component 'no spaces': a Backstage"),
        (["--techdocs", "X", "--owner", "a b"], "--owner 'a b': give a Backstage owner"),
        (["--component", "a"], "--component and --owner are for --techdocs DIR: give it too"),
        (["--techdocs", "X", "--docs-only", "Y"], "--techdocs and --docs-only both export"),
    ],
)
def test_bad_techdocs_options_are_usage_errors(
    root: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    args = [str(tmp_path / a) if a in ("X", "Y") else a for a in args]
    result = CliRunner().invoke(cli, ["--root", str(root), "build", *args])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {message}") and "Traceback" not in result.output
    assert not (tmp_path / "X").exists()


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_init_ci_techdocs_writes_a_workflow_that_parses_and_names_its_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["init", "--ci", kind, "--techdocs"])
    assert result.exit_code == 0, result.output
    path = project / (recipes.GITHUB_PATH if kind == "github" else recipes.GITLAB_PATH)
    text = path.read_text("utf-8")
    workflow = yaml.safe_load(text)
    if kind == "github":
        job = workflow["jobs"]["techdocs"]
        component = workflow["env"]["MEMSITE_COMPONENT"]
        commands = [step.get("run", "") for step in job["steps"]]
        (publish,) = [step for step in job["steps"] if "publish" in step.get("run", "")]
        assert "default_branch" in publish["if"]
        # each secret named, and only as a reference to the repository's secret
        assert publish["env"] == {name: f"${{{{ secrets.{name} }}}}" for name in recipes.SECRETS}
    else:
        job = workflow["memsite-techdocs"]
        component = job["variables"]["MEMSITE_COMPONENT"]
        commands = [*job["before_script"], *job["script"]]
        assert job["variables"] == {"MEMSITE_COMPONENT": component}  # no secret filled in
        assert all(name in text for name in recipes.SECRETS)
        assert all(f"${name}" in text for name in ("TECHDOCS_S3_BUCKET_NAME",))
    assert component == "shop-memory"
    joined = "\n".join(commands)
    assert "memsite check" in joined
    assert 'memsite build --techdocs techdocs-source --component "$MEMSITE_COMPONENT"' in joined
    assert f"{recipes.TECHDOCS_CLI} generate --no-docker" in joined
    assert f"{recipes.TECHDOCS_CLI} publish --publisher-type awsS3" in joined
    assert '--entity "default/Component/$MEMSITE_COMPONENT"' in joined
    assert recipes.TECHDOCS_CORE in joined


def test_techdocs_without_ci_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "m"), "--techdocs"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "Error: --techdocs is for the CI workflow: give --ci github or gitlab too"
    )


def test_ci_run_installs_the_versions_the_recipes_pin() -> None:
    script = (REPO / ".ci" / "run").read_text("utf-8")
    assert "memsite/site/publish/recipes.py" in script  # it reads the pins from there
    assert "MEMSITE_REQUIRE_TECHDOCS=1" in script


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('--8<-- "a.txt"', ';--8<-- "a.txt"'),  # the extension's escape: it shows one ";" less
        ('  ;--8<-- "a.txt"', '  ;;--8<-- "a.txt"'),
        ("--8<--", ";--8<--"),
        ('see --8<-- "a.txt"', 'see --8<-- "a.txt"'),  # not a snippet line: left alone
        ("```plantuml\nA\n```", "```text\nA\n```"),
        ("  ```{.uml}\nA\n```", "  ```text\nA\n```"),
        ("```umlaut\nA\n```", "```umlaut\nA\n```"),
        ("```graphviz dot g.svg\nA\n```", "```text\nA\n```"),
        ("```python\nx\n```", "```python\nx\n```"),
        ("x ```uml", "x `\u200b``uml"),
        ("::uml::", ":\u200b:uml::"),
        ("{% dot g.svg", "{\u200b% dot g.svg"),
        ("{++ins++}", "{\u200b++ins++}"),
        (":smile: :notanemoji: 10:30:00", ":\u200bsmile: :notanemoji: 10:30:00"),
    ],
)
def test_each_trigger_becomes_the_same_text_and_nothing_else_changes(
    text: str, expected: str
) -> None:
    assert inert(text) == expected
