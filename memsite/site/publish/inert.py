"""The syntax of TechDocs' markdown extensions made text in memsite's pages (issue 28).

``mkdocs-techdocs-core`` adds extensions memsite's own site does not have, and several of them
read the raw page before the markdown is parsed, code blocks included: a line
``--8<-- "FILE"`` pastes a file of the building machine into the page (``pymdownx.snippets``),
a ```` ```plantuml ```` fence or a ``::uml::`` block is sent to a diagram server
(``plantuml_markdown``), a line ``{% dot x.svg ... %}`` runs Graphviz and inlines its SVG
(``markdown_inline_graphviz``), ``{++ ++}`` becomes markup (``pymdownx.critic``) and an
emoji shortcode (``:smile:``) an image fetched from a CDN (``pymdownx.emoji``, whose
generator TechDocs lets no configuration change). Memory text
is escaped for memsite's renderer, which knows none of these, so the export undoes each
trigger here, showing the same text: a fence whose info string is more than a language word
(which ``pymdownx.superfences`` reads as prose or as attributes of the block) becomes a fence
of plain ``text`` by escaping's one rule (``plain_fence``, which the escaper already applied
to every code block of memory text), a snippet line gets the extension's own escape (one more
``;``, which it removes), a diagram fence's language becomes ``text`` and the other triggers
get a zero-width space (U+200B) between their first two characters; so does a shortcode of
the emoji index TechDocs uses (emojione), and no other ``:word:``.
"""

from __future__ import annotations

import functools
import re

from ..escaping import PLAIN_INFO, plain_fence

ZERO_WIDTH = "\u200b"
# a whole line that pymdownx.snippets reads as an inline or block snippet marker
_SNIPPET = re.compile(
    r"""^(?P<space>[ \t]*)(?=;*-+8<-+(?:[ \t]+(?:"(?:\\"|[^"\r\n])+?"|'(?:\\'|[^'\r\n])+?'))?\r?$)""",
    re.MULTILINE,
)
# a fence's opening (or closing) line, with what follows the fence
_FENCE_LINE = re.compile(r"^(?P<open>[ \t>]*(?:`{3,}|~{3,}))(?P<info>.*)$", re.MULTILINE)
# a PlantUML fence anywhere in a line (the extension does not anchor it); the language word.
# (A Graphviz fence, "```graphviz dot FILE", has more than a language: _FENCE_LINE's.)
_DIAGRAM_FENCE = re.compile(r"(?P<open>(?:~~~|```)[ ]*\{?\.?)(?P<lang>(?:c4)?(?:plant)?uml)")
_LINE_START = re.compile(r"[ \t>]*")  # what may stand before a fence on its line
_TRIGGERS = re.compile(
    r"(?P<first>:):uml::"  # a PlantUML block
    r"|^(?P<curly>\{)%"  # a Graphviz block, at the start of a line
    r"|(?P<critic>\{)(?:\+\+|--|~~|>>|==)",  # a CriticMarkup mark
    re.MULTILINE,
)


_SHORTCODE = re.compile(r":[+\-\w]+:")


@functools.cache
def _emoji() -> frozenset[str]:
    """The shortcodes ``pymdownx.emoji`` turns into images by default (Material brings it)."""
    from pymdownx import emoji1_db

    return frozenset(emoji1_db.emoji) | frozenset(emoji1_db.aliases)


def _shortcode(found: re.Match[str]) -> str:
    return _broken(found) if found.group(0) in _emoji() else found.group(0)


def _diagram(found: re.Match[str]) -> str:
    line_start = found.string.rfind("\n", 0, found.start()) + 1
    after = found.string[found.end() : found.end() + 1]
    if _LINE_START.fullmatch(found.string, line_start, found.start()):
        if after and PLAIN_INFO.fullmatch(after) and not after.isspace():
            return found.group(0)  # another language ("```umlaut"): no diagram
        # still a fence, now of plain text: a zero-width space here would make it none, and
        # what memsite escaped as code would be read as markup
        return f"{found['open']}text"
    return f"{found['open'][0]}{ZERO_WIDTH}{found['open'][1:]}{found['lang']}"


def _broken(found: re.Match[str]) -> str:
    text = found.group(0)
    return text[0] + ZERO_WIDTH + text[1:]


def inert(markdown: str) -> str:
    """A page's markdown with no trigger of TechDocs' extra extensions left in it."""
    markdown = _FENCE_LINE.sub(lambda found: plain_fence(found["open"], found["info"]), markdown)
    markdown = _SNIPPET.sub(lambda found: f"{found['space']};", markdown)
    markdown = _DIAGRAM_FENCE.sub(_diagram, markdown)
    markdown = _TRIGGERS.sub(_broken, markdown)
    return _SHORTCODE.sub(_shortcode, markdown)
