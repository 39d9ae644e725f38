"""``memsite mcp``'s standard input: each line mended before the SDK's stdio transport reads it.

The transport parses a line with pydantic, whose JSON parser refuses an escaped lone surrogate
(``"a\\ud83db"``: half of a cut emoji, which Python's ``json.dumps`` and many clients write
for it); the message is then dropped with only a debug log, and the client waits for an
answer that never comes (a ``recall``, or the ``initialize`` of a client whose name holds
one). Each lone surrogate escape becomes ``\\ufffd`` here, as the transport already makes every
byte that is not UTF-8 and as ``store.inputs.clean`` makes text from outside memsite; an
escaped pair (a whole emoji) and an escaped backslash are left as they are.

As the SDK does for its own standard input, the wire is read from a private duplicate of
file descriptor 0 while 0 points at the null device, so nothing the server starts can read a
client's bytes.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

import anyio

# in one pass from the left, so "\\\\ud83d" (a backslash, then the letters) is never read
# as an escape: an escaped backslash, an escaped pair, or one escaped surrogate alone
_ESCAPES = re.compile(
    r"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)
_LONE = len("\\ud83d")


def mended(line: str) -> str:
    """``line`` with each JSON escape of a lone surrogate made ``\\ufffd``."""
    if "\\u" not in line:
        return line
    return _ESCAPES.sub(lambda found: "\\ufffd" if len(found[0]) == _LONE else found[0], line)


class MendedLines(io.TextIOWrapper):
    """A UTF-8 text reader (a byte that is not UTF-8 becomes U+FFFD) whose lines are mended."""

    def readline(self, size: int | None = -1) -> str:
        return mended(super().readline(-1 if size is None else size))

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


@contextlib.contextmanager
def standard_input() -> Iterator[Any]:
    """The client's lines, mended, as the transport's ``stdin`` (an ``anyio`` file); None
    when standard input is no file descriptor (the transport then reads it its own way)."""
    try:
        wire = os.dup(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):  # no descriptor: the transport's own way
        yield None
        return
    diverted = False
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        diverted = True
    reader = MendedLines(os.fdopen(wire, "rb", closefd=False), encoding="utf-8", errors="replace")
    try:
        yield anyio.wrap_file(reader)
    finally:
        if diverted:
            with contextlib.suppress(OSError):
                os.dup2(wire, 0)
        # the transport's reading thread may still wait on the duplicate: it is left open
