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
import os
import re
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import MemsiteError
from .ranking import Signal

if TYPE_CHECKING:
    import numpy as np

    from .chunks import Chunk

CONFIG = "l2_supercat"
DIM = 256
# Stamped into the vector cache: another model, or another way of building the embedded
# text (``document``: bump the number when it changes), makes the cache foreign and rebuilt.
MODEL = f"wordllama/{CONFIG}/{DIM};document=1"
# The model averages token vectors, so the opening of a long text already carries its
# meaning; the cap keeps a huge pasted note from padding a whole batch to its length.
MAX_CHARS = 4000
_TENSOR = "embedding.weight"
# Meaning alone brings a section or record into the results only above this cosine
# similarity; below it, it only re-ranks what the words found. See docs/search.md.
FLOOR = 0.3
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
                out[row] = self._table[np.clip(ids, 0, last)].mean(axis=0)
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

    The embedding table and tokenizer are read straight from the wordllama package with
    ``safetensors`` and ``tokenizers``. Importing wordllama itself would add 0.3 s to every
    command (it imports pydantic, requests and toml, and configures the root logger), and
    its ``WordLlama.load()`` looks for the packaged tokenizer in the wrong folder and then
    tries to download it. Nothing here can download: no network code is loaded, the hub
    libraries are told to stay offline, and a missing file raises ``ModelUnavailable``.
    """
    if not available():
        raise ModelUnavailable(
            "semantic ranking needs the optional model: pip install 'memsite[semantic]', "
            "or pass --lexical"
        )
    os.environ.update(_OFFLINE_ENV)
    reinstall = "reinstall it with pip install --force-reinstall 'memsite[semantic]'"
    try:
        import numpy as np
        from safetensors.numpy import load_file
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
        table = np.ascontiguousarray(load_file(str(weights))[_TENSOR], dtype=np.float32)
        tokenizer = Tokenizer.from_file(str(vocabulary))
    except Exception as err:  # safetensors and tokenizers raise their own error types
        raise ModelUnavailable(
            f"{package}: the embedding model does not load ({err}); {reinstall}, or pass --lexical"
        ) from err
    if table.shape[1:] != (DIM,):
        raise ModelUnavailable(f"{weights}: expected {DIM} dimensions, found {table.shape}")
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return Embedder(tokenizer, table)


def weight_file(package: Path) -> Path:
    """The packaged embedding table."""
    return package / "weights" / f"{CONFIG}_{DIM}.safetensors"


def tokenizer_file(package: Path) -> Path:
    """The packaged tokenizer."""
    return package / "tokenizers" / f"{CONFIG}_tokenizer_config.json"


@dataclass(frozen=True, eq=False)
class Store:
    """The vector of every indexed section, and of every record (its sections' weighted mean).

    Row ``i`` is section ``uids[i]`` of record ``records[i]`` in file ``paths[i]``; ``keys[i]``
    hashes the text its vector was made from. ``files`` maps each file to the content hash
    its rows were made from, the way the index's ``state.json`` does. Most records are one
    section, whose vector is the record's: only records of several sections get a row of
    ``record_matrix`` (``multi`` lists which).
    """

    files: dict[str, str]
    uids: tuple[str, ...]
    records: tuple[str, ...]
    paths: tuple[str, ...]
    keys: tuple[str, ...]
    sizes: np.ndarray  # characters embedded per section: a record's vector weights by them
    matrix: np.ndarray
    rows: dict[str, int] = field(init=False, repr=False)
    record_ids: tuple[str, ...] = field(init=False, repr=False)
    record_paths: tuple[str, ...] = field(init=False, repr=False)
    record_rows: dict[str, int] = field(init=False, repr=False)
    single: np.ndarray = field(init=False, repr=False)  # record index → its one section row
    multi: np.ndarray = field(init=False, repr=False)  # record indices with several sections
    record_matrix: np.ndarray = field(init=False, repr=False)  # one row per ``multi`` record

    def __post_init__(self) -> None:
        import numpy as np

        first: dict[str, int] = {}
        count: dict[str, int] = {}
        for row, record in enumerate(self.records):
            first.setdefault(record, row)
            count[record] = count.get(record, 0) + 1
        record_ids = tuple(first)
        where = {record: i for i, record in enumerate(record_ids)}
        multi = [where[r] for r in record_ids if count[r] > 1]
        slot = {index: i for i, index in enumerate(multi)}
        sums = np.zeros((len(multi), DIM), dtype=np.float32)
        in_multi = [i for i, r in enumerate(self.records) if count[r] > 1]
        # A static model's vector of a text is the mean of its token vectors, so the size-
        # weighted mean of a record's section vectors stands in for embedding the record.
        np.add.at(
            sums,
            [slot[where[self.records[i]]] for i in in_multi],
            self.matrix[in_multi] * self.sizes[in_multi, None],
        )
        values = {
            "rows": {uid: i for i, uid in enumerate(self.uids)},
            "record_ids": record_ids,
            "record_paths": tuple(self.paths[first[r]] for r in record_ids),
            "record_rows": where,
            "single": np.array([first[r] for r in record_ids], dtype=np.int64),
            "multi": np.array(multi, dtype=np.int64),
            "record_matrix": normalise_rows(sums),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return len(self.uids)

    def vector(self, uid: str) -> np.ndarray | None:
        """The vector of one section, or None when it is not stored."""
        row = self.rows.get(uid)
        return None if row is None else self.matrix[row]

    def record_vector(self, record: str) -> np.ndarray | None:
        """The vector of one record, or None when it is not stored."""
        index = self.record_rows.get(record)
        if index is None:
            return None
        hits = (self.multi == index).nonzero()[0]
        return self.record_matrix[hits[0]] if hits.size else self.matrix[self.single[index]]


def empty() -> Store:
    """A store with no vectors."""
    import numpy as np

    return Store({}, (), (), (), (), np.zeros(0, np.float32), np.zeros((0, DIM), np.float32))


_TEXTS = ("uids", "records", "paths", "keys", "file_paths", "file_hashes")
_READ: dict[Path, tuple[tuple[int, int, str], Store]] = {}


def read_store(path: Path) -> Store:
    """The stored vectors, or an empty store when the file is missing, damaged or foreign.

    A long-lived process (an agent's ``Memory``) keeps the last store read and reads the
    file again only when it changed.
    """
    try:
        info = path.stat()
    except OSError:
        return empty()
    stamp = (info.st_mtime_ns, info.st_size, MODEL)
    cached = _READ.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    store = _read_store(path)
    _READ[path] = (stamp, store)
    return store


def _read_store(path: Path) -> Store:
    import numpy as np

    try:
        # Open the file ourselves: np.load(path) leaks its handle when the zip is damaged.
        with path.open("rb") as handle:
            data = np.load(handle, allow_pickle=False)
            if not isinstance(data, np.lib.npyio.NpzFile):
                return empty()
            with data:
                if bytes(data["model"]).decode() != MODEL:
                    return empty()
                texts = {name: _split(data[name]) for name in _TEXTS}
                sizes = data["sizes"].astype(np.float32)
                matrix = data["matrix"].astype(np.float32)
    except (OSError, KeyError, ValueError, UnicodeDecodeError, zipfile.BadZipFile, EOFError):
        return empty()
    n = len(texts["uids"])
    if (
        matrix.shape != (n, DIM)
        or len(sizes) != n
        or any(len(texts[name]) != n for name in ("records", "paths", "keys"))
    ):
        return empty()
    if len(texts["file_paths"]) != len(texts["file_hashes"]):
        return empty()
    files = dict(zip(texts["file_paths"], texts["file_hashes"], strict=True))
    columns = (tuple(texts[name]) for name in ("uids", "records", "paths", "keys"))
    return Store(files, *columns, sizes, matrix)


def _joined(items: Sequence[str]) -> np.ndarray:
    """Strings as one NUL-separated UTF-8 byte array: compact, and fast to load."""
    import numpy as np

    return np.frombuffer("\0".join(items).encode("utf-8"), dtype=np.uint8)


def _split(array: np.ndarray) -> list[str]:
    text = array.tobytes().decode("utf-8")
    return text.split("\0") if text else []


def write_store(path: Path, store: Store) -> None:
    """Write ``store`` atomically: a reader sees the old file or the new one, never half."""
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".vectors-", suffix=".npz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(
                handle,
                model=np.frombuffer(MODEL.encode(), dtype=np.uint8),
                uids=_joined(store.uids),
                records=_joined(store.records),
                paths=_joined(store.paths),
                keys=_joined(store.keys),
                file_paths=_joined(list(store.files)),
                file_hashes=_joined(list(store.files.values())),
                sizes=store.sizes.astype(np.int32),
                # half precision on disk: cosines move by under 0.001, the file halves
                matrix=store.matrix.astype(np.float16),
            )
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        info = path.stat()
        _READ[path] = ((info.st_mtime_ns, info.st_size, MODEL), store)


@dataclass(frozen=True, eq=False)
class Update:
    """What ``update`` did: the store now in use, and how many sections it had to embed."""

    store: Store
    embedded: int
    files: int  # files whose sections were re-read


def update(
    path: Path,
    files: Mapping[str, str],
    read: Callable[[str], Sequence[Chunk] | None],
    embedder: Embedder | None = None,
) -> Update:
    """Bring the vector store at ``path`` in line with the indexed ``files`` (path → hash).

    Files whose hash changed are re-read with ``read`` (their chunks, or None when gone);
    a section whose text was embedded before, in any file, reuses its vector, so an append
    embeds only the new entry. The model loads only when something needs embedding.
    """
    import numpy as np

    store = read_store(path)
    changed = [p for p, digest in files.items() if store.files.get(p) != digest]
    gone = [p for p in store.files if p not in files]
    if not changed and not gone:
        return Update(store, 0, 0)
    stale = set(changed) | set(gone)
    known = {key: i for i, key in enumerate(store.keys)}
    kept = [i for i, p in enumerate(store.paths) if p not in stale]
    rows = [
        (store.uids[i], store.records[i], store.paths[i], store.keys[i], int(store.sizes[i]))
        for i in kept
    ]
    vectors = [store.matrix[kept]]
    new_rows, texts, sources = [], [], []
    for rel in changed:
        for chunk in read(rel) or ():
            text = document(chunk)[:MAX_CHARS]
            key = text_key(text)
            new_rows.append((chunk.id, chunk.record, rel, key, len(text)))
            sources.append(known.get(key, -1 - len(texts)))
            if key not in known:
                known[key] = -1 - len(texts)
                texts.append(text)
    fresh = (embedder or load()).embed(texts) if texts else np.zeros((0, DIM), np.float32)
    added = np.array(
        [store.matrix[s] if s >= 0 else fresh[-1 - s] for s in sources], dtype=np.float32
    ).reshape(len(sources), DIM)
    vectors.append(added)
    kept_files = {p: d for p, d in store.files.items() if p not in stale}
    kept_files.update({p: files[p] for p in changed})
    every = rows + new_rows
    result = Store(
        kept_files,
        tuple(r[0] for r in every),
        tuple(r[1] for r in every),
        tuple(r[2] for r in every),
        tuple(r[3] for r in every),
        np.array([r[4] for r in every], dtype=np.float32),
        np.concatenate(vectors),
    )
    # a cache that cannot be written (read-only disk) costs re-embedding next time, no more
    with contextlib.suppress(OSError):
        write_store(path, result)
    return Update(result, len(texts), len(changed))


class Meaning:
    """How close one query is to every stored section and record (cosine similarity).

    ``sections`` and ``records`` are the query's cosines when already computed (by
    :func:`meanings`, for many queries at once); otherwise they are computed here.
    """

    def __init__(
        self,
        store: Store,
        query: np.ndarray,
        sections: np.ndarray | None = None,
        records: np.ndarray | None = None,
    ) -> None:
        self.store = store
        self.sections = _dot(store.matrix, query) if sections is None else sections
        self.record_scores = self.sections[store.single]
        self.record_scores[store.multi] = (
            _dot(store.record_matrix, query) if records is None else records
        )

    def best_sections(self, count: int, floor: float | None = None) -> list[tuple[str, str]]:
        """``(path, uid)`` of up to ``count`` sections closest to the query, best first,
        leaving out those less similar than ``floor`` (default :data:`FLOOR`)."""
        floor = FLOOR if floor is None else floor
        return [
            (self.store.paths[i], self.store.uids[i])
            for i in _top(self.sections, count)
            if self.sections[i] >= floor
        ]

    def best_records(self, count: int, floor: float | None = None) -> list[tuple[str, str]]:
        """``(path, record)`` of up to ``count`` records closest to the query, best first,
        leaving out those less similar than ``floor`` (default :data:`FLOOR`)."""
        floor = FLOOR if floor is None else floor
        return [
            (self.store.record_paths[i], self.store.record_ids[i])
            for i in _top(self.record_scores, count)
            if self.record_scores[i] >= floor
        ]

    def signal(self, candidates: Iterable[Chunk], weight: float = 1.0) -> Signal:
        """The semantic ranking signal over ``candidates``: cosines min-max scaled to 0..1
        among the candidates, per section and per record (issue 6, ``docs/search.md``)."""
        uids = list(dict.fromkeys(c.id for c in candidates if c.id in self.store.rows))
        section = minmax(self.sections[[self.store.rows[u] for u in uids]])
        records = [self.store.records[self.store.rows[u]] for u in uids]
        return Signal(
            "semantic",
            dict(zip(uids, section.tolist(), strict=True)),
            self.scaled_records(records),
            weight,
        )

    def scaled_records(self, records: Iterable[str]) -> dict[str, float]:
        """Cosines of ``records`` min-max scaled to 0..1 among them (unknown ones left out)."""
        known = [r for r in dict.fromkeys(records) if r in self.store.record_rows]
        scaled = minmax(self.record_scores[[self.store.record_rows[r] for r in known]])
        return dict(zip(known, scaled.tolist(), strict=True))


BLOCK = 256  # queries per product in ``meanings``: 20,000 sections x 256 is 20 MB


def meanings(store: Store, queries: np.ndarray) -> list[Meaning]:
    """``Meaning(store, q)`` for each row ``q`` of ``queries``, with one product per block of
    queries instead of one per query. The cosines are bit for bit those of ``Meaning``: the
    same einsum reduction, batched (a BLAS product would differ in the last bits and could
    reorder near-ties)."""
    import numpy as np

    found: list[Meaning] = []
    for start in range(0, len(queries), BLOCK):
        block = queries[start : start + BLOCK]
        sections = np.einsum("ij,kj->ki", store.matrix, block)
        records = np.einsum("ij,kj->ki", store.record_matrix, block)
        found += [Meaning(store, query, sections[i], records[i]) for i, query in enumerate(block)]
    return found


def record_meanings(store: Store, records: Iterable[str]) -> dict[str, Meaning]:
    """How close each of ``records`` is to every other (``Meaning`` of its vector), for the
    records the store holds, batched by :func:`meanings`."""
    import numpy as np

    vectors = {r: v for r in records if (v := store.record_vector(r)) is not None}
    if not vectors:
        return {}
    return dict(zip(vectors, meanings(store, np.stack(list(vectors.values()))), strict=True))


def _dot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` without BLAS: multi-threaded BLAS is 3-6x slower on a small box."""
    import numpy as np

    return np.einsum("ij,j->i", matrix, vector)


def _top(scores: np.ndarray, count: int) -> list[int]:
    import numpy as np

    if count <= 0 or scores.size == 0:
        return []
    count = min(count, scores.size)
    part = np.argpartition(-scores, count - 1)[:count]
    return part[np.argsort(-scores[part], kind="stable")].tolist()


def cosine(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Cosine similarity of one unit vector with each unit row of ``matrix``."""
    return _dot(matrix, query)


def minmax(scores: np.ndarray) -> np.ndarray:
    """Scores rescaled to 0..1 (all equal → all 0, so a flat signal adds nothing)."""
    import numpy as np

    if scores.size == 0:
        return scores.astype(np.float32)
    low, high = float(scores.min()), float(scores.max())
    if high <= low:
        return np.zeros_like(scores, dtype=np.float32)
    return ((scores - low) / (high - low)).astype(np.float32)
