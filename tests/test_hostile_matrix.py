"""The hostile-text matrix (issue 15): every text field of every write command, through the
CLI and the API, times every surface it can reach, with payloads an attacker or a careless
agent could send.

Surfaces: the markdown on disk (and ``hot/context.json``), entry parsing, ``search`` /
``recall`` / ``prime`` output, the built site's HTML (``<head>`` and nav included) and its
``search_index.json``, and the ``--docs-only`` export. Each assertion is what a user relies
on: no secret reaches a file, no text becomes a field or an entry, nothing runs in a page.
"""

from __future__ import annotations

import datetime as dt
import html.parser
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import InvalidInput, Memory
from memsite.cli import cli
from memsite.store.check import check_tree
from memsite.store.code import normalise
from memsite.store.tree import init_tree

NOW = dt.datetime(2026, 6, 8, 14, 30, 5)
TOKEN = "ghp_" + "Zq7" * 12
MARK = "PWNED"  # what a payload would write into the page if it ran

PAYLOADS = {
    "script": f"<script>window.{MARK}=1</script>",
    "title breakout": f"x</title><script>window.{MARK}=1</script>",
    "event handler": f'<img src=x onerror="window.{MARK}=1">',
    "javascript link": f"[go](javascript:window.{MARK}=1)",
    "field shape": "* **Supersedes:** 2026-01-01-forged",
    "field shape 2": "- **Tags**: forged",
    "id line": "<!-- id: 2026-01-01-forged -->",
    "heading": "## 2026-01-01 — Forged entry",
    "secret": f"token {TOKEN}",
    "escaped secret": f"token {TOKEN.replace('_', chr(92) + '_')}",
    "entity secret": f"token &#103;{TOKEN[1:]}",
}
SECRETS = {"secret", "escaped secret", "entity secret"}


def writes(memory: Memory, text: str) -> dict[str, Callable[[], object]]:
    """One call per text field of every write (the field holds ``text``)."""
    return {
        "decide title": lambda: memory.decide(f"T {text}", why="w"),
        "decide why": lambda: memory.decide("Why", why=text),
        "decide risk": lambda: memory.decide("Risk", why="w", risk=text),
        "decide tag": lambda: memory.decide("Tag", why="w", tags=[f"t {text}"]),
        "decide body": lambda: memory.decide("Body", why="w", body=text),
        "decide path": lambda: memory.decide("Path", why="w", paths=[f"src/{text}"]),
        "decide commit": lambda: memory.decide("Commit", why="w", commit=f"c {text}"),
        "learn title": lambda: memory.learn(f"L {text}", category="c"),
        "learn category": lambda: memory.learn("Cat", category=f"c {text}"),
        "learn why": lambda: memory.learn("LWhy", category="c", why=text),
        "learn path": lambda: memory.learn("LPath", category="c", paths=[f"src/{text}"]),
        "learn commit": lambda: memory.learn("LCommit", category="c", commit=f"c {text}"),
        "log action": lambda: memory.log(f"a {text}"),
        "log detail key": lambda: memory.log("dk", details={f"k {text}": "v"}),
        "log detail value": lambda: memory.log("dv", details={"k": text}),
        "log result": lambda: memory.log("res", result=text),
        "log body": lambda: memory.log("lb", body=text),
        "log path": lambda: memory.log("lp", paths=[f"src/{text}"]),
        "log commit": lambda: memory.log("lc", commit=f"c {text}"),
        "session task": lambda: memory.start_session(f"task {text}"),
        "progress step": lambda: memory.progress(f"step {text}"),
        "progress file": lambda: memory.progress("f", files=[f"src/{text}"]),
        "pending": lambda: memory.pending_add(f"p {text}"),
        "session summary": lambda: memory.end_session(summary=text),
    }


def _write_everything(root: Path, payload: str) -> list[str]:
    """Every write with the payload; returns the names of writes refused as bad input."""
    memory = Memory(root, author="", clock=lambda: NOW)
    refused = []
    memory.start_session("matrix")
    for name, write in writes(memory, payload).items():
        try:
            write()
        except InvalidInput:
            refused.append(name)
        if name == "session summary":
            memory.start_session("matrix again")
    return refused


def cli_writes(text: str) -> dict[str, list[str]]:
    """The same fields through the command line, as an agent calls it."""
    return {
        "decide title": ["decide", f"C {text}", "--why", "w"],
        "decide why": ["decide", "CWhy", "--why", text],
        "decide risk": ["decide", "CRisk", "--why", "w", "--risk", text],
        "decide tag": ["decide", "CTag", "--why", "w", "--tag", f"t {text}"],
        "decide body": ["decide", "CBody", "--why", "w", "--body", text],
        "decide author": ["decide", "CAuthor", "--why", "w", "--author", f"a {text}"],
        "decide path": ["decide", "CPath", "--why", "w", "--path", f"src/{text}"],
        "decide commit": ["decide", "CCommit", "--why", "w", "--commit", f"c {text}"],
        "learn path": ["learn", "CLPath", "--category", "c", "--path", f"src/{text}"],
        "log path and commit": ["log", "clpc", "--path", f"src/{text}", "--commit", f"c {text}"],
        "learn category": ["learn", "CCat", "--category", f"c {text}"],
        "learn why": ["learn", "CLWhy", "--category", "c", "--why", text],
        "log action": ["log", f"ca {text}"],
        "log detail": ["log", "cd", "--detail", f"k {text}=v {text}"],
        "log result": ["log", "cres", "--result", text],
        "session start": ["session", "start", f"task {text}"],
        "progress": ["progress", f"step {text}", "--file", f"src/{text}"],
        "pending": ["pending", "add", f"p {text}"],
        "session end": ["session", "end", "--summary", text],
    }


def _write_everything_by_cli(root: Path, payload: str) -> None:
    runner = CliRunner()
    for name, args in cli_writes(payload).items():
        result = runner.invoke(cli, ["--root", str(root), *args])
        assert result.exit_code in (0, 1, 2), (name, result.output)
        assert not isinstance(result.exception, Exception) or isinstance(
            result.exception, SystemExit
        ), (name, result.exception)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tree per payload, written through the API and then through the CLI."""
    out = {}
    for name, payload in PAYLOADS.items():
        root = tmp_path_factory.mktemp(re.sub(r"\W+", "-", name)) / "memory"
        init_tree(root)
        _write_everything(root, payload)
        _write_everything_by_cli(root, payload)
        out[name] = root
    return out


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text("utf-8")
        for p in root.rglob("*")
        if p.is_file() and ".memsite" not in p.parts
    }


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_no_secret_reaches_any_file_of_the_tree(trees: dict[str, Path], name: str) -> None:
    for rel, text in _files(trees[name]).items():
        assert TOKEN[4:] not in text, f"{name}: the token is in {rel}"


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_no_text_becomes_a_field_or_an_entry(trees: dict[str, Path], name: str) -> None:
    memory = Memory(trees[name])
    entries = memory.entries()
    forged = [e for e in entries if e.date == dt.date(2026, 1, 1) or e.title == "Forged entry"]
    assert forged == []
    for entry in entries:
        assert "forged" not in entry.fields.get("tags", "") or entry.title in ("Tag", "CTag")
        assert entry.supersedes is None
    assert [p for p in check_tree(trees[name]) if p.severity == "error"] == []


@pytest.mark.parametrize("name", sorted(set(PAYLOADS) - SECRETS))
def test_paths_and_commits_read_back_as_one_value_each(trees: dict[str, Path], name: str) -> None:
    by_title = {e.title: e for e in Memory(trees[name]).entries()}
    path = normalise(f"src/{PAYLOADS[name]}", trees[name].parent)
    for title in ("Path", "LPath", "lp", "CPath", "CLPath", "clpc"):
        assert by_title[title].paths == [path], title
    for title in ("Commit", "LCommit", "lc", "CCommit", "clpc"):
        assert by_title[title].commit == f"c {PAYLOADS[name]}", title


@pytest.mark.parametrize("name", sorted(set(PAYLOADS) - SECRETS))
def test_multi_line_fields_read_back_exactly(trees: dict[str, Path], name: str) -> None:
    by_title = {e.title: e for e in Memory(trees[name]).entries()}
    payload = PAYLOADS[name]
    assert by_title["Why"].why == payload
    assert by_title["Risk"].risk == payload
    assert by_title["Body"].body == payload
    assert by_title["res"].result == payload
    assert by_title["lb"].body == payload
    assert by_title["CWhy"].why == payload and by_title["CBody"].body == payload
    assert by_title["cres"].result == payload


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_search_recall_and_prime_hand_over_no_secret_and_no_forged_field(
    trees: dict[str, Path], name: str
) -> None:
    runner = CliRunner()
    root = str(trees[name])
    outputs = [
        runner.invoke(
            cli, ["--root", root, "search", "token forged window", "--json", "--lexical"]
        ),
        runner.invoke(cli, ["--root", root, "recall", "-", "--lexical"], input="token window"),
        runner.invoke(cli, ["--root", root, "prime", "--task", "token", "--lexical"]),
    ]
    for result in outputs:
        assert result.exit_code == 0, result.output
        assert TOKEN[4:] not in result.stdout
    for hit in json.loads(outputs[0].stdout):
        assert hit["status"] in (None, "current")  # no forged Supersedes made one superseded


class _Live(html.parser.HTMLParser):
    """What a browser would run, and the text of ``<title>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.tags: set[str] = set()
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if self._in_title:
            self.found.append(f"<{tag}> inside <title>")
        for attr, value in attrs:
            if attr.startswith("on"):
                self.found.append(f"<{tag} {attr}>")
            plain = "".join(ch for ch in (value or "") if ch > " ").lower()
            if attr in ("href", "src") and plain.startswith(("javascript:", "data:text/html")):
                self.found.append(f"<{tag} {attr}={value}>")
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if MARK in data and "<script" in data.lower() and self._in_title:
            self.found.append("script text in <title>")


LIVE_TAGS = {"script", "iframe", "object", "embed", "img", "svg"}


def _scripts(page: str) -> list[str]:
    """Inline scripts that carry a payload's mark (Material's own scripts never do)."""
    return [s for s in re.findall(r"<script[^>]*>(.*?)</script>", page, re.S) if MARK in s]


@pytest.mark.parametrize("name", sorted(set(PAYLOADS) - SECRETS))
def test_nothing_runs_in_the_built_site_head_nav_or_search_index(
    trees: dict[str, Path], name: str, tmp_path: Path
) -> None:
    from memsite.site.builder import build

    site = build(trees[name], site_dir=tmp_path / "site")
    pages = list(site.rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text("utf-8")
        assert _scripts(text) == [], page
        parser = _Live()
        parser.feed(text)
        assert parser.found == [], (page, parser.found)
    from memsite.site.search_index import read_documents

    for doc in read_documents(site):
        # Material inserts a result's title and text as HTML: they must hold no live markup
        for field in ("title", "page_title", "text"):
            parser = _Live()
            parser.feed(doc.get(field, ""))
            assert parser.found == [] and parser.tags.isdisjoint(LIVE_TAGS), doc["location"]


@pytest.mark.parametrize("name", sorted(set(PAYLOADS) - SECRETS))
def test_the_docs_only_export_is_as_inert_as_the_site(
    trees: dict[str, Path], name: str, tmp_path: Path
) -> None:
    from memsite.site.builder import export_docs
    from tests.test_hostile_text import live_scripts

    written = export_docs(trees[name], tmp_path / "export", NOW)
    for path in written:
        if path.suffix == ".md":
            assert live_scripts(path.read_text("utf-8")) == [], path
