"""A generated page the renderer cannot handle is still built, with an error block in place
of each entry that failed (issue 15.10).

The limits of ``store.markup`` keep known trouble from reaching the renderer; this is the
line behind them for whatever they miss. The page is cut at its entries' headings (the ones
with an ``{#id}`` anchor), each part is rendered on its own, and a part that fails keeps its
heading and shows an admonition instead of its text.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from .escaping import code_span, title_text

_ENTRY_HEADING = re.compile(r"^#{1,6} .*\{#([\w-]+)\}[ \t]*$")
Render = Callable[[str], object]
log = logging.getLogger("mkdocs.plugins.memsite")


def sections(markdown: str) -> list[tuple[str, list[str]]]:
    """The page cut before each entry heading: ``(anchor, lines)``; the part before the
    first entry has the anchor ``""``."""
    parts: list[tuple[str, list[str]]] = [("", [])]
    for line in markdown.split("\n"):
        found = _ENTRY_HEADING.match(line)
        if found:
            parts.append((found.group(1), []))
        parts[-1][1].append(line)
    return parts


def error_block(what: str, err: BaseException) -> list[str]:
    return [
        "",
        '!!! failure "This could not be shown"',
        "",
        f"    The site could not render {what} ({type(err).__name__}); run "
        "`memsite check` to see what in it is beyond the site's limits.",
        "",
    ]


def isolate(markdown: str, render: Render, page: str) -> tuple[str, list[str]]:
    """``markdown`` with every part that ``render`` fails on replaced by an error block, and
    the names of those parts (entry ids, or the page for the part before its entries)."""
    out: list[str] = []
    failed: list[str] = []
    for anchor, lines in sections(markdown):
        text = "\n".join(lines)
        try:
            render(text)
        except Exception as err:  # noqa: BLE001 -- any failure is shown, never raised
            what = f"entry {code_span(anchor)}" if anchor else f"this part of {code_span(page)}"
            failed.append(anchor or page)
            heading = lines[:1] if anchor else []
            out.extend([*heading, *error_block(what, err)])
            continue
        out.extend(lines)
    return "\n".join(out), failed


def render_or_isolate(render: Any, page: Any, config: Any, files: Any) -> None:
    """MkDocs' ``page.render(config, files)``; if it fails, the page again with every failing
    part isolated, and if even that fails, the page as one error block. MkDocs has no event
    around rendering, so the plugin puts this in the page's ``render``."""
    try:
        render(config, files)
        return
    except Exception:  # noqa: BLE001 -- memory never stops the build (issue 15.10)
        pass
    import markdown

    def convert(text: str) -> str:
        md = markdown.Markdown(
            extensions=config.markdown_extensions, extension_configs=config.mdx_configs or {}
        )
        return md.convert(text)

    uri = page.file.src_uri
    page.markdown, failed = isolate(page.markdown, convert, uri)
    log.info("memsite: %s: could not render %s; shown as an error block", uri, ", ".join(failed))
    try:
        render(config, files)
    except Exception as err:  # noqa: BLE001
        page.markdown = "\n".join(["# " + title_text(uri), *error_block(code_span(uri), err)])
        render(config, files)
