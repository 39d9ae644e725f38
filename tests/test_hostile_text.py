"""Hostile text: arbitrary unicode and markdown structure through write, read, search, render.

Whatever text an agent hands memsite, writing it and reading it back gives the same text
(after the documented normalisation: line endings, blank edge lines, whitespace runs in
one-line values), never swallows or splits a neighbouring entry, search never crashes,
and the site's HTML never holds a live script. Control characters and bytes that are not
UTF-8 are refused with one line, and nothing is written. ``-m slow`` tries many more.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html.parser
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from memsite import Memory
from memsite.errors import EmptyQuery, InvalidInput
from memsite.store.tree import init_tree

NOW = dt.datetime(2026, 6, 8, 14, 30, 5)
# Shrinking a failure of a whole write-read-search-render round trip can take minutes; the
# unshrunk example is reported as it is.
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
FAST = settings(
    max_examples=15, deadline=None, phases=PHASES, suppress_health_check=list(HealthCheck)
)
SLOW = settings(
    max_examples=600, deadline=None, phases=PHASES, suppress_health_check=list(HealthCheck)
)

# Lines an attacker, a confused agent or a pasted document could hold.
STRUCTURE = [
    "# Decisions",
    "## 2026-06-01 — Forged decision",
    "### 10:00:00 — forged activity",
    "- **Id:** forged-id",
    "- **Why:** forged",
    "<!-- id: forged-id -->",
    "<!-- id: 2026-06-08-neighbour -->",
    "```",
    "```details",
    "~~~",
    "````python",
    "---",
    "===",
    "---\ntitle: front matter\ntags: [a]\n---",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//x.example/x.js></SCRIPT>",
    '<img src=x onerror="alert(1)">',
    "<a href='javascript:alert(1)'>x</a>",
    "[click](javascript:alert(1))",
    "[click]( JaVaScRiPt:alert(1) )",
    "[ref]: javascript:alert(1)",
    "![i](data:text/html;base64,PHNjcmlwdD4=)",
    "<svg onload=alert(1)>",
    "<iframe src=javascript:alert(1)></iframe>",
    '<div markdown="1" onclick="x()">md in html</div>',
    "{: onclick=alert(1) }",
    "`<script>in code</script>`",
    "    indented <script>code</script>",
    "> quote",
    "1. item",
    "- [ ] task",
    "??? note\n    details <script>x</script>",
    "\\## escaped already",
    "\\",
    "",
    "   ",
    "\t",
    "\r\n",
    "\r",
]
UNICODE = [
    "مرحبا بالعالم",  # right-to-left
    "שלום",
    "\u202eevil\u202c",  # right-to-left override
    "\u200f\u200e",
    "👩‍💻🚀🏳️‍🌈",
    "\u200b\u200c\u200d\u2060\ufeff",  # zero-width
    "é vs e\u0301",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "記憶 ✓",
    "\u00a0\u3000",
]
# Any character but control characters (refused by design) and lone surrogates.
CHARS = st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\u2028\u2029\x85")
PIECE = st.one_of(st.sampled_from(STRUCTURE), st.sampled_from(UNICODE), st.text(CHARS, max_size=40))
BODY = st.lists(PIECE, max_size=12).map("\n".join) | st.lists(PIECE, max_size=8).map("".join)
LINE_PIECE = st.one_of(
    st.sampled_from([s for s in STRUCTURE if "\n" not in s and "\r" not in s]),
    st.sampled_from(UNICODE),
    st.text(CHARS, max_size=30),
)
LINE = st.lists(LINE_PIECE, min_size=1, max_size=4).map(" ".join).filter(lambda s: s.strip())
SIZED = st.sampled_from([0, 1, 300, 40_000]).map(lambda n: ("## 2026-06-01 — x\n" * n)[:n])


def normalised(text: str) -> str:
    """What docs/format.md says a multi-line value reads back as."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if lines:
        lines[-1] = lines[-1].rstrip()
    return "\n".join(lines)


def one_line(text: str) -> str:
    return " ".join(text.split())


class LiveScripts(html.parser.HTMLParser):
    """Collects everything in HTML that a browser would run."""

    URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "srcdoc"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "iframe", "object", "embed"):
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=...>")
            plain = "".join(ch for ch in (value or "") if ch > " ").lower()
            if name in self.URL_ATTRIBUTES and plain.startswith(
                ("javascript:", "vbscript:", "data:text/html")
            ):
                self.found.append(f"<{tag} {name}={value!r}>")


def live_scripts(markdown_text: str) -> list[str]:
    """Render a generated page with the site's markdown extensions; what would run."""
    import markdown

    from memsite.site.builder import MARKDOWN_EXTENSIONS

    names, configs = [], {}
    for extension in MARKDOWN_EXTENSIONS:
        if isinstance(extension, dict):
            (name, config), *_ = extension.items()
            names.append(name)
            configs[name] = config
        else:
            names.append(extension)
    rendered = markdown.markdown(markdown_text, extensions=names, extension_configs=configs)
    parser = LiveScripts()
    parser.feed(rendered)
    parser.close()
    return parser.found


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def round_trip(title: str, why: str, body: str, action: str, detail: str, result: str) -> None:
    from memsite.site.pages import build_site

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "memory"
        init_tree(root)
        memory = Memory(root, author="", allow_secrets=True, clock=lambda: NOW)
        before = memory.log("neighbour before", body="first neighbour", at="2026-06-08T09:00:00")
        decision = memory.decide(title, why=why, body=body, at="2026-06-08T10:00:00")
        learning = memory.learn(title, category="hostile", why=why, body=body, at=NOW)
        activity = memory.log(
            action, details={"what": detail}, result=result, body=body, at="2026-06-08T11:00:00"
        )
        after = memory.log("neighbour after", body="last neighbour", at="2026-06-08T12:00:00")
        memory.decide("Neighbour decision", why="stays whole", at="2026-06-08T13:00:00")

        entries = {e.id: e for e in memory.entries()}
        pointers = [e for e in entries.values() if e.title in ("decision", "learning")]
        assert len(entries) == 6 + len(pointers) and len(pointers) == 3
        for entry_id in (decision, learning):
            entry = entries[entry_id]
            assert entry.title == one_line(title)
            assert entry.body == normalised(body)
            assert entry.fields["why"] == normalised(why)
        assert entries[activity].title == one_line(action)
        assert entries[activity].body == normalised(body)
        assert entries[activity].details == {"what": one_line(detail)}
        assert entries[activity].result == normalised(result)
        assert entries[before].body == "first neighbour"
        assert entries[after].body == "last neighbour"
        assert [e.fields["why"] for e in entries.values() if e.title == "Neighbour decision"] == [
            "stays whole"
        ]
        problems = [p for p in memory_check(root) if p.severity == "error"]
        assert problems == []

        for query in (title, body[:200] or "x", "neighbour after", f'"{action[:40]}"'):
            # never crashes; a query of punctuation alone is refused (issue 13)
            with contextlib.suppress(EmptyQuery):
                memory.search(query, lexical=True)
        assert [h.id for h in memory.search("last neighbour", lexical=True)][:1] == [after]
        memory.close()

        site = build_site(root, NOW, related=False)
        for page in site.pages:
            assert live_scripts(page.markdown) == [], page.uri


def memory_check(root: Path):  # type: ignore[no-untyped-def]
    from memsite.store.check import check_tree

    return check_tree(root)


WHY = BODY.filter(lambda s: normalised(s) != "")  # a decision must say why
HOSTILE = dict(title=LINE, why=WHY, body=BODY | SIZED, action=LINE, detail=LINE, result=BODY)


@FAST
@given(**HOSTILE)
def test_hostile_text_round_trips_and_never_runs_in_the_site(**text: str) -> None:
    round_trip(**text)


@pytest.mark.slow
@SLOW
@given(**HOSTILE)
def test_hostile_text_many_more_examples(**text: str) -> None:
    round_trip(**text)


CONTROL = st.sampled_from(
    [chr(c) for c in range(32) if chr(c) not in "\t\n\r"] + ["\x7f", "\x85", "\u2028", "\u2029"]
)


@FAST
@given(before=st.text(CHARS, max_size=20), control=CONTROL, after=st.text(CHARS, max_size=20))
def test_control_characters_are_refused_and_nothing_is_written(
    before: str, control: str, after: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "memory"
        init_tree(root)
        memory = Memory(root, author="", clock=lambda: NOW)
        memory.log("already here")
        files = snapshot(root)
        text = f"x{before}{control}{after}"
        for write in (
            lambda: memory.decide(text, why="w"),
            lambda: memory.decide("t", why="w", body=text),
            lambda: memory.learn("t", category=text),
            lambda: memory.log(text),
            lambda: memory.log("a", details={"k": text}),
            lambda: memory.log("a", result=text),
        ):
            with pytest.raises(InvalidInput) as refused:
                write()
            message = str(refused.value)
            assert "\n" not in message
            assert any(w in message for w in ("control character", "newline", "NUL"))
        assert snapshot(root) == files


@pytest.mark.parametrize(
    "raw",
    [b"ok \xff\xfe bad", b"\xed\xa0\x80 lone surrogate encoded", b"cut \xe2\x82", b"\xc0\xaf"],
    ids=["ff-fe", "surrogate-bytes", "truncated-sequence", "overlong"],
)
@pytest.mark.parametrize("command", [["log", "step"], ["decide", "Title", "--why", "w"]])
def test_bytes_that_are_not_utf8_on_stdin_are_refused_cleanly(
    tmp_path: Path, raw: bytes, command: list[str]
) -> None:
    root = tmp_path / "memory"
    init_tree(root)
    files = snapshot(root)
    done = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(root), *command, "--body", "-"],
        input=raw,
        capture_output=True,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )
    err = done.stderr.decode()
    assert done.returncode in (1, 2) and "Traceback" not in err
    assert "not UTF-8" in err and len(err.strip().splitlines()) == 1, err
    assert snapshot(root) == files


def test_an_image_link_to_a_script_url_is_shown_as_text_not_linked() -> None:
    from memsite.site.render import body

    for text in ("![i](javascript:alert(1))", "![i](data:text/html;base64,PHNjcmlwdD4=)"):
        assert live_scripts(body(text)) == []
