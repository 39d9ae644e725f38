"""memsite: an AI agent's memory as plain markdown files, searchable and published as a site."""

from .errors import (
    BadNumber,
    BadValue,
    EmptyQuery,
    InvalidInput,
    MemsiteError,
    NotFound,
    UnsafePath,
    WriteFailed,
)
from .memory import Memory
from .store.model import Entry, HotContext, SessionStart

__version__ = "0.1.0"

__all__ = [
    "BadNumber",
    "BadValue",
    "EmptyQuery",
    "Entry",
    "HotContext",
    "InvalidInput",
    "Memory",
    "MemsiteError",
    "NotFound",
    "SessionStart",
    "UnsafePath",
    "WriteFailed",
    "__version__",
]
