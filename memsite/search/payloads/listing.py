"""Search hits as compact markdown for an agent (issue 24): what the MCP ``search`` tool puts
before the model, where ``recall`` puts its budgeted block.

Each hit is its dated breadcrumb, its citation, the line saying it was superseded (when it
was) and its snippet, never its whole text: on the sample memory ten hits take about 4,000
characters (1,000 tokens), where their JSON with whole texts took 15,500. ``get`` returns a
whole entry. Where a snippet may be cut in the text: :func:`memsite.search.snippets.clip`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ranking import Hit
from .recall import dated, status_line


def fallback_line(hits: Sequence[Hit]) -> str:
    """What a search whose quoted phrases no entry holds says (issue 36: quotes are words,
    it showed the entries with their words instead); '' for any other search."""
    if not hits or not hits[0].phrase_fallback:
        return ""
    phrases = ", ".join(f'"{phrase}"' for phrase in hits[0].phrase_fallback)
    return f"no entry holds the phrase {phrases}; showing entries with its words"


def render_listing(hits: Sequence[Hit]) -> str:
    """The hits in rank order, each as ``### date · breadcrumb``, its citation and snippet
    (after the line saying a quoted phrase was searched as words, when it was)."""
    if not hits:
        return "No memory matches.\n"
    count = len(hits)
    parts = [f"## Search results ({count} hit{'s' if count != 1 else ''})\n"]
    if said := fallback_line(hits):
        parts.append(f"\n_{said[0].upper()}{said[1:]}._\n")
    for hit in hits:
        snippet = " ".join(hit.snippet.split())
        parts.append(
            f"\n### {dated(hit)}\n{status_line(hit)}"
            f"Source: {hit.citation}" + (f"\n\n{snippet}\n" if snippet else "\n")
        )
    return "".join(parts)
