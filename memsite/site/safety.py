"""What keeps memory from running code in the site or leaking a secret through it.

Memory text is written by agents and people and is never trusted: before it reaches the
markdown renderer, ``<`` outside code becomes ``&lt;`` (so raw HTML shows as text) and links
to script schemes lose their link syntax. The plugin then sanitizes the rendered HTML of its
own pages with nh3 as a second line.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from ..store.markup import fence_closes, fence_open, split_lines
from ..store.redact import find_secrets

_SAFE_SCHEMES = {"http", "https", "mailto", "ftp"}
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")
# every link and image target: "](" and the URL after it, whatever the link text holds
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]*)")
_REFERENCE = re.compile(r"^( {0,3})\[([^\]\n]+)\]:\s*<?(\S*?)>?(\s|$)")
_AUTOLINK_CHARS = re.compile(r"[\x00-\x20]")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def _unsafe_url(url: str) -> bool:
    plain = _AUTOLINK_CHARS.sub("", html.unescape(url)).lower().lstrip("<")
    found = _SCHEME.match(plain)
    return bool(found) and found.group(1) not in _SAFE_SCHEMES


def _escape_prose(line: str) -> str:
    """Escape one line outside fences, leaving code spans as they are."""
    out = []
    last = 0
    for span in _CODE_SPAN.finditer(line):
        out.append(_escape_plain(line[last : span.start()]))
        out.append(span.group(0))
        last = span.end()
    out.append(_escape_plain(line[last:]))
    return "".join(out)


def _escape_plain(text: str) -> str:
    # "<" would open raw HTML, "{" an attr_list block ("{: onclick=... }") that sets attributes
    text = text.replace("<", "&lt;").replace("{", "&#123;")

    def link(match: re.Match[str]) -> str:
        # "(" becomes an entity, so no link starts, whatever the link text holds; a
        # backslash would not do: the text's own backslash before it would escape it
        if not match.group(1) or _unsafe_url(match.group(1)):
            return "]&#40;" + match.group(0)[2:]
        return match.group(0)

    return _LINK_TARGET.sub(link, text)


def _outside_closed_fences(lines: list[str]) -> list[tuple[int, bool]]:
    """Like ``outside_fences``, but a fence that never closes is not code: the renderer
    shows its lines as prose (raw HTML included), so they are escaped as prose."""
    marks: list[tuple[int, bool]] = []
    unclosable: dict[str, int] = {}  # fence char -> shortest fence found to never close
    index = 0
    while index < len(lines):
        opened = fence_open(lines[index])
        if opened and opened[1] < unclosable.get(opened[0], opened[1] + 1):
            closer = next(
                (j for j in range(index + 1, len(lines)) if fence_closes(lines[j], opened)), None
            )
            if closer is not None:
                marks.extend((j, False) for j in range(index, closer + 1))
                index = closer + 1
                continue
            unclosable[opened[0]] = opened[1]  # a longer one of the same char cannot close
        marks.append((index, True))
        index += 1
    return marks


def escape_markdown(text: str) -> str:
    """Memory text made safe to hand to the renderer: raw HTML shows as text, and
    links to ``javascript:`` and other script schemes are shown, never followed."""
    lines = split_lines(text)
    out = list(lines)
    for index, outside in _outside_closed_fences(lines):
        if not outside:
            continue
        line = lines[index]
        reference = _REFERENCE.match(line)
        if reference and _unsafe_url(reference.group(3)):
            line = reference.group(1) + "&#91;" + line[len(reference.group(1)) + 1 :]
        out[index] = _escape_prose(line)
    return "\n".join(out)


def escape_inline(text: str) -> str:
    """A one-line value (a title, a tag) made safe for a heading, link text or table cell."""
    text = " ".join(text.split())
    text = escape_markdown(text)
    # Characters that would open markup of their own inside a heading or table.
    return text.replace("|", "\\|").replace("{", "&#123;").replace("}", "&#125;")


_SVG_TAGS = {"svg", "g", "rect", "title", "desc", "text", "line", "path"}
_ATTRIBUTES = {
    "*": {"id", "class", "title", "role", "lang", "dir"},
    "a": {"href", "hreflang"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "ol": {"start"},
    "svg": {"viewBox", "width", "height", "focusable", "xmlns"},
    "rect": {"x", "y", "width", "height", "rx", "ry"},
    "text": {"x", "y", "text-anchor", "dominant-baseline"},
    "line": {"x1", "x2", "y1", "y2"},
    "path": {"d"},
}


def sanitize(content: str) -> str:
    """Rendered HTML of a generated page with anything that could run removed."""
    import nh3

    return nh3.clean(
        content,
        tags=set(nh3.ALLOWED_TAGS) | _SVG_TAGS,
        attributes=_ATTRIBUTES,
        generic_attribute_prefixes={"aria-", "data-"},
        link_rel=None,
        url_schemes=_SAFE_SCHEMES,
        strip_comments=True,
    )


@dataclass(frozen=True)
class Leak:
    """A secret-shaped string in a file that would be published."""

    path: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}"


def find_leaks(root: Path, paths: list[str]) -> list[Leak]:
    """Secret shapes in the given root-relative files (unreadable files are skipped)."""
    leaks = []
    for rel in paths:
        try:
            text = (root / rel).read_text("utf-8", errors="replace")
        except OSError:
            continue
        leaks += [Leak(rel, found.line, found.kind) for found in find_secrets(text)]
    return leaks
