"""Memory text made safe to hand to the markdown renderer, in the markdown itself.

Memory text is written by agents and people and is never trusted. Before it reaches the
renderer, ``<`` outside code becomes ``&lt;`` (raw HTML shows as text), links and reference
definitions to script schemes lose their link syntax, images become links (``images=False``:
the site then fetches nothing from elsewhere), and what would make the renderer recurse or
go quadratic is bounded (``store.markup``'s limits). Code spans are found the way the renderer
finds them and every other backtick is an entity, so both always agree on what is code.

Every escape is an entity (``&#91;``, ``&#96;``, ...), never a backslash: a backslash the
author wrote before it would cancel it. The plugin's nh3 pass is a second line, but the
``--docs-only`` export has no such pass: the markdown alone must be inert.

A fence is left unescaped as code only in a shape that ``pymdownx.superfences`` (the fences
of every export's ``mkdocs.yml``) reads as the same code block: it rejects a fence with more
than a language after it (``graphviz dot a.svg``, attributes, options), one indented beside
its lines, or one closed by a longer or indented fence, and renders its lines as prose, raw
HTML included. Any other code block is written again in that shape (``code_block``), showing
the same lines, so no reader of the markdown takes them for prose.
"""

from __future__ import annotations

import html
import re

from ..store.markup import (
    MAX_EMPHASIS,
    MAX_FENCES,
    MAX_HEADINGS,
    MAX_NESTING,
    MAX_PARAGRAPH,
    closed_fences,
    container_prefix,
    emphasis_marks,
    fence_open,
    is_heading,
    nesting,
    normalize_newlines,
    outside_spans,
    paragraph_size,
    paragraphs,
    split_lines,
)

SAFE_SCHEMES = {"http", "https", "mailto", "ftp"}
MAX_BRACKETS = 8  # open "[" at once in one paragraph; deeper ones are text (else quadratic)
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")
_LINK_OPEN = re.compile(r"\]\(")
_TARGET = re.compile(r"\s*<?([^)\s>]*)")  # the URL after a "](", if any
_DEFINITION = re.compile(r"\]:[ \t]*(\S*)")  # "]:" and the target after it, if any
_AUTOLINK_CHARS = re.compile(r"[\x00-\x20]")
_BACKTICKS = re.compile(r"`+")
_ENTITY_LIKE = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")  # a fence, as store.markup reads one
# what may follow a fence for superfences to read a plain code block: a language word at most
PLAIN_INFO = re.compile(r"[ \t]*[A-Za-z0-9_#.+-]*[ \t]*")
# what a character outside code becomes when it must be text
_ENTITY = {
    "<": "&lt;",
    "{": "&#123;",  # would open an attr_list block ("{: onclick=... }")
    "[": "&#91;",
    "(": "&#40;",
    "!": "&#33;",
    "`": "&#96;",
    "*": "&#42;",
    "_": "&#95;",
    "#": "&#35;",
    "=": "&#61;",
    "-": "&#45;",
    "~": "&#126;",
}


def unsafe_url(url: str) -> bool:
    plain = _AUTOLINK_CHARS.sub("", html.unescape(url)).lower().lstrip("<")
    found = _SCHEME.match(plain)
    return bool(found) and found.group(1) not in SAFE_SCHEMES


def heading_chars(text: str) -> str:
    """Text of a heading or page title with nothing that Material's ``striptags`` (which
    turns ``&lt;`` back into ``<``) could make a tag of: ``<``/``>`` become look-alikes
    and a written entity stays written."""
    text = text.replace("<", "\u2039").replace(">", "\u203a")
    return _ENTITY_LIKE.sub("&amp;", text)


def title_text(text: str) -> str:
    """A page title or nav label for MkDocs (which treats it as HTML), inert everywhere the
    theme puts it, ``<title>`` included."""
    text = " ".join(text.split()).replace("<", "\u2039").replace(">", "\u203a")
    return html.escape(text, quote=False)


def code_span(text: str) -> str:
    """A one-line value as a code span whose fence is longer than any backtick run in it, so
    nothing in the value can close it early."""
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


class _Paragraph:
    """Escapes the prose lines of one paragraph: brackets are matched across its lines and
    its emphasis marks counted over all of them."""

    def __init__(self, images: bool) -> None:
        self.images = images
        self.emphasis = 0
        self.open: list[tuple[int, int]] = []  # "[" not closed yet: (line number, offset)
        self.lines: list[list[str]] = []

    def add(self, line: str, following: str) -> None:
        line = _without_reference(line, following)
        chars = list(line)
        marks = set(emphasis_marks(line))
        for start, end in outside_spans(line):
            for opened in _LINK_OPEN.finditer(line, start, end):  # every one, nested too
                found = _TARGET.match(line, opened.end(), end)
                target = found.group(1) if found else ""
                if not target or unsafe_url(target) or ")" not in line[opened.end() : end]:
                    # "(" becomes an entity, so no link starts, whatever the link text holds
                    chars[opened.start() + 1] = _ENTITY["("]
            for offset in range(start, end):
                self._char(chars, offset, offset in marks)
        self.lines.append(chars)

    def _char(self, chars: list[str], offset: int, emphasis: bool) -> None:
        char = chars[offset]
        if char in "<{`":  # "`" outside every span could pair up with another line's
            chars[offset] = _ENTITY[char]
        elif char == "!" and not self.images and chars[offset + 1 : offset + 2] == ["["]:
            chars[offset] = _ENTITY["!"]  # an image is a link: nothing fetched from outside
        elif char == "[":
            if len(self.open) >= MAX_BRACKETS:
                chars[offset] = _ENTITY["["]
            else:
                self.open.append((len(self.lines), offset))
        elif char == "]" and self.open:
            self.open.pop()
        elif emphasis:
            self.emphasis += 1
            if self.emphasis > MAX_EMPHASIS:
                chars[offset] = _ENTITY[char]

    def finish(self) -> list[str]:
        for number, offset in self.open:  # never closed: the renderer would scan to the end
            self.lines[number][offset] = _ENTITY["["]
        return ["".join(chars) for chars in self.lines]


def _without_reference(line: str, following: str) -> str:
    """A reference definition to a script scheme becomes text: its ``:`` an entity. Its
    label may start lines above (``[`` at the end of one line, ``x]:`` on the next) and its
    target may be on the next line, so every ``]:`` is looked at, wherever it is."""
    out, last = [], 0
    for found in _DEFINITION.finditer(line):
        target = found.group(1).split()[:1] or following.lstrip(" \t>").split()[:1]
        if not target or unsafe_url(target[0].strip("<>")):
            out += [line[last : found.start() + 1], "&#58;"]
            last = found.start() + 2
    return "".join(out) + line[last:]


def _as_code(lines: list[str]) -> str:
    """Lines shown verbatim, in a fence that no line of theirs can close."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join(["", fence, *lines, fence, ""])


def plain_fence(fence: str, info: str) -> str:
    """A fence's opening line with ``info`` after it when that is at most a language word,
    else the language ``text``: a line every renderer reads as the same fence."""
    return fence + info if PLAIN_INFO.fullmatch(info) else f"{fence}text"


def code_block(lines: list[str]) -> list[str]:
    """A closed code fence, its opening and closing lines included, in the one shape
    ``pymdownx.superfences`` reads as the same block: unindented, at most a language after
    it, and closed by the same fence. A block in another shape gets a backtick fence longer
    than any backtick run in its lines (so none of them can close it) and its lines lose the
    opener's indentation, as CommonMark shows them."""
    found = _FENCE.fullmatch(lines[0])
    assert found, lines[0]  # store.markup.closed_fences opens a block only on a fence
    indent, marker, info = found.groups()
    if not indent and PLAIN_INFO.fullmatch(info) and lines[-1].rstrip(" \t") == marker:
        return lines
    inner = [line[: len(indent)].lstrip(" ") + line[len(indent) :] for line in lines[1:-1]]
    longest = max((len(run) for line in inner for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [plain_fence(fence, info), *inner, fence]


def _headings(lines: list[str], group: list[int], seen: int) -> tuple[set[int], set[int]]:
    """The lines of a paragraph that are heading text, and the heading lines beyond
    ``MAX_HEADINGS`` (``seen`` headings came before it)."""
    titled, beyond = set(), set()
    for index in group:
        if is_heading(lines, index):
            seen += 1
            if seen > MAX_HEADINGS:
                beyond.add(index)
            rest = lines[index][len(container_prefix(lines[index])) :]
            if rest.startswith("#"):
                titled.add(index)
            else:  # a setext underline: the paragraph's lines above it are the heading
                titled.update(i for i in group if i < index)
    return titled, beyond


def _bounded(line: str, heading: bool, beyond: bool) -> str:
    prefix = container_prefix(line)
    rest = line[len(prefix) :]
    if nesting(line) > MAX_NESTING:  # deeper nesting makes the renderer recurse
        prefix = prefix.expandtabs(4)[:MAX_NESTING]
    if heading:
        rest = heading_chars(rest)
    if beyond and rest[:1] in "#=-":  # blank lines keep it from joining a paragraph
        rest = _ENTITY[rest[0]] + rest[1:] + "\n"
        prefix = "\n" + prefix
    if fence_open(rest):  # a fence that never closes here could close another text's
        start = len(rest) - len(rest.lstrip(" "))
        rest = rest[:start] + _ENTITY[rest[start]] + rest[start + 1 :]
    return prefix + rest


def escape_markdown(text: str, *, images: bool = False) -> str:
    """Memory text made safe to hand to the renderer (see the module docstring)."""
    lines = split_lines(normalize_newlines(text))  # as the renderer splits it
    out = list(lines)
    code: set[int] = set()
    for start, end in closed_fences(lines)[:MAX_FENCES]:
        out[start : end + 1] = code_block(lines[start : end + 1])
        code.update(range(start, end + 1))
    prose = [index for index in range(len(lines)) if index not in code]
    headings = 0
    for group in paragraphs(lines, prose):
        if paragraph_size(lines, group) > MAX_PARAGRAPH:
            out[group[0]] = _as_code([lines[index] for index in group])
            for index in group[1:]:
                out[index] = None  # type: ignore[call-overload]
            continue
        titled, beyond = _headings(lines, group, headings)
        headings += sum(1 for index in group if is_heading(lines, index))
        paragraph = _Paragraph(images)
        for index in group:
            line = _bounded(lines[index], index in titled, index in beyond)
            paragraph.add(line, lines[index + 1] if index + 1 < len(lines) else "")
        for index, escaped in zip(group, paragraph.finish(), strict=True):
            out[index] = escaped
    if prose[:1] != [0]:
        # a code fence on the first line: a template may put the text after a label
        # ("**Why:** ..."), where no fence opens and its code would be read as prose
        out.insert(0, "")
    return "\n".join(line for line in out if line is not None)


def escape_inline(text: str, *, images: bool = False) -> str:
    """A one-line value (a title, a tag) made safe for a heading, link text or table cell."""
    text = escape_markdown(" ".join(text.split()), images=images)
    # Characters that would open markup of their own inside a heading or table.
    return text.replace("|", "\\|").replace("{", "&#123;").replace("}", "&#125;")


def escape_heading(text: str, *, images: bool = False) -> str:
    """A one-line value that becomes a heading: inline-safe, and with nothing that the
    page title or table of contents could turn back into a tag (``heading_chars``)."""
    return escape_inline(heading_chars(text), images=images)
