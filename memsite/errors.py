"""Exceptions raised by memsite; each message is one line a person can act on.

A message that names something the caller passes (``--at`` on the command line, ``at`` in
the Python API and the MCP tools) names a ``Param``, which is spelled as the interface that
is running spells it (issue 25.5): the command line says ``spelled(FLAGS)`` around a command,
the MCP server ``spelled(TOOLS)`` around a tool call; anything else is the Python API.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

FLAGS, KEYWORDS, TOOLS = "flags", "keywords", "tools"
_SPELLING: ContextVar[str] = ContextVar("memsite_spelling", default=KEYWORDS)


@contextlib.contextmanager
def spelled(spelling: str) -> Iterator[None]:
    """Messages made inside the block name parameters as ``spelling`` (``FLAGS``,
    ``KEYWORDS`` or ``TOOLS``) spells them."""
    token = _SPELLING.set(spelling)
    try:
        yield
    finally:
        _SPELLING.reset(token)


@dataclass(frozen=True)
class Param:
    """A parameter a message names: ``flag`` on the command line, ``keyword`` in the Python
    API and the MCP tools; a ``switch`` is said with its value (``allow_future=True``), and
    one the MCP tools do not take is not ``offered`` there."""

    keyword: str
    flag: str
    switch: bool = False
    tool: bool = True

    def __format__(self, spec: str) -> str:
        if _SPELLING.get() == FLAGS:
            return format(self.flag, spec)
        return format(f"{self.keyword}=True" if self.switch else self.keyword, spec)

    def __str__(self) -> str:
        return format(self)

    def given(self, value: object) -> str:
        """The parameter with a value, as the running interface takes it: ``--budget 3,000``,
        ``budget=3000``."""
        if _SPELLING.get() == FLAGS:
            return f"{self.flag} {value:,}" if isinstance(value, int) else f"{self.flag} {value}"
        return f"{self.keyword}={value}"

    @property
    def own(self) -> str:
        """How one of several values is given: ``its own --tag``, ``its own item of tags``."""
        return f"its own {self}" if _SPELLING.get() == FLAGS else f"its own item of {self}"

    @property
    def offered(self) -> bool:
        """Whether the interface that is running takes this parameter."""
        return self.tool or _SPELLING.get() != TOOLS


AT = Param("at", "--at")
ALLOW_FUTURE = Param("allow_future", "--allow-future", switch=True)
ALLOW_PAST = Param("allow_past", "--allow-past", switch=True)
ALLOW_SECRETS = Param("allow_secrets", "--allow-secrets", switch=True, tool=False)
WHY = Param("why", "--why")
CATEGORY = Param("category", "--category")
SUPERSEDES = Param("supersedes", "--supersedes")
TAGS = Param("tags", "--tag")
PATHS = Param("paths", "--path")
COMMIT = Param("commit", "--commit")
BUDGET = Param("budget", "--budget")
# ``why``'s own argument: ``memsite why PATH``, ``why(path)``
PATH = Param("path", "PATH")


@dataclass(frozen=True)
class Verb:
    """A command a message tells the caller to run, as the running interface runs it: the
    command line's ``'memsite session start TASK'``, the API's ``session_start(task)``, the
    MCP server's ``the session_start tool``."""

    cli: str
    api: str
    tool: str

    def __format__(self, spec: str) -> str:
        said = {FLAGS: f"'{self.cli}'", KEYWORDS: self.api, TOOLS: f"the {self.tool} tool"}
        return format(said[_SPELLING.get()], spec)

    def __str__(self) -> str:
        return format(self)


START_SESSION = Verb("memsite session start TASK", "start_session(task)", "session_start")
SEARCH_IDS = Verb("memsite search", "search()", "search")
CHECK_TREE = Verb("memsite check", "check()", "check")


class MemsiteError(Exception):
    """Base class: every error memsite raises on purpose."""


class InvalidInput(MemsiteError):
    """A title, date, option or body was refused before anything was written."""


class BadValue(InvalidInput):
    """A value given for an option or argument cannot be used; the command line reports it as
    a usage error (exit 2)."""


class BadNumber(BadValue):
    """A number that is not whole, not finite or out of its range; the message names the
    parameter and the range (issue 22)."""


class EmptyQuery(BadValue):
    """A search query with nothing to search for: no words, no phrase, no filter."""


class NotFound(MemsiteError):
    """A tree, session or entry that was asked for does not exist."""


class UnknownReference(NotFound, BadValue):
    """An id given as a value (``--supersedes``) that names no entry: not found for the API,
    and a usage error (exit 2) on the command line (issue 39.3)."""


class WriteFailed(MemsiteError):
    """A write could not complete; the file was left exactly as it was."""


class UnsafePath(MemsiteError):
    """A path resolves outside the memory tree (a symlink or `..`)."""
