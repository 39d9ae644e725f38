"""The optional offline embedding model (issue 6): what is embedded for a chunk, and loading
the model that turns texts into unit vectors.

The ``semantic`` extra installs ``wordllama``, a static-embedding model whose weights ship
inside its wheel: a text's vector is the mean of its tokens' vectors, so embedding is a table
lookup, fast on a laptop CPU. ``numpy`` and the model's libraries are imported inside the
functions that need them, so importing memsite costs nothing and everything works without
the extra.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import MemsiteError

if TYPE_CHECKING:
    import numpy as np

    from ..chunks import Chunk

CONFIG = "l2_supercat"
DIM = 256
# The model averages token vectors, so the opening of a long text already carries its
# meaning; the cap keeps a huge pasted note from padding a whole batch to its length.
MAX_CHARS = 4000
_TENSOR = "embedding.weight"
# Belt and braces: the loader never asks for a download, and these make any library
# underneath refuse one too.
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


# Bookkeeping fields say nothing about the subject and are alike in every entry.
_BOOKKEEPING = re.compile(r"^[-*+] \*\*(?:Id|Author|Supersedes|Superseded by):\*\*.*$", re.M)
_FIELD_LABEL = re.compile(r"^[-*+] \*\*[^*\n]+:\*\* ?", re.M)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_MARKUP = re.compile(r"```[\w-]*|[*`#>|]+")
_DATED_TITLE = re.compile(r"^(?:\d{4}-\d{2}-\d{2}|\d{2}:\d{2}(?::\d{2})?)\s*[—–-]\s*")


class ModelUnavailable(MemsiteError):
    """The semantic extra is missing or its packaged model files cannot be read."""


def available() -> bool:
    """Whether the ``semantic`` extra is installed (cheap: nothing is imported)."""
    try:
        return all(
            importlib.util.find_spec(name) is not None
            for name in ("wordllama", "numpy", "tokenizers", "safetensors")
        )
    except (ImportError, ValueError):
        return False


def text_key(text: str) -> str:
    """The cache key of a text: a hash of exactly what is embedded."""
    return hashlib.blake2b(text[:MAX_CHARS].encode("utf-8"), digest_size=16).hexdigest()


def document(chunk: Chunk) -> str:
    """What is embedded for a chunk: its heading and prose, without markup, comments or
    bookkeeping fields.

    Field labels (``**Why:**``), ids and authors appear in every entry alike; left in, they
    pull all vectors toward each other (measured: 0.57 → 0.61 semantic-only recall@5 on the
    bench set when removed).
    """
    body = _BOOKKEEPING.sub("", _COMMENT.sub("", chunk.body))
    body = _MARKUP.sub(" ", _FIELD_LABEL.sub("", body))
    return f"{_DATED_TITLE.sub('', chunk.heading)}\n{' '.join(body.split())}"


class Embedder:
    """The loaded model: turns texts into unit vectors. Get it with ``load()``.

    A text's vector is the mean of its tokens' rows of the embedding table (what wordllama's
    own ``embed`` computes; a test checks the two agree), scaled to unit length.
    """

    def __init__(self, tokenizer: object, table: np.ndarray) -> None:
        self._tokenizer = tokenizer
        self._table = table
        self.calls = 0
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A ``(len(texts), DIM)`` float32 matrix of unit vectors (zero for texts without words)."""
        import numpy as np

        self.calls += 1
        self.embedded += len(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(  # type: ignore[attr-defined]
            [t[:MAX_CHARS] for t in texts], add_special_tokens=False
        )
        last = len(self._table) - 1
        for row, encoding in enumerate(encodings):
            ids = np.asarray(encoding.ids, dtype=np.int64)
            if ids.size:
                out[row] = self._table[np.clip(ids, 0, last)].astype(np.float32).mean(axis=0)
        return normalise_rows(out)

    def embed_one(self, text: str) -> np.ndarray:
        """The unit vector of one text (a query)."""
        return self.embed([text])[0]

    def embed_weighted(self, text: str, weights: Sequence[tuple[int, int, float]]) -> np.ndarray:
        """The unit vector of ``text`` with each token's row weighed by the character range
        it falls in: ``weights`` holds ``(start, end, weight)`` ranges of ``text``, and a
        token counts as the most heavily weighed range it overlaps, 0 outside every range.

        With one weight for every word this is :meth:`embed_one` without the tokens between
        words; the caller weighs a question's words by how rare they are in the memory
        (``index.search``), so that "large language model" is not outweighed by "can my team
        ... in our accounts". Falls back to :meth:`embed_one` when no token is weighed.
        """
        import numpy as np

        text = text[:MAX_CHARS]
        encoding = self._tokenizer.encode(text, add_special_tokens=False)  # type: ignore[attr-defined]
        reach = np.zeros(len(text), dtype=np.float32)  # each character's weight
        for start, end, weight in weights:
            span = reach[start:end]
            np.maximum(span, weight, out=span)
        scale = np.array(
            [reach[start:end].max(initial=0.0) for start, end in encoding.offsets],
            dtype=np.float32,
        )
        if not scale.any():
            return self.embed_one(text)
        self.calls += 1
        self.embedded += 1
        ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, len(self._table) - 1)
        vector = (self._table[ids].astype(np.float32) * scale[:, None]).sum(axis=0, keepdims=True)
        return normalise_rows(vector)[0]


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero (no division warnings)."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


def package_folder() -> Path | None:
    """Where the installed ``wordllama`` package lives (found without importing it)."""
    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache
def load() -> Embedder:
    """The model, loaded once per process from the files inside the installed wheel.

    The embedding table (memory-mapped from its safetensors file) and the tokenizer
    (``tokenizers``) are read straight from the wordllama package. Importing wordllama itself would add 0.3 s to every
    command (it imports pydantic, requests and toml, and configures the root logger), and
    its ``WordLlama.load()`` looks for the packaged tokenizer in the wrong folder and then
    tries to download it. Nothing here can download: no network code is loaded, the hub
    libraries are told to stay offline, and a missing file raises ``ModelUnavailable``.
    """
    if not available():
        raise ModelUnavailable(
            "semantic ranking needs the optional model, memsite's semantic extra: "
            "pip install -e '/path/to/memsite[semantic]', or pass --lexical"
        )
    os.environ.update(_OFFLINE_ENV)
    reinstall = "reinstall it with pip install --force-reinstall -e '/path/to/memsite[semantic]'"
    try:
        import numpy as np  # noqa: F401 (the extra's own check: numpy is what reads the table)
        from tokenizers import Tokenizer
    except ImportError as err:
        raise ModelUnavailable(
            f"the semantic extra does not import ({err}); {reinstall}, or pass --lexical"
        ) from err
    package = package_folder()
    if package is None:
        raise ModelUnavailable(f"the wordllama package cannot be found; {reinstall}")
    weights, vocabulary = weight_file(package), tokenizer_file(package)
    for path in (weights, vocabulary):
        if not path.is_file():
            raise ModelUnavailable(
                f"{path}: model file missing from the wordllama package; {reinstall}, "
                "or pass --lexical"
            )
    try:
        table = _mapped_table(weights)
        tokenizer = Tokenizer.from_file(str(vocabulary))
    except Exception as err:  # tokenizers raises its own error types
        raise ModelUnavailable(
            f"{package}: the embedding model does not load ({err}); {reinstall}, or pass --lexical"
        ) from err
    if table.shape[1:] != (DIM,):
        raise ModelUnavailable(f"{weights}: expected {DIM} dimensions, found {table.shape}")
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return Embedder(tokenizer, table)


def _mapped_table(weights: Path) -> np.ndarray:
    """The embedding table of the safetensors file, memory-mapped (issue 24): a query reads
    the rows of its few tokens, not the whole table (the file is an 8-byte header length, a
    JSON header naming each tensor's type, shape and byte range, then the tensors)."""
    import json
    import struct

    import numpy as np

    with weights.open("rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        if length > 1_000_000:
            raise ValueError(f"a header of {length:,} bytes")
        header = json.loads(handle.read(length))
    tensor = header[_TENSOR]
    kind = {"F16": np.float16, "F32": np.float32}[tensor["dtype"]]
    start, end = tensor["data_offsets"]
    shape = tuple(tensor["shape"])
    if len(shape) != 2 or end - start != shape[0] * shape[1] * np.dtype(kind).itemsize:
        raise ValueError(f"{_TENSOR}: shape {shape} does not fill bytes {start}-{end}")
    return np.memmap(weights, dtype=kind, mode="r", offset=8 + length + start, shape=shape)


def weight_file(package: Path) -> Path:
    """The packaged embedding table."""
    return package / "weights" / f"{CONFIG}_{DIM}.safetensors"


def tokenizer_file(package: Path) -> Path:
    """The packaged tokenizer."""
    return package / "tokenizers" / f"{CONFIG}_tokenizer_config.json"
