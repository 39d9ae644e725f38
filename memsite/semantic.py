"""Meaning for the ranking: an optional offline embedding model and its vector cache (issue 6).

The ``semantic`` extra installs ``wordllama``, a static-embedding model whose weights ship
inside its wheel: a text's vector is the mean of its tokens' vectors, so embedding is a table
lookup, fast on a laptop CPU. This is the only module that imports ``wordllama`` or
``numpy``, and it imports them inside the functions that need them, so importing memsite
costs nothing and everything works without the extra.

Vectors are cached in the index cache folder, keyed by a hash of the embedded text: an
append embeds only the new chunks, and a missing, corrupt or foreign cache file is simply
rebuilt. The cache is disposable, like the Whoosh index beside it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import logging
import os
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import MemsiteError

if TYPE_CHECKING:
    import numpy as np

CONFIG = "l2_supercat"
DIM = 256
MODEL = f"wordllama/{CONFIG}/{DIM}"
CACHE_FILE = "vectors.npz"
# The model averages token vectors, so the opening of a long text already carries its
# meaning; the cap keeps a huge pasted note from padding a whole batch to its length.
MAX_CHARS = 4000
_BATCH = 64
# Belt and braces: the loader never asks for a download, and these make any library
# underneath refuse one too.
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


class ModelUnavailable(MemsiteError):
    """The semantic extra is missing or its packaged model files cannot be read."""


def available() -> bool:
    """Whether the ``semantic`` extra is installed (cheap: nothing is imported)."""
    try:
        return (
            importlib.util.find_spec("wordllama") is not None
            and importlib.util.find_spec("numpy") is not None
        )
    except (ImportError, ValueError):
        return False


def text_key(text: str) -> str:
    """The cache key of a text: a hash of exactly what is embedded."""
    return hashlib.blake2b(text[:MAX_CHARS].encode("utf-8"), digest_size=16).hexdigest()


class Embedder:
    """The loaded model: turns texts into unit vectors. Get it with ``load()``."""

    def __init__(self, model: object) -> None:
        self._model = model
        self.calls = 0
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A ``(len(texts), DIM)`` float32 matrix of unit vectors (zero for texts without words)."""
        import numpy as np

        self.calls += 1
        self.embedded += len(texts)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        clipped = [t[:MAX_CHARS] for t in texts]
        # Batches pad to their longest text: embedding in length order keeps padding small.
        order = sorted(range(len(clipped)), key=lambda i: len(clipped[i]))
        pooled = self._model.embed(  # type: ignore[attr-defined]
            [clipped[i] for i in order], norm=False, batch_size=_BATCH
        )
        out = np.empty_like(pooled)
        out[order] = pooled
        return normalise_rows(out)

    def embed_one(self, text: str) -> np.ndarray:
        """The unit vector of one text (a query)."""
        return self.embed([text])[0]


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero (no division warnings)."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


@functools.cache
def load() -> Embedder:
    """The model, loaded once per process from the files inside the installed wheel.

    Never downloads: downloads are disabled, the hub libraries are told to stay offline, and
    a missing file raises ``ModelUnavailable`` instead.
    """
    if not available():
        raise ModelUnavailable(
            "semantic ranking needs the optional model: pip install 'memsite[semantic]', "
            "or pass --lexical"
        )
    os.environ.update(_OFFLINE_ENV)
    root_logger = logging.getLogger()
    handlers, level = list(root_logger.handlers), root_logger.level
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError as err:
        raise ModelUnavailable(
            f"the semantic extra is installed but does not import ({err}); "
            "reinstall it with pip install --force-reinstall 'memsite[semantic]', or pass --lexical"
        ) from err
    finally:
        # wordllama calls logging.basicConfig() at import; a library must not configure
        # the host program's logging, so undo it.
        root_logger.handlers[:] = handlers
        root_logger.setLevel(level)
    package = Path(wordllama.__file__).parent
    # WordLlama.load() looks for the packaged tokenizer in `<package>/tokenizer/` (singular)
    # and then in `<cache_dir>/tokenizers/`; the wheel ships it in `<package>/tokenizers/`.
    # Using the package folder as the cache folder finds both files with no copy and no write.
    needed = [
        package / "weights" / f"{CONFIG}_{DIM}.safetensors",
        package / "tokenizers" / f"{CONFIG}_tokenizer_config.json",
    ]
    for path in needed:
        if not path.is_file():
            raise ModelUnavailable(
                f"{path}: model file missing from the wordllama package; reinstall it with "
                "pip install --force-reinstall 'memsite[semantic]', or pass --lexical"
            )
    try:
        model = WordLlama.load(config=CONFIG, dim=DIM, cache_dir=package, disable_download=True)
    except (OSError, ValueError) as err:
        raise ModelUnavailable(
            f"{package}: could not load the embedding model ({err}); pass --lexical"
        ) from err
    return Embedder(model)


@dataclass(frozen=True, eq=False)
class Vectors:
    """Unit vectors keyed by ``text_key``: row ``rows[key]`` of ``matrix``."""

    keys: tuple[str, ...]
    matrix: np.ndarray
    rows: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", {key: i for i, key in enumerate(self.keys)})

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, key: str) -> np.ndarray | None:
        """The vector stored for ``key``, or None."""
        row = self.rows.get(key)
        return None if row is None else self.matrix[row]

    def take(self, keys: Sequence[str]) -> np.ndarray:
        """Vectors for ``keys`` in order; a zero vector for a key that has none."""
        import numpy as np

        out = np.zeros((len(keys), DIM), dtype=np.float32)
        for i, key in enumerate(keys):
            row = self.rows.get(key)
            if row is not None:
                out[i] = self.matrix[row]
        return out


def empty() -> Vectors:
    """No vectors."""
    import numpy as np

    return Vectors((), np.zeros((0, DIM), dtype=np.float32))


def read_cache(cache_dir: Path) -> Vectors:
    """The cached vectors, or none when the file is missing, unreadable or from another model."""
    import numpy as np

    path = cache_dir / CACHE_FILE
    try:
        # Open the file ourselves: np.load(path) leaks its handle when the zip is damaged.
        with path.open("rb") as handle:
            data = np.load(handle, allow_pickle=False)
            if not isinstance(data, np.lib.npyio.NpzFile):
                return empty()
            with data:
                model = str(data["model"])
                keys = tuple(str(k) for k in data["keys"])
                matrix = np.asarray(data["matrix"], dtype=np.float32)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, EOFError):
        return empty()
    if model != MODEL or matrix.shape != (len(keys), DIM):
        return empty()
    return Vectors(keys, matrix)


def write_cache(cache_dir: Path, vectors: Vectors) -> None:
    """Store ``vectors`` atomically: a reader sees the old file or the new one, never half."""
    import numpy as np

    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".vectors-", suffix=".npz", dir=cache_dir)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(
                handle,
                model=np.array(MODEL),
                keys=np.array(vectors.keys, dtype="U32"),
                matrix=vectors.matrix,
            )
        os.replace(tmp, cache_dir / CACHE_FILE)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@dataclass(frozen=True, eq=False)
class Sync:
    """What ``sync`` did: the vectors for exactly the texts asked for, and how many it embedded."""

    vectors: Vectors
    embedded: int


def sync(cache_dir: Path, texts: Iterable[str], embedder: Embedder | None = None) -> Sync:
    """Vectors for ``texts``, embedding only those not cached; the cache then holds just these.

    The embedder is loaded only when something needs embedding, so an up-to-date cache
    costs a file read, not a model load.
    """
    import numpy as np

    wanted: dict[str, str] = {}
    for text in texts:
        wanted.setdefault(text_key(text), text)
    cached = read_cache(cache_dir)
    missing = [key for key in wanted if key not in cached.rows]
    if not missing and len(cached) == len(wanted):
        return Sync(cached, 0)
    fresh = (embedder or load()).embed([wanted[k] for k in missing]) if missing else None
    keys = tuple(wanted)
    matrix = np.empty((len(keys), DIM), dtype=np.float32)
    new_rows = {key: i for i, key in enumerate(missing)}
    for i, key in enumerate(keys):
        row = cached.rows.get(key)
        matrix[i] = cached.matrix[row] if row is not None else fresh[new_rows[key]]  # type: ignore[index]
    vectors = Vectors(keys, matrix)
    write_cache(cache_dir, vectors)
    return Sync(vectors, len(missing))


def cosine(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine similarity of one unit vector with each unit row of ``matrix``."""
    return matrix @ query


def minmax(scores: np.ndarray) -> np.ndarray:
    """Scores rescaled to 0..1 (all equal → all 0, so a flat signal adds nothing)."""
    import numpy as np

    if scores.size == 0:
        return scores.astype(np.float32)
    low, high = float(scores.min()), float(scores.max())
    if high <= low:
        return np.zeros_like(scores, dtype=np.float32)
    return ((scores - low) / (high - low)).astype(np.float32)
