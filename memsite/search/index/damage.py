"""What a damaged index raises when it is read, told apart from every other failure of a
search (issue 22).

A search used to take any exception for damage and rebuild the whole index: a query holding
a lone surrogate made the embedding tokenizer raise ``TypeError``, and ``memsite search``
rebuilt the index (minutes on a large tree) before showing the same traceback. Damage is
now what reading the files raises: the disk's and the decoders' errors, Whoosh's own, and
anything raised from inside the code that decodes the files (Whoosh's codecs, storage,
columns and matchers, and :mod:`.postings`, which reads Whoosh's postings itself), or that
analyses the text stored in them again (highlights, more-like-this). Flipping random bytes
of an index's files (1,650 runs, five seeds, searches and related lists after each) raised,
beside those types, ``IndexError``, ``KeyError``, ``ValueError``, ``TypeError``,
``AttributeError`` and a bare ``Exception`` from inside those modules, which the second rule
catches (400 runs with both rules in place: nothing got through). A query reaches them only as clean text
(``store.inputs.clean``), so a query is never taken for damage.
"""

from __future__ import annotations

import contextlib
import pickle
import struct
import warnings
import zlib
from collections.abc import Iterator

import whoosh.index
from whoosh.filedb.filetables import FileFormatError

from . import postings
from .state import IndexBroken

# what reading a cut, garbled or vanished index file raises, wherever it is raised
READING_ERRORS = (
    OSError,
    EOFError,
    UnicodeDecodeError,
    pickle.UnpicklingError,
    struct.error,
    zlib.error,
    whoosh.index.IndexError,
    FileFormatError,
    postings.Unreadable,
    IndexBroken,
)
# the modules that decode the index's files or analyse the text read from them: an error
# raised inside one is about the files
READERS = (
    "whoosh.codec.",
    "whoosh.filedb.",
    "whoosh.columns",
    "whoosh.reading",
    "whoosh.matching.",
    "whoosh.util.",
    "whoosh.analysis.",
    postings.__name__,
)


def is_damage(err: BaseException) -> bool:
    """Whether ``err``, raised during a search, says the index's files are damaged (rebuild
    them) rather than that the question or memsite itself is at fault (let it through)."""
    if isinstance(err, READING_ERRORS):
        return True
    where = err.__traceback__
    if where is None:
        return False
    while where.tb_next is not None:
        where = where.tb_next
    module = str(where.tb_frame.f_globals.get("__name__", ""))
    return module.startswith(READERS)


@contextlib.contextmanager
def quiet_leaks() -> Iterator[None]:
    """Whoosh leaves the file it was reading open when it fails on a damaged index: the
    caller collects such files inside this block, quietly, instead of a ResourceWarning at
    some unrelated later moment."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        yield
