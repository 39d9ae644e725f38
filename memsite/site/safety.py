"""What keeps memory from running code in the site, fetching from outside, or leaking a
secret through it.

The markdown is made inert before it is rendered (``escaping``); the plugin then sanitizes
the rendered HTML of its own pages with nh3, makes each page's ``<title>`` plain text, and
gives every page a Content-Security-Policy that allows no request to another host.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from ..store.redact import find_secrets
from .escaping import SAFE_SCHEMES

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


def sanitize(content: str, *, images: bool = False) -> str:
    """Rendered HTML of a generated page with anything that could run removed, and, unless
    ``images``, any image (memory text shows images as links: nothing is fetched)."""
    import nh3

    tags = set(nh3.ALLOWED_TAGS) | _SVG_TAGS
    return nh3.clean(
        content,
        tags=tags if images else tags - {"img"},
        attributes=_ATTRIBUTES,
        generic_attribute_prefixes={"aria-", "data-"},
        link_rel=None,
        url_schemes=SAFE_SCHEMES,
        strip_comments=True,
    )


def content_policy(*, remote_images: bool = False) -> str:
    """The Content-Security-Policy of every page: everything from the site itself, nothing
    from another host (``remote_images``: images from anywhere). Material needs its inline
    scripts and styles and ``data:`` icons; the search worker and the offline shim's
    iframe come from the site."""
    images = "'self' data: https: http:" if remote_images else "'self' data:"
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self' 'unsafe-inline'",
            "style-src 'self' 'unsafe-inline'",
            f"img-src {images}",
            "font-src 'self' data:",
            "connect-src 'self'",
            "media-src 'self'",
            "frame-src 'self' blob:",
            "worker-src 'self' blob:",
            "child-src 'self' blob:",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
        ]
    )


def with_policy(page: str, policy: str) -> str:
    """A rendered page with the policy as the first element of its ``<head>``."""
    quoted = html.escape(policy, quote=False).replace('"', "&quot;")
    meta = f'<meta http-equiv="Content-Security-Policy" content="{quoted}">'
    found = _HEAD.search(page)
    if found is None:
        return meta + page
    return page[: found.end()] + meta + page[found.end() :]


_HEAD = re.compile(r"<head\b[^>]*>", re.IGNORECASE)


def plain_title(page: str, title: object, meta_title: object, site_name: str) -> str:
    """A rendered page whose ``<title>`` holds plain escaped text, whatever the page title.

    Material writes ``page.title`` there through ``striptags`` (which turns ``&lt;`` back
    into ``<``, so a title could close the element and open a script), or the page's meta
    title as it is, or the site name: whichever of these the theme wrote is escaped."""
    from markupsafe import Markup

    written = {site_name}
    if title:
        written |= {f"{Markup(str(title)).striptags()} - {site_name}", f"{title} - {site_name}"}
    if meta_title:
        written.add(f"{meta_title} - {site_name}")
    start = page.find("<title>")
    if start < 0:
        return page
    start += len("<title>")
    for text in sorted(written, key=len, reverse=True):
        if text and page.startswith(text + "</title>", start):
            return page[:start] + html.escape(text, quote=False) + page[start + len(text) :]
    return page


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
