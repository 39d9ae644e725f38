"""Jinja rendering of the generated pages from ``site-templates/`` (or a team's overrides).

Templates write markdown. Autoescaping is off because the output is markdown, not HTML:
every value that comes from memory goes through the ``text`` (block), ``body`` (a block
under an entry), ``inline`` (one line), ``heading`` (one line that is a heading) or ``code``
(one line as a code span) filter, which make raw HTML show as text (see ``escaping``).
"""

from __future__ import annotations

import datetime as dt
import functools
import posixpath
import re
from pathlib import Path
from typing import Any

from ..errors import NotFound
from ..store.code import is_hash
from ..store.markup import heading_level, outside_fences, slugify, split_lines
from .escaping import code_span, escape_heading, escape_inline, escape_markdown

PACKAGE = Path(__file__).resolve().parent.parent


def default_templates() -> Path:
    """The templates shipped in the wheel, or the repository's folder in an editable install."""
    for candidate in (PACKAGE / "site-templates", PACKAGE.parent / "site-templates"):
        if candidate.is_dir():
            return candidate
    raise NotFound(f"site-templates not found beside {PACKAGE}; reinstall memsite")


def relative(from_uri: str, to_uri: str, anchor: str = "") -> str:
    """A link from one generated page to another (``.md`` paths, as MkDocs resolves them)."""
    target = to_uri if to_uri.endswith(".md") else to_uri
    path = posixpath.relpath(target, posixpath.dirname(from_uri) or ".")
    return f"{path}#{anchor}" if anchor else path


_ANCHOR = re.compile(r"[\w-]+")


def anchor(entry_id: str) -> str:
    """The HTML id of an entry: its id, unless a hand edit made it unusable as one."""
    return entry_id if _ANCHOR.fullmatch(entry_id) else slugify(entry_id, 120)


# A first line MkDocs (and other builders) would read as page metadata ("title: ...").
_METADATA = re.compile(r"^(?:-{3}[ \t]*$|[ ]{0,3}[A-Za-z0-9_-]+:)")


def body(text: str, top: int = 4, *, images: bool = False) -> str:
    """Memory text shown under an entry: escaped, its headings pushed down to level ``top``
    or deeper so they never break the page's own outline."""
    lines = split_lines(escape_markdown(text, images=images))
    if top > 1:
        for index, outside in outside_fences(lines):
            level = heading_level(lines[index]) if outside else 0
            if level and level < top:
                lines[index] = "#" * (top - level) + lines[index].lstrip(" ")
    if lines and _METADATA.match(lines[0]):
        # at the top of a page it would set the page's title unescaped: a blank line first
        # ends the metadata before it starts
        lines.insert(0, "")
    return "\n".join(lines)


_LIST_ITEM = re.compile(r" {0,3}(?:[-*+]|\d{1,9}[.)])(?: |$)")
SHORT_HASH = 10  # characters of a commit hash shown; the whole hash is its title


def lines_kept(text: str, *, images: bool = False) -> str:
    """Memory text whose every line stays a line (a summary written one item a line): a
    line break after each line of a paragraph, and a list that follows a line, or a line
    that follows a list, set apart by a blank line, as markdown needs it to be one."""
    lines = split_lines(body(text, images=images))
    outside = dict(outside_fences(lines))
    out: list[str] = []
    for index, line in enumerate(lines):
        after = lines[index + 1] if index + 1 < len(lines) else ""
        before = lines[index - 1] if index else ""
        prose = outside[index] and line.strip() and not line.lstrip().startswith(("#", "|"))
        if prose and before.strip() and outside.get(index - 1, False):
            item, follows_item = _LIST_ITEM.match(line), _LIST_ITEM.match(before)
            if (item and not follows_item) or (follows_item and not item and line[:1] != " "):
                out.append("")
        listed = _LIST_ITEM.match(after) or _LIST_ITEM.match(line)
        if prose and after.strip() and outside.get(index + 1, False) and not listed:
            line += "  "  # a hard line break
        out.append(line)
    return "\n".join(out)


def commit_code(commit: str) -> str:
    """A commit as a code span: a hash shortened to ``SHORT_HASH`` characters, the whole
    hash its title (on hover); any other ref as written."""
    text = " ".join(commit.split())
    if is_hash(text) and len(text) > SHORT_HASH:
        return f'{code_span(text[:SHORT_HASH])}{{ title="{text}" }}'
    return code_span(text)


def counted(number: int, singular: str, plural: str = "") -> str:
    """``1 note``, ``2 notes``, ``0 entries`` (``plural`` when it is not ``singular + s``)."""
    return f"{number:,} {singular if number == 1 else plural or singular + 's'}"


def long_date(day: dt.date | None) -> str:
    return f"{day:%a} {day.day} {day:%B %Y}" if day else ""


def stamp(text: str) -> str:
    """An ISO-8601 time stamp as people read it (``27 Nov 2026, 09:00``); else as written."""
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return escape_inline(text)
    return f"{moment.day} {moment:%b %Y, %H:%M}"


def short_date(day: dt.date | None) -> str:
    return f"{day.day} {day:%b %Y}" if day else ""


def ago(days: int) -> str:
    if days <= 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days < 60:
        return f"{days} days ago"
    if days < 730:
        return f"{days // 30} months ago"
    return f"{days // 365} years ago"


def indent_lines(text: str, spaces: int = 4) -> str:
    """Indent every line after the first so a block stays inside a list item."""
    pad = " " * spaces
    return "\n".join(
        line if i == 0 or not line else pad + line for i, line in enumerate(text.split("\n"))
    )


class Renderer:
    """Renders named templates; a template in ``override`` wins over the packaged one."""

    def __init__(self, override: Path | None = None, *, images: bool = False) -> None:
        """``images``: memory text may show images (fetched from wherever they are);
        without it an image is a link."""
        import jinja2

        folders = [str(override)] if override else []
        folders.append(str(default_templates()))
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(folders),
            autoescape=False,
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            # "{#id}" is how a page gives a heading its anchor, so comments use "{##".
            comment_start_string="{##",
            comment_end_string="##}",
        )
        # The escaping filters are pure and a year of memory repeats its values (detail
        # labels, file names, authors, titles on several pages): 138,000 calls over 18,500
        # distinct texts, most of the time spent rendering templates (issue 12).
        remembered = functools.lru_cache(maxsize=1 << 16)
        self.env.filters.update(
            text=remembered(functools.partial(escape_markdown, images=images)),
            body=functools.partial(body, images=images),
            anchor=anchor,
            inline=remembered(functools.partial(escape_inline, images=images)),
            heading=remembered(functools.partial(escape_heading, images=images)),
            code=remembered(code_span),
            lines=functools.partial(lines_kept, images=images),
            commit=remembered(commit_code),
            counted=counted,
            long_date=long_date,
            short_date=short_date,
            stamp=stamp,
            ago=ago,
            indent_lines=indent_lines,
        )

    def render(self, name: str, **values: Any) -> str:
        return self.env.get_template(name).render(**values)
