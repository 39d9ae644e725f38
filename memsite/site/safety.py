"""What keeps memory from running code in the site, fetching from outside, or leaking a
secret through it.

The markdown is made inert before it is rendered (``escaping``); the plugin then sanitizes
the rendered HTML of its own pages with nh3, makes each page's ``<title>`` plain text, and
gives every page a Content-Security-Policy that allows no request to another host.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MemsiteError
from ..store import reading
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
    title as it is, or the site name: whichever of these the theme wrote is escaped. The site
    name is escaped once: as ``page_settings`` leaves it (``Markup``), it already is."""
    from markupsafe import Markup, escape

    name = str(escape(site_name))
    written = {site_name: name}
    texts = [Markup(str(title)).striptags(), str(title)] if title else []
    for text in [*texts, *([str(meta_title)] if meta_title else [])]:
        written[f"{text} - {site_name}"] = f"{html.escape(text, quote=False)} - {name}"
    start = page.find("<title>")
    if start < 0:
        return page
    start += len("<title>")
    for text in sorted(written, key=len, reverse=True):
        if text and page.startswith(text + "</title>", start):
            return page[:start] + written[text] + page[start + len(text) :]
    return page


class UnsafeSetting(MemsiteError):
    """A setting of ``mkdocs.yml`` that Material makes a link of is not a web address."""


# The settings Material's templates print raw into every page (MkDocs' Jinja does not
# autoescape): as text, in attributes, and as links.
TEXT_SETTINGS = ("site_name", "repo_name", "site_description", "site_author")
URL_SETTINGS = ("repo_url", "site_url", "edit_uri", "edit_uri_template")
WEB_SCHEMES = ("http", "https")
# what could end an href="…" or open a tag; percent-encoded, as a browser sends it anyway
_NOT_IN_ATTRIBUTE = re.compile(r"[\x00-\x20\"'<>`\x7f]")


def page_settings(settings: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The settings of ``mkdocs.yml`` (``where``) that Material writes into every page, made
    safe to write raw: text escaped once (``Markup``, so a template's own ``|e`` leaves it as
    it is, and ``R&D <notes>`` shows as written), ``copyright`` sanitized like memory's pages
    (Material documents it as HTML: links and entities stay), each URL percent-encoded where
    it could end its attribute, and ``UnsafeSetting`` for a URL that is not ``http(s)``
    (a relative ``edit_uri`` is a path of ``repo_url`` and keeps its scheme)."""
    from markupsafe import escape

    safe: dict[str, Any] = {}
    for key in TEXT_SETTINGS:
        if settings.get(key):
            safe[key] = escape(str(settings[key]))
    if settings.get("copyright"):
        safe["copyright"] = sanitize(str(settings["copyright"]))
    for key in URL_SETTINGS:
        value = settings.get(key)
        if not value:
            continue
        found = _SCHEME.match(str(value))
        relative = key.startswith("edit_uri") and found is None
        if not relative and (found is None or found.group(1).lower() not in WEB_SCHEMES):
            example = "edit/main/docs/ or https://…" if key.startswith("edit_uri") else "https://…"
            raise UnsafeSetting(
                f"{where}: {key} must be a web address ({example}); Material makes a link of "
                "it on every page, so memsite builds no site with another kind: fix or remove it"
            )
        if key != "edit_uri_template":  # MkDocs formats that one with its own formatter
            safe[key] = attribute_url(str(value))
    return safe


def attribute_url(url: str) -> str:
    """``url`` with every character that could end an HTML attribute percent-encoded."""
    return _NOT_IN_ATTRIBUTE.sub(lambda m: f"%{ord(m.group()):02X}", url)


_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.\-]*):")


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
            text = reading.replaced_text(root / rel)
        except (OSError, reading.NotAFile):
            continue
        leaks += [Leak(rel, found.line, found.kind) for found in find_secrets(text)]
    return leaks
