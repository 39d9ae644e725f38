"""Code fences that memsite and ``pymdownx.superfences`` once read differently.

memsite's escaper leaves a code block's lines as they are; superfences rejects some fences
CommonMark accepts (more than a language after the fence, attributes, an indented opener or
closer, a longer closer) and renders their lines as prose, raw HTML included. The
``--docs-only`` export has no HTML pass after the markdown, so every code block must reach
superfences in a shape it reads as code too, whatever builder renders the export.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.site.escaping import escape_markdown
from memsite.site.publish.inert import inert
from memsite.store.markup import LONG_BODY_CHARS
from memsite.store.tree import init_tree
from tests.test_site_safety import live, markdown_html, scan_site

NOW = dt.datetime(2026, 6, 8, 14, 30, 5)
AT = "2026-06-08T10:00:00"
SCRIPT = "<script>alert(1)</script>"
HANDLER = "<img src=x onerror=alert(2)>"
LINES = f"{SCRIPT}\n\n{HANDLER}"  # a blank line: no paragraph or code span holds both
FENCES = {
    "graphviz with words": f"```graphviz dot a.svg\n{LINES}\n```",
    "attributes": f'```{{.x onclick="alert(3)"}}\n{LINES}\n```',
    "language and attributes": f'```python {{.x onclick="alert(3)"}}\n{LINES}\n```',
    "options": f'```python title="a.py" onclick="alert(3)"\n{LINES}\n```',
    "tildes with words": f"~~~ text more words\n{LINES}\n~~~",
    "indented opener": f"  ```\n{LINES}\n  ```",
    "indented closer": f"```\n{LINES}\n   ```",
    "longer closer": f"```\n{LINES}\n````",
    "longer tilde closer": f"~~~\n{LINES}\n~~~~~",
    "quote in an indented fence": f"   ```\n   a\n > {HANDLER}\n\n   {SCRIPT}\n   ```",
}
UNCLOSED = f"```graphviz dot a.svg\n{LINES}\n"
SHOWN = ["&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;"]


def _code(html_text: str) -> str:
    """The text of every ``<pre>`` block of a page, tags and all."""
    return "".join(part.split("</pre>")[0] for part in html_text.split("<pre")[1:])


@pytest.mark.parametrize("name", FENCES)
def test_a_code_block_stays_code_for_superfences(name: str) -> None:
    rendered = markdown_html(escape_markdown(f"Before.\n\n{FENCES[name]}\n\nAfter."))
    assert live(rendered) == []
    code = _code(rendered)
    for text in SHOWN:  # the lines are still shown, as code, as they were written
        assert text in code, (name, rendered)
    assert "onclick" not in rendered


def test_an_unclosed_fence_is_text() -> None:
    rendered = markdown_html(escape_markdown(UNCLOSED))
    assert live(rendered) == []
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "<pre" not in rendered


def test_a_plain_fence_is_left_as_written() -> None:
    text = "Before.\n\n```python\nx = '<b>'\n```\n\n~~~\ny\n~~~"
    assert escape_markdown(text) == text


def test_techdocs_makes_a_fence_plain_by_the_escapers_rule() -> None:
    assert inert("```graphviz dot a.svg\nx\n```\n") == "```text\nx\n```\n"
    assert inert("```python\nx\n```\n") == "```python\nx\n```\n"


def _hostile_tree(root: Path) -> Path:
    init_tree(root)
    memory = Memory(root, author="", clock=lambda: NOW)
    for number, text in enumerate(FENCES.values()):
        memory.decide(f"Fence {number}", why="w", body=text, at=AT)
        memory.learn(f"Lesson {number}", category="fences", why=text, at=AT)
    memory.decide("Unclosed", why="w", body=UNCLOSED, at=AT)
    # a long body is folded into an indented block of the day page
    long = "\n\n".join(FENCES.values()) + "\n\n" + "filler " * (LONG_BODY_CHARS // 6)
    memory.log("long", body=long, at=AT)
    memory.note("Fences", body="\n\n".join(FENCES.values()), at=AT)
    return root


def test_the_docs_only_export_of_hostile_fences_builds_inert_with_mkdocs(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path / "memory")
    out = tmp_path / "export"
    result = CliRunner().invoke(cli, ["--root", str(root), "build", "--docs-only", str(out)])
    assert result.exit_code == 0, result.output
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(out / "mkdocs.yml")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr[-3000:]
    site = out / "site"
    assert scan_site(site) == []
    decisions = (site / "decisions" / "index.html").read_text("utf-8")
    assert "onclick" not in decisions
    code = _code(decisions)
    for text in SHOWN:
        assert code.count(text) >= len(FENCES), text  # every block still shows its lines
    (note_page,) = site.glob("notes/**/fences.html")
    note = note_page.read_text("utf-8")
    assert _code(note).count(SHOWN[0]) == len(FENCES)
