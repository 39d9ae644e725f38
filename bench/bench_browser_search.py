"""Browser search at a year and at three years: index size and time from typing to the first
result in Chromium, on the first page opened and on a second page (issue 12).

    python bench/bench_browser_search.py [OUT] [--years 1 3] [--pagefind PYTHON] [--rounds 2]

For each size it generates the tree with bench/corpus.py (20,000 entries a year, once), builds
the site twice with ``memsite build`` (related links off: they don't touch search):
  shards   the default: memsite's sharded index and search worker
  lunr     ``search_shards: false``: Material's own lunr search over the same trimmed index
           (the "index less" option of the issue)
  zensical ``memsite build --engine zensical`` (issue 38; ``--modes zensical``): Zensical's
           own search (its dialog and ``search.json``), memsite's worker not riding along
serves each over HTTP from 127.0.0.1 and, in Chromium, opens the home page, types a query the
moment the page has loaded and times the first keystroke to the first result shown (in the
page's own clock), then does the same on a day page (the second page: the browser's cache is
warm, the worker starts anew). "whole query": the query pasted and one key pressed, so the
time is that of answering the whole query, not its first letters. It then types the query
from file:// (first page only).

``--pagefind PYTHON``: a Python with the ``pagefind[bin]`` package; the lunr site is then also
indexed with Pagefind, and Pagefind's own JS API is timed on a page of its own (no CSP:
Pagefind needs WebAssembly, which the site's policy does not allow), first page and second.

``--labelled``: instead, what the search box answers (issue 39.6). It builds the bundled
sample's site, asks every labelled question of ``bench/queries-sample.jsonl`` and
``bench/semantic_queries.jsonl`` in Chromium's search box, and prints recall@5 and MRR@10
of the results shown (a result finds an answer that names its entry's or heading's anchor; a
page's first result, which has none, the anchor of its title).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
# Records the first keystroke (the time the browser received it: a main thread busy building
# an index delays its handler, not its timestamp) and the first result shown.
TIMER = """() => {
  window.__typed = null; window.__shown = null;
  const input = document.querySelector("input.md-search__input");
  input.addEventListener("keydown", (event) => { if (window.__typed === null)
    window.__typed = event.timeStamp; }, { once: true });
  const list = document.querySelector(".md-search-result__list");
  new MutationObserver(() => { if (window.__shown === null && list.children.length)
    window.__shown = performance.now(); }).observe(list, { childList: true });
}"""
PAGEFIND_PAGE = """<!doctype html><meta charset="utf-8"><script type="module">
window.__run = async (q) => { const t0 = performance.now();
  const pf = await import("./pagefind/pagefind.js"); const r = await pf.search(q);
  const first = r.results.length ? await r.results[0].data() : null;
  return [performance.now() - t0, r.results.length, first && first.url]; };
window.__ready = true;</script>"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a page left before a file was sent: not a failure of the site


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_Quiet, directory=str(folder))
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def generate(tree: Path, years: int) -> None:
    if tree.exists():
        return
    print(f"generating {years} year(s) into {tree} ...", flush=True)
    subprocess.run(
        [
            sys.executable,
            str(HERE / "corpus.py"),
            str(tree),
            *("--entries", str(20000 * years), "--days", str(365 * years)),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


# Zensical's search box is a dialog in a shadow root (Playwright's CSS selectors reach into it)
ZENSICAL_BOX = 'dialog[aria-label="Search"] input[role="combobox"]'
ZENSICAL_TIMER = """() => {
  const root = [...document.querySelectorAll("*")].find(
    (e) => e.shadowRoot && e.shadowRoot.querySelector("dialog")).shadowRoot;
  window.__typed = null; window.__shown = null;
  root.querySelector('input[role="combobox"]').addEventListener("keydown", (event) => {
    if (window.__typed === null) window.__typed = event.timeStamp; }, { once: true });
  const list = root.querySelector('ol[role="listbox"]');
  new MutationObserver(() => { if (window.__shown === null && list.children.length)
    window.__shown = performance.now(); }).observe(list, { childList: true, subtree: true });
}"""


def build(tree: Path, work: Path, shards: bool, engine: str = "mkdocs") -> tuple[Path, float]:
    import yaml

    from memsite.site.builder import default_config

    work.mkdir(parents=True, exist_ok=True)
    if engine == "zensical":
        start = time.perf_counter()
        command = [str(BIN / "memsite"), "--root", str(tree), "build", "--engine", "zensical"]
        subprocess.run(
            [*command, "--site-dir", str(work / "site")], check=True, stdout=subprocess.DEVNULL
        )
        return work / "site", time.perf_counter() - start
    config = default_config(tree, work / "docs", work / "site")
    options = config["plugins"][-1]["memsite"]
    options.update(related=False, search_shards=shards)
    (work / "docs").mkdir(exist_ok=True)
    (work / "mkdocs.yml").write_text(yaml.safe_dump(config), "utf-8")
    start = time.perf_counter()
    subprocess.run(
        [str(BIN / "memsite"), "--root", str(tree), "build", "--strict", "-f", "mkdocs.yml"],
        cwd=work,
        check=True,
        stdout=subprocess.DEVNULL,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
    )
    return work / "site", time.perf_counter() - start


def index_size(site: Path) -> str:
    if (site / "search.json").is_file():  # Zensical's
        return f"search.json {(site / 'search.json').stat().st_size / 1e6:.1f} MB"
    folder = site / "search" / "memsite"
    json_mb = (site / "search" / "search_index.json").stat().st_size / 1e6
    if not folder.is_dir():
        return f"search_index.json {json_mb:.1f} MB"
    sizes = [p.stat().st_size for p in folder.rglob("*.js")]
    return (
        f"{len(sizes)} files, {sum(sizes) / 1e6:.1f} MB in all, largest {max(sizes) / 1e3:.0f} KB"
        f" (search_index.json {json_mb * 1e3:.1f} KB)"
    )


def query_of(tree: Path) -> str:
    """Two words of a real decision title in the tree."""
    text = (tree / "cold" / "decisions.md").read_text("utf-8")
    titles = re.findall(r"^## (.+)$", text, re.M)
    words = [w for w in re.findall(r"[a-z]{4,}", titles[len(titles) // 2].lower())]
    return " ".join(words[:2])


def first_result(tab: object, url: str, query: str, whole: bool = False) -> float:
    """Seconds from the first keystroke to the first result, typed as soon as ``url`` loaded
    (``whole``: the query pasted, then one key: the time to answer the whole query)."""
    tab.goto(url, wait_until="load")  # type: ignore[attr-defined]
    if tab.locator(".md-search__button").count():  # type: ignore[attr-defined]
        return _zensical_result(tab, query, whole)
    tab.evaluate(TIMER)  # type: ignore[attr-defined]
    if url.startswith("file:"):
        # From file:// Material's search starts only when the search box opens, and lunr then
        # builds its index on the page's own thread, which holds the keystrokes back: the time
        # counts from the click on the search box.
        tab.evaluate("window.__typed = performance.now()")  # type: ignore[attr-defined]
    tab.click("input.md-search__input")  # type: ignore[attr-defined]
    if whole:
        tab.fill("input.md-search__input", query)  # type: ignore[attr-defined]
        tab.press("input.md-search__input", "End")  # type: ignore[attr-defined]
    else:
        tab.keyboard.type(query)  # type: ignore[attr-defined]
    return _shown(tab, query)


def _zensical_result(tab: object, query: str, whole: bool) -> float:
    """:func:`first_result` in Zensical's search dialog (its index loads when it opens: the
    time counts from the first keystroke in it)."""
    tab.click(".md-search__button")  # type: ignore[attr-defined]
    box = tab.locator(ZENSICAL_BOX)  # type: ignore[attr-defined]
    box.wait_for()
    tab.evaluate(ZENSICAL_TIMER)  # type: ignore[attr-defined]
    if whole:
        box.fill(query)
        box.press("End")
    else:
        box.press_sequentially(query)
    return _shown(tab, query)


def _shown(tab: object, query: str) -> float:
    # polled from here: a string predicate would be an eval, which the site's CSP refuses
    deadline = time.monotonic() + 60
    while tab.evaluate("window.__shown") is None:  # type: ignore[attr-defined]
        if time.monotonic() > deadline:
            raise TimeoutError(f"no search result for {query!r} in 60 s")
        time.sleep(0.01)
    return tab.evaluate("(window.__shown - window.__typed) / 1000")  # type: ignore[attr-defined]


def time_site(browser: object, site: Path, query: str, rounds: int) -> str:
    server, base = serve(site)
    day = sorted((site / "activity").glob("*-*-*.html"))[-2].relative_to(site).as_posix()
    found: dict[str, list[float]] = {}
    try:
        for _ in range(rounds):
            for whole in (False, True):
                context = browser.new_context()  # type: ignore[attr-defined]
                tab = context.new_page()
                for name, url in (("first", base), ("second", base + day)):
                    seconds = first_result(tab, url, query, whole)
                    found.setdefault(f"{name} page{', whole query' * whole}", []).append(seconds)
                context.close()
        context = browser.new_context()  # type: ignore[attr-defined]
        local = first_result(context.new_page(), (site / "index.html").as_uri(), query)
        context.close()
    finally:
        server.shutdown()
        server.server_close()
    figures = ", ".join(f"{name} {min(times):.2f} s" for name, times in found.items())
    return f"{figures} (best of {rounds}); file:// first page, from the click {local:.2f} s"


def time_pagefind(browser: object, site: Path, python: str, query: str, rounds: int) -> str:
    start = time.perf_counter()
    subprocess.run(
        [python, "-m", "pagefind", "--site", str(site)], check=True, stdout=subprocess.DEVNULL
    )
    built = time.perf_counter() - start
    (site / "pagefind-bench.html").write_text(PAGEFIND_PAGE, "utf-8")
    files = [p.stat().st_size for p in (site / "pagefind").rglob("*") if p.is_file()]
    server, base = serve(site)
    first, second = [], []
    try:
        for _ in range(rounds):
            context = browser.new_context()  # type: ignore[attr-defined]
            tab = context.new_page()
            for times in (first, second):
                tab.goto(base + "pagefind-bench.html", wait_until="load")
                while not tab.evaluate("window.__ready === true"):
                    time.sleep(0.01)
                seconds, count, url = tab.evaluate(f"window.__run({query!r})")
                times.append(seconds / 1000)
            context.close()
    finally:
        server.shutdown()
        server.server_close()
    return (
        f"pagefind: index {len(files)} files, {sum(files) / 1e6:.1f} MB, built in {built:.0f} s;"
        f" search + first result's data: first page {min(first):.2f} s, second page "
        f"{min(second):.2f} s ({count} results, first {url})"
    )


def labelled_quality(out: Path) -> None:
    """Recall@5 and MRR@10 of the site's search box over the sample's labelled questions."""
    import json
    import shutil
    from urllib.parse import unquote, urlsplit

    from playwright.sync_api import sync_playwright

    from memsite.search.headings import toc_slug
    from memsite.site.builder import build as build_site

    tree = out / "sample" / "memory"
    shutil.rmtree(out / "sample", ignore_errors=True)
    shutil.copytree(HERE.parent / "memory", tree)
    site = build_site(tree, site_dir=out / "sample" / "site")

    def answer(href: str, base: str) -> str:
        """``path#anchor`` in the tree of a result's link (as the labels name answers)."""
        parts = urlsplit(href)
        page = unquote(parts.path)[len(urlsplit(base).path) :].removesuffix(".html")
        if not page.startswith("notes/"):
            return "#" + parts.fragment  # an entry: its id, whatever its page
        name = page.removeprefix("notes/_/") if page.startswith("notes/_/") else page
        anchor = parts.fragment
        if not anchor:
            text = (tree / f"{name}.md").read_text("utf-8")
            anchor = toc_slug(re.search(r"^# (.+)$", text, re.M).group(1))  # type: ignore[union-attr]
        return f"{name}.md#{anchor}"

    server, base = serve(site)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            tab = browser.new_page()
            for name in ("queries-sample.jsonl", "semantic_queries.jsonl"):
                lines = (HERE / name).read_text("utf-8").splitlines()
                recall, reciprocal = [], []
                for line in lines:
                    label = json.loads(line)
                    tab.goto(base, wait_until="load")
                    tab.click("input.md-search__input")
                    tab.fill("input.md-search__input", label["q"])
                    tab.press("input.md-search__input", "End")
                    meta = tab.locator(".md-search-result__meta")
                    meta.filter(has_text=re.compile(r"\d|No")).wait_for(timeout=20000)
                    tab.wait_for_timeout(300)
                    links = tab.locator(".md-search-result__list a.md-search-result__link").all()
                    # an entry's result has two links (its page's header, itself): once each
                    found = list(
                        dict.fromkeys(answer(a.evaluate("(a) => a.href"), base) for a in links)
                    )
                    hits = [any(r.endswith(f) for r in label["relevant"]) for f in found]
                    first = next((i + 1 for i, hit in enumerate(hits[:10]) if hit), 0)
                    reciprocal.append(1 / first if first else 0.0)
                    shown = [r for r in label["relevant"] if any(r.endswith(f) for f in found[:5])]
                    recall.append(len(shown) / len(label["relevant"]))
                print(
                    f"{name}: {len(lines)} questions, recall@5 {sum(recall) / len(recall):.3f},"
                    f" MRR@10 {sum(reciprocal) / len(reciprocal):.3f}",
                    flush=True,
                )
            browser.close()
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(HERE / "out" / "browser-search"))
    parser.add_argument("--years", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pagefind", help="a Python that has the pagefind[bin] package")
    parser.add_argument(
        "--modes", nargs="+", default=["shards", "lunr"], help="shards, lunr, zensical"
    )
    parser.add_argument(
        "--labelled", action="store_true", help="the sample's labelled questions instead"
    )
    args = parser.parse_args()
    out = Path(args.out).resolve()
    if args.labelled:
        labelled_quality(out)
        return
    from playwright.sync_api import sync_playwright

    print(f"load: {os.getloadavg()[0]:.1f}", flush=True)
    for years in args.years:
        tree = out / f"{years}y" / "memory"
        generate(tree, years)
        query = query_of(tree)
        print(f"== {years} year(s), 20,000 entries a year; query {query!r}", flush=True)
        for mode in args.modes:
            engine = "zensical" if mode == "zensical" else "mkdocs"
            site, seconds = build(tree, out / f"{years}y" / mode, mode == "shards", engine)
            print(f"{mode:7s} built in {seconds:.0f} s; index: {index_size(site)}", flush=True)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                print(f"{mode:7s} {time_site(browser, site, query, args.rounds)}", flush=True)
                if mode == "lunr" and args.pagefind:
                    print(time_pagefind(browser, site, args.pagefind, query, args.rounds))
                browser.close()


if __name__ == "__main__":
    main()
