"""Meaning for the ranking: an optional offline embedding model and its vectors (issue 6).

:mod:`.model` is the model and what is embedded for a chunk, :mod:`.vectors` the vector
cache, :mod:`.cosines` how close a query is to the stored vectors; this package gives every
public name of the three (``meaning.load``, ``meaning.Meaning``, ...). They are the only
modules that import ``wordllama`` or ``numpy``, and they import them inside the functions
that need them, so importing memsite costs nothing and everything works without the extra.
"""

from .cosines import BLOCK, FLOOR, Meaning, cosine, meanings, minmax, record_meanings
from .everyday import apart
from .model import (
    CONFIG,
    DIM,
    MAX_CHARS,
    Embedder,
    ModelUnavailable,
    available,
    document,
    load,
    normalise_rows,
    package_folder,
    text_key,
    tokenizer_file,
    weight_file,
)
from .vectors import MODEL, Store, Update, empty, read_store, update, write_store

__all__ = [
    "BLOCK",
    "CONFIG",
    "DIM",
    "FLOOR",
    "MAX_CHARS",
    "MODEL",
    "Embedder",
    "Meaning",
    "ModelUnavailable",
    "Store",
    "Update",
    "apart",
    "available",
    "cosine",
    "document",
    "empty",
    "load",
    "meanings",
    "minmax",
    "normalise_rows",
    "package_folder",
    "read_store",
    "record_meanings",
    "text_key",
    "tokenizer_file",
    "update",
    "weight_file",
    "write_store",
]
