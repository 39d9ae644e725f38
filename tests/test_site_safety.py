"""The security review of the site (issue 15): each point as an attacker would try it.

Memory text is never trusted: whatever a tag, a category, a title, a session id or a body
holds, no script runs in any page of the site or of the ``--docs-only`` export (``<head>``,
nav, table of contents and search index included), no page fetches from another host, no
entry can stop or stall the build, and no generated page replaces another. The browser
tests (``-m browser``) prove it in Chromium; each test here failed on the code before its fix.
"""

from __future__ import annotations

import datetime as dt
import html.parser
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from memsite import Memory
from memsite.store.tree import init_tree
from tests.browsing import chromium, require_chromium, serve

NOW = dt.datetime(2026, 6, 8, 14, 30, 5)
AT = "2026-06-08T10:00:00"
OUTSIDE = "https://example.invalid/p.png?d=stolen"


def payload(n: int) -> str:
    """Text that runs a script wherever it is live: raw, escaped once, or as an entity."""
    return (
        f'T{n}</title><script>window.__pwned={n};document.title="PWNED"</script>'
        f'<img src=x onerror="window.__pwned={n}">&lt;img src=x onerror=window.__pwned={n}&gt;'
    )


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")


def hostile_tree(root: Path) -> Path:
    """Every text that can become a page title, a nav label, a heading or a code span."""
    init_tree(root)
    memory = Memory(root, author="", allow_secrets=True, clock=lambda: NOW)
    memory.decide(
        "Decision " + payload(1),
        why=f"![]({OUTSIDE}) and ![ref][pic]\n\n[pic]: //example.invalid/r.png",
        tags=["tag " + payload(2)],
        at=AT,
    )
    memory.learn("Learning " + payload(3), category="cat " + payload(4), at=AT)
    memory.log("Act " + payload(5), details={"k": payload(6)}, result="r", at=AT)
    memory.start_session(
        "Task " + payload(7), session_id="sid` <img src=x onerror=alert(1)> `z", at=AT
    )
    memory.end_session("summary " + payload(8), at="2026-06-08T11:00:00")
    memory.start_session(
        "Live " + payload(9), session_id="live` <img src=x onerror=alert(2)> `", at=AT
    )
    notes = root / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "front.md").write_text(
        f"---\ntitle: Front {payload(10)}\n---\n\nBody\n\n## Part {payload(11)}\n\nText\n", "utf-8"
    )
    (notes / "heading.md").write_text(
        f"# Heading {payload(12)}\n\nBody\n\nSetext {payload(13)}\n---\n\n"
        f"![img](//example.invalid/q.png)\n",
        "utf-8",
    )
    (notes / "metadata.md").write_text(f"title: Meta {payload(14)}\n\n# Own heading\n", "utf-8")
    (root / "persona.md").write_text(f"title: Who {payload(15)}\n\n# Persona {payload(16)}\n")
    return root


class Live(html.parser.HTMLParser):
    """What in a page a browser would run or fetch from memory: scripts that are not the
    theme's, event handlers, script URLs, images from outside."""

    def __init__(self, images: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.in_script = False
        self.images = images

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.in_script = tag == "script"
        for name, value in attrs:
            plain = "".join(ch for ch in (value or "") if ch > " ").lower()
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}={value}>")
            if name in ("href", "src") and plain.startswith(("javascript:", "vbscript:")):
                self.found.append(f"<{tag} {name}={value}>")
            if self.images and tag == "img" and "example.invalid" in plain:
                self.found.append(f"<img src={value}>")

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and ("pwned" in data or "alert" in data):
            self.found.append(f"<script>{data[:60]}")


def live(text: str, images: bool = False) -> list[str]:
    parser = Live(images)
    parser.feed(text)
    parser.close()
    return parser.found


def titles(page: str) -> list[str]:
    """What the browser reads as the page's title: up to the first ``</title>``."""
    return re.findall(r"<title>(.*?)</title>", page, flags=re.DOTALL)[:1]


def scan_site(site: Path, images: bool = False) -> list[str]:
    """Everything live in every built page and in the search index (``images``: and every
    image from another host)."""
    found = []
    for path in sorted(site.rglob("*.html")):
        page = path.read_text("utf-8")
        found += [f"{path.relative_to(site)}: {hit}" for hit in live(page, images)]
        found += [f"{path.relative_to(site)}: <title>{t}" for t in titles(page) if "<" in t]
    from memsite.site.search_index import read_documents

    for doc in read_documents(site):  # what the browser's search is given
        for key in ("title", "page_title", "text") if "page_title" in doc else ("title", "text"):
            found += [f"search {doc['location']} {key}: {hit}" for hit in live(doc[key])]
    return found


def build(root: Path, site: Path, monkeypatch: pytest.MonkeyPatch, config: str = "") -> Path:
    """``memsite build`` of ``root`` (with ``config`` as mkdocs.yml when given)."""
    from memsite.site.builder import build as build_site

    work = site.parent / f"work-{site.name}"
    work.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(work)
    if config:
        (work / "docs").mkdir(exist_ok=True)
        (work / "mkdocs.yml").write_text(config, "utf-8")
        return build_site(None, site_dir=site, config_file=work / "mkdocs.yml")
    return build_site(root, site_dir=site)


def markdown_html(text: str) -> str:
    """A generated page rendered with the site's own markdown extensions, no nh3 pass."""
    import markdown

    from memsite.site.builder import MARKDOWN_EXTENSIONS

    names, configs = [], {}
    for extension in MARKDOWN_EXTENSIONS:
        if isinstance(extension, dict):
            ((name, config),) = extension.items()
            names.append(name)
            configs[name] = config
        else:
            names.append(extension)
    return markdown.markdown(text, extensions=names, extension_configs=configs)


# -- 15.1: a script in <title>, the nav, the toc or the search index ---------------------------


def test_no_memory_text_is_live_in_any_page_head_nav_toc_or_search_index(tmp_path, monkeypatch):
    site = build(hostile_tree(tmp_path / "memory"), tmp_path / "site", monkeypatch)
    assert scan_site(site) == []
    tag_page = next((site / "tags").glob("tag-*.html")).read_text("utf-8")
    assert "<title>Tag: tag T2\u2039/title\u203a\u2039script\u203a" in tag_page  # text, shown
    note = (site / "notes" / "metadata.html").read_text("utf-8")
    assert "Meta T14" in note and "<title>Own heading - Memory</title>" in note  # not metadata


def test_a_heading_never_carries_markup_the_title_could_revive() -> None:
    """Material puts a title through ``striptags``, which unescapes: nothing may revive."""
    from markupsafe import Markup

    from memsite.site.escaping import escape_heading, title_text

    for text in ("a</title><b>", "a&lt;/title&gt;<b>", "`</title>`", "&#60;b&#62; `&lt;i&gt;`"):
        heading = markdown_html("# " + escape_heading(text))
        assert "<" not in Markup(heading).striptags(), text
        assert "<" not in Markup(title_text(text)).striptags(), text


# -- 15.7: the --docs-only export, with no nh3 pass --------------------------------------------

EXPORT_BODIES = [
    "[x]:\n  javascript:alert(1)\n\n[y][x]",
    "> [x]: javascript:alert(1)\n\n[x]",
    "- [x]: javascript:alert(1)\n\n[x]",
    "1. [x]: <javascript:alert(1)>\n\n[x]",
    "\\`<img src=x onerror=alert(1)>`",
    "a ` b\n` <img src=x onerror=alert(1)> `",
    "[y]: javascript:alert(1)\n[\n[y]: javascript:alert(1)\n\n[y]",
    "~~~\n<img src=x onerror=alert(1)>\n~~~",
]
# a "why" shown after its label: a fence there opens nothing, an unclosed one closes another's
EXPORT_WHYS = ["```\n<img src=x onerror=alert(1)>\n```", "# x\n~~~", "w\r[z]: javascript:alert(1)"]


def test_the_docs_only_export_is_inert_without_any_html_pass(tmp_path):
    from memsite.site.builder import export_docs

    root = hostile_tree(tmp_path / "memory")
    memory = Memory(root, author="", allow_secrets=True, clock=lambda: NOW)
    for number, text in enumerate(EXPORT_BODIES):
        memory.decide(f"Export {number}", why="w", body=text, at=AT)
    for number, text in enumerate(EXPORT_WHYS):
        memory.decide(f"Why {number}", why=text, body="[z]", at=AT)
    out = tmp_path / "export"
    export_docs(root, out, NOW)
    pages = sorted((out / "docs").rglob("*.md"))
    assert len(pages) > 8
    for page in pages:
        assert live(markdown_html(page.read_text("utf-8"))) == [], page
    day = (out / "docs" / "activity" / "2026-06-08.md").read_text("utf-8")
    assert "<code>sid` &lt;img src=x onerror=alert(1)&gt; `z</code>" in markdown_html(day)


def test_the_docs_only_export_builds_inert_without_the_plugin(tmp_path, monkeypatch):
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    from memsite.site.builder import export_docs

    out = tmp_path / "export"
    export_docs(hostile_tree(tmp_path / "memory"), out, NOW)
    monkeypatch.chdir(out)
    config = load_config(str(out / "mkdocs.yml"), site_dir=str(tmp_path / "plain"))
    mkdocs_build(config)
    assert scan_site(tmp_path / "plain") == []


# -- 15.8: nothing fetched from outside --------------------------------------------------------


def test_images_in_memory_are_links_unless_the_plugin_allows_them(tmp_path, monkeypatch):
    root = hostile_tree(tmp_path / "memory")
    site = build(root, tmp_path / "site", monkeypatch)
    assert scan_site(site, images=True) == []
    timeline = (site / "decisions" / "index.html").read_text("utf-8")
    assert "<img" not in timeline.split("<article", 1)[1]
    assert f'href="{OUTSIDE.replace("&", "&amp;")}"' in timeline
    allowed = build(
        root,
        tmp_path / "allowed",
        monkeypatch,
        f"site_name: M\ntheme: material\nplugins:\n  - memsite:\n      root: {root}\n"
        "      remote_images: true\n",
    )
    timeline = (allowed / "decisions" / "index.html").read_text("utf-8")
    assert f'<img alt="" src="{OUTSIDE.replace("&", "&amp;")}"' in timeline
    assert "img-src 'self' data: https: http:" in timeline


def test_every_page_carries_a_policy_that_blocks_outside_requests(tmp_path, monkeypatch):
    site = build(hostile_tree(tmp_path / "memory"), tmp_path / "site", monkeypatch)
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    for path in pages:
        head = path.read_text("utf-8").split("<head>", 1)[1]
        assert head.startswith('<meta http-equiv="Content-Security-Policy"'), path
        policy = html.unescape(re.search(r'content="([^"]*)"', head).group(1))
        for rule in ("default-src 'self'", "img-src 'self' data:;", "connect-src 'self'"):
            assert rule in policy, (path, rule)
        assert "https:" not in policy and "*" not in policy


# -- 15.10: nothing in memory stops or stalls the build ----------------------------------------

NESTED = "  - " * 500 + "x"
BRACKETS = "[" * 50_000 + "]" * 50_000


def test_deep_nesting_and_bracket_runs_build_quickly_and_show_the_entry(tmp_path, monkeypatch):
    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="", clock=lambda: NOW)
    nested = memory.decide("Nested list", why="w", body=NESTED, at=AT)
    lines = memory.decide(
        "Nested lines", why="w", body="\n".join("  " * i + "- y" for i in range(500)), at=AT
    )
    memory.learn("Bracket runs", category="c", body=BRACKETS, at=AT)
    started = time.monotonic()
    site = build(root, tmp_path / "site", monkeypatch)
    assert time.monotonic() - started < 30  # a bound against minutes, not a speed test
    timeline = (site / "decisions" / "index.html").read_text("utf-8")
    assert f'id="{nested}"' in timeline and f'id="{lines}"' in timeline
    assert "Bracket runs" in (site / "learnings" / "c.html").read_text("utf-8")


def test_check_warns_about_every_entry_the_site_must_bound(tmp_path):
    from memsite.store.check import check_tree

    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="", clock=lambda: NOW)
    nested = memory.decide("Nested", why="w", body=NESTED, at=AT)
    brackets = memory.learn("Brackets", category="c", body=BRACKETS, at=AT)
    plain = memory.decide("Plain", why="w", body="- a\n  - b\n\n[x](https://x.example)", at=AT)
    warnings = [p for p in check_tree(root) if p.severity == "warning"]
    text = "\n".join(str(p) for p in warnings)
    assert nested in text and "nests" in text
    assert brackets in text and "paragraph of 100,000 characters" in text
    assert plain not in text


def test_a_page_that_still_fails_shows_an_error_block_naming_the_entry(tmp_path, monkeypatch):
    import markdown

    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="", clock=lambda: NOW)
    fine = memory.decide("Fine", why="w", body="all good", at=AT)
    broken = memory.decide("Broken", why="w", body="BREAKS-THE-RENDERER", at=AT)
    convert = markdown.Markdown.convert

    def failing(self: markdown.Markdown, source: str) -> str:
        if "BREAKS-THE-RENDERER" in source:
            raise RecursionError("maximum recursion depth exceeded")
        return convert(self, source)

    monkeypatch.setattr(markdown.Markdown, "convert", failing)
    site = build(root, tmp_path / "site", monkeypatch)
    timeline = (site / "decisions" / "index.html").read_text("utf-8")
    assert f'id="{fine}"' in timeline and "all good" in timeline
    assert f'id="{broken}"' in timeline and "could not render entry" in timeline
    assert "RecursionError" in timeline


# -- 15.11: the nav stays bounded however many notes there are -------------------------------


def test_notes_beyond_the_nav_limit_are_reached_from_the_notes_page(tmp_path, monkeypatch):
    root = tmp_path / "memory"
    init_tree(root)
    for number in range(12):
        folder = root / ("notes" if number % 2 else "runbooks")
        folder.mkdir(exist_ok=True)
        (folder / f"n{number:02}.md").write_text(
            f"# Note {number:02}\n\nDate: 2026-05-{number + 1:02}\n"
        )
    config = (
        "site_name: M\nuse_directory_urls: false\ntheme:\n  name: material\n  font: false\n"
        f"plugins:\n  - search\n  - memsite:\n      root: {root}\n      notes_in_nav: 5\n"
    )
    site = build(root, tmp_path / "site", monkeypatch, config)
    home = (site / "index.html").read_text("utf-8")  # the home page links no note itself
    in_nav = set(re.findall(r'href="(notes/[^"#]+\.html)"', home))
    assert 0 < len(in_nav) <= 5
    index = (site / "notes.html").read_text("utf-8")
    listed = set(re.findall(r'href="(notes/[^"#]+\.html)"', index.split("<article", 1)[1]))
    assert len(listed) == 12 and all((site / uri).is_file() for uri in listed)


# -- 15.12: no generated page replaces another -------------------------------------------------


def test_a_tag_or_category_named_index_never_replaces_an_index_page(tmp_path, monkeypatch):
    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="", clock=lambda: NOW)
    memory.decide("Tagged index", why="w", tags=["Index", "other"], at=AT)
    memory.learn("Filed under INDEX", category="INDEX", at=AT)
    memory.learn("Filed elsewhere", category="elsewhere", at=AT)
    site = build(root, tmp_path / "site", monkeypatch)
    tags = (site / "tags" / "index.html").read_text("utf-8")
    assert "<h1" in tags and ">Tags<" in tags and "tags/other" not in tags
    assert 'href="other.html"' in tags
    learnings = (site / "learnings" / "index.html").read_text("utf-8")
    assert "2 learnings in 2 categories" in learnings
    pages = [p.read_text("utf-8") for p in site.rglob("*.html")]
    assert sum("Tag: Index" in page for page in pages) == 1
    assert sum('id="2026-06-08-filed-under-index"' in page for page in pages) == 1


def test_tags_and_categories_that_fold_together_lose_nothing(tmp_path, monkeypatch):
    from memsite.site.pages import build_site

    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="", clock=lambda: NOW)
    upper = memory.decide("Upper", why="w", tags=["API"], at=AT)
    lower = memory.decide("Lower", why="w", tags=["api"], at=AT)
    first = memory.learn("First", category="Testing", at=AT)
    second = memory.learn("Second", category="testing", at=AT)
    uris = [page.uri for page in build_site(root, NOW, related=False).pages]
    assert len(uris) == len(set(uris))
    site = build(root, tmp_path / "site", monkeypatch)
    pages = {p.relative_to(site).as_posix(): p.read_text("utf-8") for p in site.rglob("*.html")}
    tag = [text for uri, text in pages.items() if uri.startswith("tags/") and upper in text]
    assert len(tag) == 1 and lower in tag[0] and "API" in tag[0] and "api" in tag[0]
    category = [text for uri, text in pages.items() if f'id="{first}"' in text]
    assert len(category) == 1 and f'id="{second}"' in category[0]


# -- the browser: Chromium over HTTP (and file://) ---------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    require_chromium()  # skips only the browser tests here
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The hostile tree built with the built-in configuration and served from 127.0.0.1."""
    from memsite.site.builder import build as build_site

    work = tmp_path_factory.mktemp("hostile-site")
    root = hostile_tree(work / "memory")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NO_MKDOCS_2_WARNING", "1")
        patch.chdir(work)
        site = build_site(root, site_dir=work / "site")
    with serve(site) as url:
        yield site, url


@pytest.fixture
def tab(browser):
    """A page that records console errors and every request it makes."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.errors, page.requests = [], []
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    page.on("request", lambda request: page.requests.append(request.url))
    yield page
    context.close()


def page_kinds(site: Path) -> list[str]:
    """One page of every kind the plugin makes."""
    kinds = [
        "index.html",
        "decisions/index.html",
        "tags/index.html",
        "learnings/index.html",
        "activity/index.html",
        "activity/2026-06-08.html",
        "persona.html",
    ]
    kinds.append(next((site / "tags").glob("tag-*.html")).relative_to(site).as_posix())
    kinds.append(next((site / "learnings").glob("cat-*.html")).relative_to(site).as_posix())
    kinds += [p.relative_to(site).as_posix() for p in sorted((site / "notes").rglob("*.html"))]
    return kinds


@pytest.mark.browser
def test_no_script_from_memory_runs_in_any_kind_of_page(tab, hostile_site):
    site, url = hostile_site
    for kind in page_kinds(site):
        tab.goto(url + kind)
        tab.wait_for_timeout(150)
        assert tab.evaluate("window.__pwned") is None, kind
        assert tab.title() != "PWNED", kind  # what the payload would set
    assert [u for u in tab.requests if urlsplit(u).hostname not in ("127.0.0.1", None)] == []


@pytest.mark.browser
def test_search_works_and_no_request_leaves_the_machine_over_http(tab, hostile_site):
    site, url = hostile_site
    for kind in page_kinds(site):
        tab.goto(url + kind)
    tab.goto(url)
    tab.click("input.md-search__input")
    tab.keyboard.type("Decision")
    tab.locator(".md-search-result__item").first.wait_for(timeout=15000)
    assert tab.locator(".md-search-result__item").count() >= 1
    outside = [u for u in tab.requests if urlsplit(u).hostname not in ("127.0.0.1", None)]
    assert outside == [] and tab.errors == []


@pytest.mark.browser
def test_search_works_and_nothing_is_fetched_over_file_urls(tab, hostile_site):
    site, _ = hostile_site
    for kind in page_kinds(site):
        tab.goto((site / kind).as_uri())
    tab.goto((site / "index.html").as_uri())
    tab.click("input.md-search__input")
    tab.keyboard.type("Decision")
    tab.locator(".md-search-result__item").first.wait_for(timeout=15000)
    assert [u for u in tab.requests if not u.startswith(("file:", "blob:", "data:"))] == []
    assert tab.errors == []
