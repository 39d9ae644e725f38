"""Zensical's search in a real Chromium (issue 38): memsite's sharded search worker does not
ride along with ``build --engine zensical`` (Zensical's page script has its own search, in a
dialog of its own), so this checks what Zensical's gives instead: typing a decision's words,
the first result is the decision and clicking it lands on the entry's anchor, over HTTP and
from ``file://``, with no request leaving the machine. The time from the first keystroke to
the first result is printed (docs/site.md has the figures)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner

from bench.bench_browser_search import ZENSICAL_BOX as BOX
from bench.bench_browser_search import ZENSICAL_TIMER as TIMER
from memsite import Memory
from memsite.cli import cli
from memsite.site.render import anchor
from tests.browsing import chromium, require_chromium, serve
from tests.zensical_engine import on_path, zensical_bin

REPO = Path(__file__).resolve().parent.parent
require_chromium()

pytestmark = pytest.mark.browser

RESULTS = 'dialog[aria-label="Search"] ol[role="listbox"]'


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    binary = zensical_bin()
    work = tmp_path_factory.mktemp("zensical-search")
    shutil.copytree(REPO / "memory", work / "memory", ignore=shutil.ignore_patterns(".memsite"))
    args = ["--root", str(work / "memory"), "build", "--engine", "zensical"]
    with on_path(binary):
        result = CliRunner().invoke(cli, [*args, "--site-dir", str(work / "site")])
    assert result.exit_code == 0, result.output
    yield work / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as browser:
        yield browser


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_zensicals_first_result_lands_on_the_decision(browser, site: Path, scheme: str) -> None:
    wanted = next(e for e in Memory(REPO / "memory").entries("decision") if "clock skew" in e.title)
    with serve(site) as base:
        url = f"{base}index.html" if scheme == "http" else (site / "index.html").as_uri()
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        errors: list[str] = []
        outside: list[str] = []
        tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        tab.on("pageerror", lambda err: errors.append(str(err)))
        local = (base, "file://", "data:", "blob:")
        tab.on("request", lambda r: None if r.url.startswith(local) else outside.append(r.url))
        tab.goto(url, wait_until="load")
        tab.click(".md-search__button")
        tab.locator(BOX).wait_for()
        tab.evaluate(TIMER)
        tab.locator(BOX).press_sequentially("clock skew")
        first = tab.locator(f"{RESULTS} li a").first
        first.wait_for(timeout=20000)
        tab.wait_for_timeout(500)  # the last keystroke's answer
        took = tab.evaluate("(window.__shown - window.__typed) / 1000")
        print(f"\n{scheme}: Zensical's first result {took:.3f} s after the first keystroke")
        href = urlsplit(first.get_attribute("href") or "")
        assert href.path.endswith("decisions/index.html")
        assert href.fragment == anchor(wanted.id)
        first.click()
        tab.wait_for_url(re.compile(re.escape(f"#{anchor(wanted.id)}") + "$"), timeout=10000)
        assert tab.locator(f"[id='{anchor(wanted.id)}']").is_visible()
        assert errors == [] and outside == []
        context.close()
