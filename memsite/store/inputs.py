"""What a caller gives memsite, checked before anything touches the tree: text given to the
write commands, text from outside made fit to store (``clean``), and numbers (``count``,
``real``) within the range each is documented with (docs/cli.md).

The command line checks the same ranges as it parses its options (``cli/options.py``, with
the descriptions ``whole`` and ``finite``); the checks here are for callers of the Python API
and the MCP tools, and their ``BadNumber`` names the parameter, not a flag (issue 22).
Without them ``nan`` slipped past every comparison, a 400-digit ``--used`` overflowed a float
division, and ``inf`` seconds reached ``subprocess``.
"""

from __future__ import annotations

import math
import operator
import re
import unicodedata

from ..errors import TAGS, BadNumber, BadValue, InvalidInput, Param

BODY_LIMIT = 1024 * 1024  # bytes of UTF-8, measured before redaction
LINE_LIMIT = 1000  # characters, for titles, actions, tags and other one-line values
# Token counts (budgets, windows, tokens used): ten times the largest context window a model
# offers today, and the bound of the [budget] window in memsite.toml.
MAX_TOKENS = 10_000_000
# hits a search, recall, related list or evaluation asks for: more than any memory holds,
# so that asking for "all of them" works
MAX_HITS = 1_000_000
MAX_SECONDS = 3_600.0  # the longest a summarizer may run: an hour
MIN_SECONDS = 0.1  # the shortest: less cannot start a process
_SEPARATORS = {"\u2028", "\u2029", "\x85"}
# what Python's str.splitlines ends a line at: a line and paragraph separator is a newline
_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# a terminal's colour and cursor codes (CSI, and OSC up to its BEL or ST): dropped whole, so
# no "[31m" is left behind once the escape character is gone
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)")
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
# what ``escaped`` writes as an escape: every control character (tab and newline too), the
# line and paragraph separators, and lone surrogates
_UNPRINTED = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
CUT_MARK = " […]"  # ends a value from outside that was cut to its limit


def clean(text: str) -> str:
    """Text from outside memsite (a summarizer's output, a hook's fields, a query) made into
    text ``multi_line`` accepts: a lone surrogate (a byte that was not UTF-8, half of a cut
    emoji) becomes U+FFFD and a split pair is joined again, every line break (CR, NEL,
    U+2028, U+2029, VT, FF) is a newline, terminal escape codes and every other control
    character (C0 but tab and newline, DEL, C1) are dropped. Size is left to the caller."""
    text = whole_characters(text)
    return _CONTROLS.sub("", _ESCAPES.sub("", _BREAKS.sub("\n", text)))


def stored_line(text: str) -> str:
    """A one-line value read back from a file memsite keeps and a person may edit (the live
    session in ``hot/``): ``clean``, its whitespace (newlines too) single spaces. A lone
    surrogate's escape or a newline in its task made every write of the session fail (the
    first a ``UnicodeEncodeError``, the second an archive that never read back as written)."""
    return " ".join(clean(text).split())


def whole_characters(text: str) -> str:
    """``text`` with each lone surrogate U+FFFD and each split pair joined again. For a path
    an agent CLI names in its JSON (``"a\\ud83d.py"``): it is text, not a file's bytes, and
    the CLI's own file system wrote the file's name so (Node makes a lone surrogate U+FFFD)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def is_utf8(name: str) -> bool:
    """Whether ``name`` (a file's, as ``os`` decodes it with ``surrogateescape``) is UTF-8:
    a name that is not can be held by no index, citation or terminal (the sweep after issue
    36: search for a note so named ended in a traceback)."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escaped(name: str) -> str:
    """A name from outside (a file an agent edited) made one line of text without losing a
    character: each control character, line separator and lone surrogate is written as its
    escape (``\\n``, ``\\t``, ``\\x1b``, ``\\u2028``, ``\\udcff``), so a newline in a file's name
    is shown, never breaks the line it is written on."""
    return _UNPRINTED.sub(lambda found: _SHORT.get(found[0]) or ascii(found[0])[1:-1], name)


def cut(text: str, limit: int = LINE_LIMIT) -> str:
    """``text`` within ``limit`` characters: whole, or its start and ``CUT_MARK``. For text
    from outside that is kept rather than refused; redact it whole before it is cut, so a
    secret across the cut is never left half."""
    if len(text) <= limit:
        return text
    return text[: limit - len(CUT_MARK)].rstrip() + CUT_MARK


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


def one_line(value: str | None, name: str | Param, limit: int | None = LINE_LIMIT) -> str:
    """A title, action, tag, category or id: one line, no control characters, not empty (an
    empty one is a ``BadValue``: a usage error on the command line, issue 25.8), at most
    ``limit`` characters (None: any length, for a value that is cut after redaction)."""
    if value is None or not value.strip():
        raise BadValue(f"{name} is empty")
    bad = _bad_character(value, "\t")
    if bad is not None:
        raise InvalidInput(f"{name} contains {_describe(bad)}; it must be a single line of text")
    value = " ".join(value.split())
    if limit is not None and len(value) > limit:
        raise InvalidInput(f"{name} is {len(value)} characters; the limit is {limit}")
    return value


def multi_line(value: str | None, name: str | Param) -> str:
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
        raise InvalidInput(f"tag {value!r} contains a comma; give each tag {TAGS.own}")
    return value


def detail_key(value: str) -> str:
    value = one_line(value, "detail key")
    if ":" in value:
        raise InvalidInput(f"detail key {value!r} contains ':'")
    return value


def whole(low: int, high: int | None) -> str:
    """What a whole number from ``low`` to ``high`` (None: no upper bound) is called."""
    if high is None:
        return f"a whole number of {low:,} or more"
    return f"a whole number from {low:,} to {high:,}"


def finite(low: float, high: float, low_open: bool = False) -> str:
    """What a finite number from ``low`` (excluded when ``low_open``) to ``high`` is called."""
    if low_open:
        return f"a number above {low:g} and at most {high:g}"
    return f"a number from {low:g} to {high:g}"


def count(value: object, name: str, low: int, high: int | None = None) -> int:
    """``value`` as a whole number from ``low`` to ``high``; a float, a bool or anything out
    of range raises ``BadNumber`` naming ``name``."""
    try:
        number = None if isinstance(value, bool) else operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        number = None
    if number is None or number < low or (high is not None and number > high):
        raise BadNumber(f"{name} must be {whole(low, high)} (got {_shown(value)})")
    return number


def real(value: object, name: str, low: float, high: float, *, low_open: bool = False) -> float:
    """``value`` as a finite float from ``low`` to ``high``; ``nan``, ``inf``, a bool or
    anything out of range raises ``BadNumber`` naming ``name``."""
    number = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float
            number = None
    if (
        number is None
        or not math.isfinite(number)
        or number > high
        or (number <= low if low_open else number < low)
    ):
        raise BadNumber(f"{name} must be {finite(low, high, low_open)} (got {_shown(value)})")
    return number


def _shown(value: object) -> str:
    """The value given, short enough for one line (a 400-digit number is cut)."""
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:20]}… ({len(text)} characters)"
