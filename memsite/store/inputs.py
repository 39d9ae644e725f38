"""Validation of text given to the write commands, before anything touches the tree."""

from __future__ import annotations

import unicodedata

from ..errors import InvalidInput

BODY_LIMIT = 1024 * 1024  # bytes of UTF-8, measured before redaction
LINE_LIMIT = 1000  # characters, for titles, actions, tags and other one-line values
_SEPARATORS = {"\u2028", "\u2029", "\x85"}


def _bad_character(text: str, allowed: str) -> str | None:
    for char in text:
        if char in allowed:
            continue
        if char in _SEPARATORS or unicodedata.category(char) == "Cc":
            return char
        if "\ud800" <= char <= "\udfff":
            return char
    return None


def _describe(char: str) -> str:
    if char == "\x00":
        return "a NUL byte"
    if char == "\n":
        return "a newline"
    if "\ud800" <= char <= "\udfff":
        return "invalid Unicode (a lone surrogate, from bytes that are not UTF-8)"
    return f"a control character (U+{ord(char):04X})"


def one_line(value: str | None, name: str) -> str:
    """A title, action, tag, category or id: one line, no control characters, not empty."""
    if value is None or not value.strip():
        raise InvalidInput(f"{name} is empty")
    bad = _bad_character(value, "\t")
    if bad is not None:
        raise InvalidInput(f"{name} contains {_describe(bad)}; it must be a single line of text")
    value = " ".join(value.split())
    if len(value) > LINE_LIMIT:
        raise InvalidInput(f"{name} is {len(value)} characters; the limit is {LINE_LIMIT}")
    return value


def multi_line(value: str | None, name: str) -> str:
    """Why, risk, result, summary or body: newlines and tabs are fine, NUL and controls are not."""
    if value is None:
        return ""
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    bad = _bad_character(value, "\t\n")
    if bad is not None:
        raise InvalidInput(f"{name} contains {_describe(bad)}")
    size = len(value.encode("utf-8"))
    if size > BODY_LIMIT:
        raise InvalidInput(f"{name} is {size:,} bytes; the limit is {BODY_LIMIT:,} bytes (1 MiB)")
    return strip_blank_edges(value)


def strip_blank_edges(value: str) -> str:
    """Drop blank lines (and surrounding whitespace) at both ends, keep inner layout."""
    lines = value.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return ""
    lines[-1] = lines[-1].rstrip()
    return "\n".join(lines)


def tag(value: str) -> str:
    value = one_line(value, "tag")
    if "," in value:
        raise InvalidInput(f"tag {value!r} contains a comma; give each tag its own --tag")
    return value


def detail_key(value: str) -> str:
    value = one_line(value, "detail key")
    if ":" in value:
        raise InvalidInput(f"detail key {value!r} contains ':'")
    return value
