"""Real MkDocs builds of the memory site: strict, offline, safe, secret-free."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.site.search_index import read_documents
from memsite.site.workflows import render_workflow
from memsite.store.tree import init_tree

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "memory"
HOSTILE = "<script>alert('pwned')</script> <img src=x onerror=alert(1)> [go](javascript:alert(2))"
# Resource loads: src=, <link href=, CSS url() and @import.
LOADS = re.compile(
    r"""(?:\bsrc\s*=\s*["']?|<link\b[^>]*\bhref\s*=\s*["']?|url\(\s*["']?|@import\s+["']?)"""
    r"""(?:https?:)?//""",
    re.IGNORECASE,
)
# Outside URLs that Material's bundle holds but only fetches for features we do not use
# (mermaid diagrams, a ResizeObserver polyfill for old browsers, repository facts).
JS_ALLOWED = ("unpkg.com/mermaid", "unpkg.com/resize-observer-polyfill", "api.github.com")


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")


def build(tmp_path: Path, monkeypatch, root: Path, *args: str) -> tuple[int, str, Path]:
    """``memsite --root ROOT build`` from a folder without mkdocs.yml (the built-in config)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    monkeypatch.chdir(work)
    result = CliRunner().invoke(cli, ["--root", str(root), "build", *args])
    return result.exit_code, result.output, root.parent / "site"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    shutil.copytree(SAMPLE, root)
    return root


def test_the_sample_builds_strict_with_every_kind_of_page(tmp_path, monkeypatch, sample):
    code, output, site = build(tmp_path, monkeypatch, sample, "--strict")
    assert code == 0, output
    for page in ("index.html", "decisions/index.html", "tags/index.html", "learnings/index.html"):
        assert (site / page).is_file()
    assert len(list((site / "activity").glob("2026-*.html"))) >= 10
    assert (site / "persona.html").is_file() and list((site / "notes").rglob("*.html"))
    home = (site / "index.html").read_text("utf-8")
    assert "md-tabs" in home and 'data-md-color-scheme="slate"' in home  # tabs + palette toggle
    search = json.dumps(read_documents(site))  # what the browser's search is given
    decision = next(e for e in Memory(sample).entries("decision"))
    assert f"decisions/index.html#{decision.id}" in search  # a section per entry, by its id


def test_the_built_site_loads_nothing_from_outside(tmp_path, monkeypatch, sample):
    code, output, site = build(tmp_path, monkeypatch, sample)
    assert code == 0, output
    for path in site.rglob("*"):
        if path.suffix not in (".html", ".css", ".js"):
            continue
        text = path.read_text("utf-8", errors="replace")
        assert not LOADS.search(text), f"{path} loads {LOADS.search(text).group(0)!r}"
        if path.suffix == ".js":
            for url in re.findall(r"https?://[^\s\"'`)]+", text):
                allowed = "/LICENSE" in url or any(ok in url for ok in JS_ALLOWED)
                assert allowed or "iframe-worker" not in url, f"{path}: {url}"
    html = (site / "index.html").read_text("utf-8")
    assert "assets/memsite/iframe-worker/shim.js" in html  # the vendored shim, not a CDN


def test_a_hostile_entry_renders_as_text(tmp_path, monkeypatch):
    root = tmp_path / "memory"
    init_tree(root)
    Memory(root).decide("Sanitize <b>everything</b>", why=HOSTILE, body=HOSTILE, at="2026-03-02")
    Memory(root).log("pasted <img src=x onerror=alert(3)>", result=HOSTILE, at="2026-03-02T10:00")
    code, output, site = build(tmp_path, monkeypatch, root, "--strict")
    assert code == 0, output
    for page in ("decisions/index.html", "activity/2026-03-02.html", "index.html"):
        html = (site / page).read_text("utf-8")
        assert "&lt;script&gt;alert('pwned')&lt;/script&gt;" in html or "alert" not in html
        assert "<script>alert" not in html
        assert not re.search(r"<img[^>]*onerror", html)
        assert 'href="javascript:' not in html


def test_hostile_titles_in_notes_and_tags_never_reach_the_nav_as_html(tmp_path, monkeypatch):
    root = tmp_path / "memory"
    init_tree(root)
    (root / "notes").mkdir()
    (root / "notes" / "evil.md").write_text(
        "# <img src=x onerror=alert(1)> plan\n\nText.\n", "utf-8"
    )
    Memory(root).learn("Tagged", category="<b onmouseover=alert(2)>x</b>", at="2026-03-02")
    code, output, site = build(tmp_path, monkeypatch, root, "--strict")
    assert code == 0, output
    for path in site.rglob("*.html"):
        # <title> included: Material's striptags turns escaped markup back into tags there
        html = path.read_text("utf-8")
        assert not re.search(r"<img[^>]*onerror", html), path
        assert not re.search(r"<b [^>]*onmouseover", html), path
    # a title or nav label never holds "<" (issue 15.1): look-alikes show instead
    assert "\u2039img src=x onerror=alert(1)\u203a plan" in (site / "index.html").read_text("utf-8")


def test_a_secret_in_the_tree_stops_the_build_with_file_and_line(tmp_path, monkeypatch, sample):
    decisions = sample / "cold" / "decisions.md"
    lines = decisions.read_text("utf-8").splitlines()
    lines.insert(5, "- **Note:** deploy with ghp_" + "a1B2c3D4" * 5)
    decisions.write_text("\n".join(lines) + "\n", "utf-8")
    code, output, site = build(tmp_path, monkeypatch, sample)
    assert code == 1
    assert "cold/decisions.md:6: github token" in output
    assert not (site / "index.html").exists()
    code, output, site = build(tmp_path, monkeypatch, sample, "--allow-secrets")
    assert code == 0, output


def test_a_small_generated_tree_builds_strict(tmp_path, monkeypatch):
    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="bot")
    previous = None
    for day in range(1, 29):
        for hour in range(9, 17):
            memory.log(
                "ran tests",
                {"passed": str(day * hour)},
                "ok",
                at=f"2026-02-{day:02d}T{hour:02d}:00",
            )
        previous = memory.decide(
            f"Decision number {day}",
            why="Because.",
            supersedes=previous if day % 3 == 0 else None,
            tags=[f"area-{day % 4}"],
            at=f"2026-02-{day:02d}",
        )
        memory.learn(f"Lesson {day}", category=f"cat-{day % 3}", at=f"2026-02-{day:02d}")
    code, output, site = build(tmp_path, monkeypatch, root, "--strict")
    assert code == 0, output
    assert len(list((site / "activity").glob("2026-02-*.html"))) == 28
    nav = (site / "index.html").read_text("utf-8")
    assert "2026-02-14.html" not in nav  # day pages stay out of the nav rendered on every page


def test_docs_only_writes_markdown_that_builds_without_the_plugin(tmp_path, monkeypatch, sample):
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    out = tmp_path / "export"
    code, output, _ = build(tmp_path, monkeypatch, sample, "--docs-only", str(out))
    assert code == 0, output
    assert (out / "docs" / "decisions" / "index.md").is_file()
    assert "memsite" not in (out / "mkdocs.yml").read_text("utf-8").split("plugins:")[1][:60]
    config = load_config(str(out / "mkdocs.yml"), strict=True, site_dir=str(tmp_path / "plain"))
    mkdocs_build(config)
    assert (tmp_path / "plain" / "decisions" / "index.html").is_file()


def test_the_repository_mkdocs_yml_builds_the_bundled_sample(tmp_path, monkeypatch):
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    config = load_config(str(REPO / "mkdocs.yml"), strict=True, site_dir=str(tmp_path / "site"))
    assert config.docs_dir.endswith("site-docs")
    mkdocs_build(config)
    assert (tmp_path / "site" / "decisions" / "index.html").is_file()
    assert not (tmp_path / "site" / "benchmarks.html").exists()  # developer docs stay out


def test_plugin_options_in_mkdocs_yml_exclude_and_override_templates(tmp_path, monkeypatch, sample):
    import yaml

    from memsite.site.builder import default_config

    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "ours").mkdir()
    (work / "ours" / "persona.md.j2").write_text("# Never shown\n", "utf-8")
    (work / "ours" / "tags.md.j2").write_text("# Our tags\n\n{{ tags|length }} tags.\n", "utf-8")
    config = default_config(Path("../memory"), Path("docs"), Path("site"))
    config["plugins"][-1] = {
        "memsite": {
            "root": "../memory",
            "templates_dir": "ours",
            "exclude": ["persona.md", "notes"],
        }
    }
    (work / "mkdocs.yml").write_text(yaml.safe_dump(config), "utf-8")
    monkeypatch.chdir(work)
    result = CliRunner().invoke(cli, ["build", "--strict"])  # ./mkdocs.yml, its own root
    assert result.exit_code == 0, result.output
    site = work / "site"
    assert "Our tags" in (site / "tags" / "index.html").read_text("utf-8")
    assert not (site / "persona.html").exists()
    assert not list((site / "notes").glob("runbook*"))
    assert (site / "notes" / "_" / "cold" / "adr").is_dir()  # only the excluded folder went
    search = json.dumps(read_documents(site))
    assert "persona.html" not in search and "Who this agent is" not in search
    assert "Runbook" not in search


def test_serve_watches_the_memory_tree(tmp_path):
    from memsite.site.plugin import MemsitePlugin

    class Server:
        watched: list[str] = []

        def watch(self, path: str) -> None:
            self.watched.append(path)

    plugin = MemsitePlugin()
    plugin._root = tmp_path / "memory"
    server = Server()
    plugin.on_serve(server, config=None, builder=None)
    assert server.watched == [str(tmp_path / "memory")]


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_init_ci_writes_a_workflow_that_checks_builds_strict_and_publishes(
    tmp_path, monkeypatch, kind
):
    import yaml

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", "--ci", kind])
    assert result.exit_code == 0, result.output
    path, _ = render_workflow(kind)
    text = (tmp_path / path).read_text("utf-8")
    yaml.safe_load(text)
    assert "python -m pip install " in text and "memsite check" in text
    assert "memsite build --strict" in text
    assert ".memsite/" in text  # the index cache is kept between runs
    assert ("deploy-pages" in text) if kind == "github" else ("pages:" in text and "public" in text)
    again = CliRunner().invoke(cli, ["init", "--ci", kind])
    assert f"kept    {tmp_path / path}" in again.output


# -- issue 12: cold builds, folded bodies ------------------------------------------------------


def test_a_fresh_build_indexes_only_what_related_links_name(tmp_path, monkeypatch, sample):
    cache = sample.parent / ".memsite"
    assert not cache.exists()
    code, output, site = build(tmp_path, monkeypatch, sample)
    assert code == 0, output
    # the related links came from an index of decisions, learnings and notes: the day logs'
    # activities (19 chunks of 20 in a year) were not indexed for them
    assert (cache / "related").is_dir() and not (cache / "index").exists()
    timeline = (site / "decisions" / "index.html").read_text("utf-8")
    assert timeline.count('class="ms-related"') >= 10


def test_a_long_body_is_folded_with_a_configuration_that_names_no_extension(tmp_path, monkeypatch):
    from memsite.store.markup import LONG_BODY_CHARS

    root = tmp_path / "memory"
    init_tree(root)
    long = "A line of a long log.\n\n" * (LONG_BODY_CHARS // 20)
    Memory(root).log("dumped the logs", None, "done", body=long, at="2026-03-21T14:05:00")
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "mkdocs.yml").write_text(
        "site_name: Memory\ntheme:\n  name: material\n  font: false\n"
        "plugins:\n  - search\n  - memsite:\n      root: ../memory\n      related: false\n",
        "utf-8",
    )
    monkeypatch.chdir(work)
    result = CliRunner().invoke(cli, ["build", "--strict"])
    assert result.exit_code == 0, result.output
    day = (work / "site" / "activity" / "2026-03-21" / "index.html").read_text("utf-8")
    fold = day[day.index("<details") : day.index("</details>")]
    assert "<summary>Long text: " in fold
    assert fold.count("A line of a long log.") == LONG_BODY_CHARS // 20


def test_the_related_index_reuses_what_the_build_parsed_and_only_while_it_is_current(sample):
    from collections import defaultdict

    from memsite.search.index.related import chunker_of, record_chunks
    from memsite.store.tree import read_tree

    read = read_tree(sample)
    by_path = defaultdict(list)
    for entry in read.parsed.entries:
        by_path[entry.path].append(entry)
    parsed = {rel: (text, by_path.get(rel, [])) for rel, text in read.texts.items()}
    chunker = chunker_of(parsed)
    for rel, text in read.texts.items():  # each file parsed once, the same chunks
        assert chunker(rel, text) == record_chunks(rel, text), rel
    # a file written after the build read it is parsed again, not taken from the stale read
    rel = "cold/decisions.md"
    newer = read.texts[rel] + (
        "\n## 2026-11-30 — Pin the argon2 parameters in settings\n\n- **Why:** Drift.\n"
    )
    headings = [c.heading for c in chunker(rel, newer)]
    assert "2026-11-30 — Pin the argon2 parameters in settings" in headings


def test_a_warm_build_keeps_the_related_links_until_the_memory_changes(
    tmp_path, monkeypatch, sample
):
    from memsite.search.index.cache import SearchIndex

    asked: list[int] = []
    real = SearchIndex.related_many

    def counted(self, ids, *args, **kwargs):
        asked.append(len(ids))
        return real(self, ids, *args, **kwargs)

    monkeypatch.setattr(SearchIndex, "related_many", counted)
    code, output, site = build(tmp_path, monkeypatch, sample)
    assert code == 0, output
    assert asked  # the first build asks the index
    first = (site / "decisions" / "index.html").read_text("utf-8")
    assert first.count('class="ms-related"') >= 10
    asked.clear()
    code, output, site = build(tmp_path, monkeypatch, sample)  # nothing changed: reused
    assert code == 0, output
    assert asked == [] and (site / "decisions" / "index.html").read_text("utf-8") == first
    Memory(sample).decide("Rotate the argon2 pepper yearly", why="Key hygiene for passwords.")
    code, output, site = build(tmp_path, monkeypatch, sample)  # the memory changed: asked
    assert code == 0, output
    assert asked and "Rotate the argon2 pepper yearly" in (
        site / "decisions" / "index.html"
    ).read_text("utf-8")


def test_root_names_the_tree_not_where_the_site_goes(tmp_path, monkeypatch, sample) -> None:
    # Issue 39.7: `memsite --root ../proj/memory build` from another folder wrote ./site there;
    # without --root the site goes beside the tree, and now with it too
    code, output, site = build(tmp_path, monkeypatch, sample)
    assert code == 0, output
    assert site == tmp_path / "site" and (site / "index.html").is_file()
    assert output.strip().endswith(f"built {site}")
    assert not (tmp_path / "work" / "site").exists()


def test_a_project_site_is_named_for_its_repository(tmp_path: Path) -> None:
    # Issue 39.6: every project's site was called "Memory", whatever its repository
    from memsite.site.builder import default_config

    (tmp_path / "shop" / ".git").mkdir(parents=True)
    init_tree(tmp_path / "shop" / "memory")
    config = default_config(tmp_path / "shop" / "memory", Path("docs"), Path("site"))
    assert config["site_name"] == "shop memory"
    init_tree(tmp_path / "loose" / "memory")  # no repository: no name to give
    assert default_config(tmp_path / "loose" / "memory", Path("d"), Path("s"))["site_name"] == (
        "Memory"
    )
