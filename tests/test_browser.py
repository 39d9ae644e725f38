"""The built sample site in a real Chromium: search lands on an entry, nothing leaves the
machine, nothing logs an error, and a hostile entry never runs. Screenshots go to artifacts/."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from tests.browsing import chromium, require_chromium, serve

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
HOSTILE = '<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2">'

require_chromium()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The bundled sample plus one hostile entry, built and served from 127.0.0.1."""
    work = tmp_path_factory.mktemp("browser")
    root = work / "memory"
    shutil.copytree(REPO / "memory", root)
    Memory(root).log("pasted a snippet", result="see body", body=HOSTILE, at="2026-11-26T10:00:00")
    result = CliRunner().invoke(
        cli, ["--root", str(root), "build", "--strict", "--site-dir", str(work / "site")]
    )
    assert result.exit_code == 0, result.output
    with serve(work / "site") as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser, site):
    """A page that records console errors and every request that leaves 127.0.0.1."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.errors, tab.outside = [], []
    tab.on("console", lambda msg: tab.errors.append(msg.text) if msg.type == "error" else None)
    tab.on("pageerror", lambda err: tab.errors.append(str(err)))

    def check(request) -> None:
        host = urlsplit(request.url).hostname
        if request.url.startswith(("http:", "https:", "ws:", "wss:")) and host != "127.0.0.1":
            tab.outside.append(request.url)

    tab.on("request", check)
    yield tab
    context.close()


def shot(tab, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


def test_search_from_home_lands_on_the_entry(page, site):
    page.goto(site)
    shot(page, "home")
    page.click("input.md-search__input")
    page.keyboard.type("clock skew")
    result = page.locator(".md-search-result a[href*='decisions/index.html'][href*='#']").first
    result.wait_for(timeout=15000)
    shot(page, "search")
    target = result.get_attribute("href")
    anchor = target.split("#", 1)[1]
    assert anchor == "2026-11-24-accept-30-seconds-of-clock-skew-when-validating-jwts"
    result.click()
    page.wait_for_function(f"location.hash === '#{anchor}'", timeout=10000)
    heading = page.locator(f"[id='{anchor}']")
    assert heading.count() == 1 and heading.is_visible()
    shot(page, "search-result")
    assert page.errors == [] and page.outside == []


def test_timeline_and_a_day_page(page, site):
    page.goto(site + "decisions/index.html")
    assert page.locator(".ms-badge--superseded").count() >= 1
    assert page.locator(".md-tabs").is_visible()
    shot(page, "timeline")
    page.goto(site + "activity/index.html")
    shot(page, "activity")
    page.locator("article a[href$='2026-11-25.html']").first.click()
    page.wait_for_url("**/activity/2026-11-25.html")
    assert "Wed 25 November 2026" in page.locator("h1").inner_text()
    shot(page, "day")
    assert page.errors == [] and page.outside == []


def test_dark_palette_toggle(page, site):
    page.goto(site)
    before = page.locator("body").get_attribute("data-md-color-scheme")
    page.locator("label.md-header__button[for^='__palette']").first.click()
    after = page.locator("body").get_attribute("data-md-color-scheme")
    assert {before, after} == {"default", "slate"}
    shot(page, "home-dark")
    assert page.errors == []


def test_a_hostile_entry_never_runs(page, site):
    page.goto(site + "activity/2026-11-26.html")
    page.wait_for_timeout(500)
    assert page.evaluate("window.__pwned") is None
    assert "<script>window.__pwned = 1</script>" in page.locator("article").inner_text()
    shot(page, "hostile")
    assert page.outside == []


SESSION_PARTS = """(id) => {
  const found = {files: [], links: [], todos: [], tops: []};
  const heading = document.getElementById(id);
  for (let node = heading.nextElementSibling; node && node.tagName !== "H3";
       node = node.nextElementSibling) {
    for (const li of node.querySelectorAll("li")) {
      found.tops.push(li.getBoundingClientRect().top);
      const code = li.querySelector("code");
      const link = li.querySelector("a");
      const badge = li.querySelector(".ms-badge");
      if (code && !link) found.files.push(code.textContent);
      if (link) found.links.push([badge ? badge.textContent : "", link.textContent,
                                  link.getAttribute("href")]);
      if (li.classList.contains("ms-todo"))
        found.todos.push([li.textContent, getComputedStyle(li, "::before").content]);
    }
  }
  return found;
}"""


def test_an_archived_session_renders_lists_and_linked_titles(page, site):
    page.goto(site + "activity/2026-11-06.html")
    entry = "2026-11-06-session-end-20261106-091035-postgres-session-store-schema"
    page.locator(f"[id='{entry}']").scroll_into_view_if_needed()
    shot(page, "archived-session")
    parts = page.evaluate(SESSION_PARTS, entry)
    assert parts["files"] == [
        "services/auth/store/postgres.py",
        "migrations/versions/0007_sessions.py",
    ]
    assert parts["links"] == [
        [
            "current",
            "Store only a SHA-256 hash of each refresh token",
            "../decisions/index.html#2026-11-06-store-only-a-sha-256-hash-of-each-refresh-token",
        ],
        [
            "superseded",
            "Rate limit login to 5 attempts per minute per account and IP pair",
            "../decisions/index.html#2026-11-06-rate-limit-login-to-5-attempts-per-minute-per-account-and",
        ],
    ]
    assert [text for text, _ in parts["todos"]] == [
        "Write the backfill script that copies live Mongo sessions into Postgres",
        "Ask dev whether migrations go through Alembic or hand-written SQL",
    ]
    assert all(box == '"☐"' for _, box in parts["todos"])  # a checklist, not bullets
    assert len(set(parts["tops"])) == len(parts["tops"])  # one line each, none run together
    assert page.errors == [] and page.outside == []


def test_the_day_pager_goes_to_the_earlier_day_on_the_left(page, site):
    page.goto(site + "activity/2026-11-25.html")
    pager = page.locator("article .ms-daynav a")
    assert pager.all_inner_texts() == ["← 24 Nov 2026", "All days", "26 Nov 2026 →"]
    pager.filter(has_text="←").click()
    page.wait_for_url("**/activity/2026-11-24.html")
    assert "Tue 24 November 2026" in page.locator("h1").inner_text()
    page.locator("article .ms-daynav a").filter(has_text="→").click()
    page.wait_for_url("**/activity/2026-11-25.html")
    assert page.errors == [] and page.outside == []


def search_results(page, query: str) -> list[str]:
    """The anchors of the results shown for ``query``, best first."""
    page.click("input.md-search__input")
    page.fill("input.md-search__input", query)
    page.press("input.md-search__input", "End")
    meta = page.locator(".md-search-result__meta").filter(has_text=re.compile(r"\d|No"))
    meta.wait_for(timeout=15000)
    page.wait_for_timeout(500)  # the last answer
    links = page.locator(".md-search-result__list a.md-search-result__link").all()
    anchors = [link.get_attribute("href").split("#", 1)[-1] for link in links]
    return list(dict.fromkeys(anchors))  # an entry's header and item share one anchor


def test_why_bcrypt_leads_with_the_decision_that_holds(page, site):
    page.goto(site)
    anchors = search_results(page, "why bcrypt")
    holds = "2026-11-13-tune-argon2id-to-m-19-mib-t-2-p-1"
    superseded = [
        "2026-11-09-switch-password-hashing-to-argon2id-instead-of-bcrypt",
        "2026-11-03-hash-new-passwords-with-bcrypt-at-cost-12",
    ]
    # the decision that holds leads the decisions; the ones it replaced follow it (the
    # learning that bcrypt truncates passwords, current knowledge, may come first)
    decisions = [a for a in anchors if a.startswith("2026-11-") and a in (holds, *superseded)]
    assert decisions[0] == holds and set(decisions[1:]) == set(superseded)
    assert anchors.index(holds) < min(anchors.index(old) for old in superseded)
    assert anchors[0] not in superseded
    # "why" is no label's word: the results are the entries that name bcrypt, not every
    # decision with a **Why:**
    assert "2026-11-04-use-pyjwt-instead-of-python-jose-for-jwts" not in anchors
    assert page.errors == [] and page.outside == []
