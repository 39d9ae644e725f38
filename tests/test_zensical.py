"""`memsite build --engine zensical` (issue 38): the whole site built by the real Zensical
(pinned in pyproject's ``zensical`` extra) from the pages the MkDocs plugin renders, with what
the MkDocs build guarantees: every page, entry anchors in the search index, hostile text inert,
nothing fetched from outside, the secret gate, and ``--strict``. Each build runs once per
module; see tests/zensical_engine.py for where the command comes from."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.site.builder import MARKDOWN_EXTENSIONS
from memsite.site.pages import build_site
from memsite.site.publish import zensical
from memsite.site.render import anchor
from memsite.store.tree import init_tree
from tests.test_techdocs import MARK, PAYLOADS, SNIPPET_TEXT, _pages, hostile_tree
from tests.zensical_engine import on_path, zensical_bin

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "memory"
# what Zensical's own extensions would do with memory text, were they on: paste a file
# (snippets), evaluate Jinja (macros), make a bare address a link (magiclink), draw emoji,
# typeset maths
ZENSICAL_PAYLOADS = {
    **PAYLOADS,
    "jinja": "{{ config.site_name }} {% for x in [1,2] %}LOOP{{ x }}{% endfor %}",
    "bare address": "fetch https://example.org/track.png now",
    "math": r"$$\href{javascript:alert(1)}{x}$$",
    "mermaid": "```mermaid\ngraph TD; A-->B\n```",
}


@pytest.fixture(scope="module")
def zensical_on_path() -> Iterator[Path]:
    binary = zensical_bin()
    with on_path(binary):
        yield binary


def _build(root: Path, site: Path, *extra: str) -> str:
    result = CliRunner().invoke(
        cli, ["--root", str(root), "build", "--site-dir", str(site), *extra]
    )
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def sample_site(zensical_on_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("sample")
    shutil.copytree(SAMPLE, project / "memory", ignore=shutil.ignore_patterns(".memsite"))
    site = project / "site"
    output = _build(project / "memory", site, "--engine", "zensical", "--strict")
    assert output.strip() == f"built {site.resolve()} (Zensical)"
    return site


def _search(site: Path) -> dict[str, dict[str, str]]:
    index = json.loads((site / "search.json").read_text("utf-8"))
    return {item["location"]: item for item in index["items"]}


def test_every_decision_is_an_anchor_and_in_zensicals_search_index(sample_site: Path) -> None:
    decisions = [(anchor(e.id), e.title) for e in Memory(SAMPLE).entries("decision")]
    assert len(decisions) == 30
    page = (sample_site / "decisions" / "index.html").read_text("utf-8")
    found = _search(sample_site)
    for ref, title in decisions:
        assert f'id="{ref}"' in page
        item = found[f"decisions/index.html#{ref}"]  # the entry's own section
        assert title.split()[0] in item["title"]


def test_every_page_the_plugin_renders_is_a_page_of_the_zensical_site(sample_site: Path) -> None:
    pages = build_site(SAMPLE, dt.datetime.now()).pages
    uris = {page.uri for page in pages}
    # the timeline, learnings, activity and its days, code, notes, tags, persona
    for wanted in ("decisions/index.md", "learnings/index.md", "activity/index.md"):
        assert wanted in uris
    assert any(u.startswith("tags/") and u != "tags/index.md" for u in uris)
    assert any(u.startswith("notes/") for u in uris) and "code/index.md" in uris
    for uri in uris:
        assert (sample_site / uri).with_suffix(".html").is_file(), uri
    # the day pager links a day to the days before and after it
    days = sorted(u for u in uris if re.fullmatch(r"activity/\d{4}-\d\d-\d\d\.md", u))
    middle = Path(days[len(days) // 2]).stem
    before, after = Path(days[len(days) // 2 - 1]).stem, Path(days[len(days) // 2 + 1]).stem
    text = (sample_site / "activity" / f"{middle}.html").read_text("utf-8")
    nav = re.search(r'class="ms-daynav".*?</p>', text, re.S)
    assert nav is not None
    assert f'href="{before}.html"' in nav.group(0) and f'href="{after}.html"' in nav.group(0)


def test_no_page_of_the_zensical_site_fetches_from_outside(sample_site: Path) -> None:
    pages = _pages(sample_site)
    assert len(pages) > 60
    for page, found in pages.items():
        assert found.outside == [], page
        assert found.live == [], page
        # the MkDocs build's policy: nothing from another host, whatever a page holds
        assert "default-src 'self'" in page.read_text("utf-8"), page


@pytest.fixture(scope="module")
def hostile(zensical_on_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("hostile")
    root = hostile_tree(project, ZENSICAL_PAYLOADS)
    Memory(root, author="").decide(f"Title x</title><script>window.{MARK}=1</script>", why="w")
    for folder in (project, root):  # what a snippet line would paste in
        (folder / "snippet.txt").write_text(SNIPPET_TEXT, "utf-8")
    _build(root, project / "site", "--engine", "zensical", "--strict")
    return project


def test_hostile_decisions_stay_inert_in_the_zensical_site(hostile: Path) -> None:
    site = hostile / "site"
    for page, found in _pages(site).items():
        text = page.read_text("utf-8")
        assert found.live == [], (page, found.live)
        assert found.outside == [], (page, found.outside)
        assert not [s for s in found.scripts if MARK in s], page
        assert SNIPPET_TEXT not in text and "LOOP1" not in text, page
        title = re.search(r"<title>(.*?)</title>", text, re.S)
        assert title is not None and "<" not in title.group(1), page
    decisions = (site / "decisions" / "index.html").read_text("utf-8")
    # each payload shown as the text it was
    assert "&lt;script&gt;window.PWNED=1&lt;/script&gt;" in decisions
    assert "config.site_name }}" in decisions
    assert 'href="https://example.org' not in decisions
    assert "twemoji" not in decisions and "arithmatex" not in decisions


def test_zensical_builds_with_memsites_extensions_only(hostile: Path) -> None:
    # Zensical adds its many default extensions only to a configuration that lists none
    work = next((hostile / ".memsite" / "zensical").iterdir())
    config = yaml.safe_load((work / "mkdocs.yml").read_text("utf-8"))
    assert config["markdown_extensions"] == MARKDOWN_EXTENSIONS
    assert config["plugins"] == ["search", "offline"]
    assert "macros" not in (work / "mkdocs.yml").read_text("utf-8")


def test_a_secret_is_refused_and_no_site_is_written(
    zensical_on_path: Path, root: Path, tmp_path: Path
) -> None:
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "deploy.md").write_text("# Deploy\n\ntoken ghp_" + "Zq7" * 12, "utf-8")
    site = tmp_path / "site"
    args = ["--root", str(root), "build", "--engine", "zensical", "--site-dir", str(site)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: refusing to export secrets from")
    assert "notes/deploy.md:3" in result.stderr and "Traceback" not in result.output
    assert not site.exists()
    assert CliRunner().invoke(cli, [*args, "--allow-secrets"]).exit_code == 0
    assert (site / "notes" / "deploy.html").is_file()


def test_strict_fails_on_a_zensical_warning_and_names_it(
    zensical_on_path: Path, root: Path, tmp_path: Path
) -> None:
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "broken.md").write_text("# Broken\n\nSee [it](nowhere.md).\n", "utf-8")
    site = tmp_path / "site"
    args = ["--root", str(root), "build", "--engine", "zensical", "--site-dir", str(site)]
    strict = CliRunner().invoke(cli, [*args, "--strict"])
    assert strict.exit_code == 1
    assert strict.stderr == (
        "Error: site not built: zensical: notes/broken.md:3:10: page does not exist\n"
    )
    assert not site.exists()
    loose = CliRunner().invoke(cli, args)
    assert loose.exit_code == 0
    assert loose.stderr == "zensical: notes/broken.md:3:10: page does not exist\n"
    assert (site / "notes" / "broken.html").is_file()


def test_memsite_toml_chooses_the_engine(
    zensical_on_path: Path, root: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    args = ["--root", str(root), "build", "--site-dir", str(site)]
    (root / "memsite.toml").write_text('[site]\nengine = "zensical"\n', "utf-8")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.output == f"built {site.resolve()} (Zensical)\n"
    assert (site / "search.json").is_file()  # Zensical's search index, not MkDocs'
    (root / "memsite.toml").write_text('[site]\nengine = "hugo"\n', "utf-8")
    bad = CliRunner().invoke(cli, args)
    assert bad.exit_code == 1
    assert bad.stderr == (
        f"Error: {root / 'memsite.toml'}: [site] engine must be one of 'mkdocs', 'zensical'\n"
    )


def test_engine_is_refused_beside_an_export(root: Path, tmp_path: Path) -> None:
    args = ["--root", str(root), "build", "--engine", "zensical", "--docs-only", str(tmp_path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "--engine builds a site: give it without --docs-only or --techdocs" in result.stderr


def test_zensicals_problems_are_one_line_each() -> None:
    drawn = (
        "Build started\n\x1b[33mWarning:\x1b[0m page does not exist\n"
        "   \x1b[38;5;246m╭─[\x1b[0m x/broken.md:3:15 \x1b[38;5;246m]\x1b[0m\n"
        "   │\n 3 │ See [missing](nowhere.md)\n───╯\n1 issue found\n"
    )
    assert zensical.problems(drawn) == ["x/broken.md:3:15: page does not exist"]


def test_the_extra_and_ci_install_the_pinned_zensical_and_properdocs() -> None:
    import tomllib

    from memsite.site.builder import PROPERDOCS

    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["optional-dependencies"]["zensical"] == [zensical.ZENSICAL]
    script = (REPO / ".ci" / "run").read_text("utf-8")
    assert "MEMSITE_REQUIRE_ZENSICAL=1" in script and "MEMSITE_REQUIRE_PROPERDOCS=1" in script
    assert zensical.ZENSICAL.startswith("zensical==") and PROPERDOCS.startswith("properdocs==")


def _steps(kind: str, text: str) -> list[str]:
    """The commands of a workflow, in order."""
    workflow = yaml.safe_load(text)
    if kind == "github":
        return [s["run"] for s in workflow["jobs"]["build"]["steps"] if "run" in s]
    return workflow[".memsite"]["before_script"] + workflow[".memsite"]["script"]


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_init_ci_engine_zensical_installs_and_builds_with_zensical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", "--ci", kind, "--engine", "zensical"])
    assert result.exit_code == 0, result.output
    path = ".github/workflows/memsite.yml" if kind == "github" else ".gitlab-ci.yml"
    steps = _steps(kind, (tmp_path / path).read_text("utf-8"))
    installs = [s for s in steps if s.startswith("python -m pip install ")]
    assert installs[-1] == f"python -m pip install {zensical.ZENSICAL}"
    site = "site" if kind == "github" else "public"
    assert f"memsite build --strict --engine zensical --site-dir {site}" in steps


def test_init_ci_takes_the_trees_engine_and_mkdocs_stays_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    init_tree(tmp_path / "memory")
    (tmp_path / "memory" / "memsite.toml").write_text('[site]\nengine = "zensical"\n', "utf-8")
    assert CliRunner().invoke(cli, ["init", "--ci", "gitlab"]).exit_code == 0
    assert "build --strict --engine zensical" in (tmp_path / ".gitlab-ci.yml").read_text("utf-8")
    assert CliRunner().invoke(cli, ["init", "--ci", "github", "mine"]).exit_code == 0
    text = (tmp_path / ".github" / "workflows" / "memsite.yml").read_text("utf-8")
    assert "memsite --root mine build --strict --site-dir site" in text
    assert "zensical" not in text
    bad = CliRunner().invoke(cli, ["init", "--engine", "zensical"])
    assert bad.exit_code == 2 and "--engine is for the CI workflow" in bad.stderr
    both = CliRunner().invoke(cli, ["init", "--ci", "github", "--techdocs", "--engine", "zensical"])
    assert both.exit_code == 2 and "--techdocs builds with MkDocs" in both.stderr


def test_a_site_dir_holding_the_tree_is_refused_and_nothing_is_deleted(
    zensical_on_path: Path, root: Path
) -> None:
    before = sorted(p.relative_to(root.parent) for p in root.parent.rglob("*"))
    for site in (root.parent, root, root / "public"):
        args = ["--root", str(root), "build", "--engine", "zensical", "--site-dir", str(site)]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1, site
        assert result.stderr == (
            f"Error: site not built: --site-dir {site} holds the memory tree or its cache, or "
            "lies inside the tree, and the site replaces it whole: give a folder of its own "
            "(default: site/ beside the tree)\n"
        )
    assert sorted(p.relative_to(root.parent) for p in root.parent.rglob("*")) == before


def test_without_zensical_the_build_says_how_to_install_it(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.executable", str(tmp_path / "bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    site = tmp_path / "site"
    args = ["--root", str(root), "build", "--engine", "zensical", "--site-dir", str(site)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: site not built: Zensical is not installed; pip install 'memsite[zensical]' "
        "(or put a zensical command on PATH), or build with --engine mkdocs\n"
    )
    assert not site.exists()


def test_the_site_name_from_the_configuration_is_inert_and_a_missing_one_is_named(
    zensical_on_path: Path, root: Path, tmp_path: Path
) -> None:
    config = tmp_path / "mkdocs.yml"
    # Zensical writes the name raw into <title>, the header and aria-label="…"
    name = f'R&D </title><script>window.{MARK}=1</script> " onmouseover="window.{MARK}=1'
    config.write_text(yaml.safe_dump({"site_name": name}), "utf-8")
    site = tmp_path / "site"
    args = ["--root", str(root), "build", "--engine", "zensical", "--site-dir", str(site)]
    assert CliRunner().invoke(cli, [*args, "-f", str(config)]).exit_code == 0
    for page, found in _pages(site).items():
        assert found.live == [] and not [s for s in found.scripts if MARK in s], page
    shown = "R&D \u2039/title\u203a\u2039script\u203awindow.PWNED=1\u2039/script\u203a \u201d"
    assert f"<title>Home - {shown}" in (site / "index.html").read_text("utf-8")
    missing = CliRunner().invoke(cli, [*args, "-f", str(tmp_path / "nope.yml")])
    assert missing.exit_code == 1
    assert missing.stderr == f"Error: {tmp_path / 'nope.yml'}: no such MkDocs configuration\n"
