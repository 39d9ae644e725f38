"""Exceptions raised by memsite; each message is one line a person can act on."""


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


class WriteFailed(MemsiteError):
    """A write could not complete; the file was left exactly as it was."""


class UnsafePath(MemsiteError):
    """A path resolves outside the memory tree (a symlink or `..`)."""
