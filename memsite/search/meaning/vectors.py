"""The vector cache: the vector of every indexed section and record (issue 6).

Vectors are cached in the index cache folder, keyed by a hash of the embedded text: an
append embeds only the new chunks, and a missing, corrupt or foreign cache file is simply
rebuilt. The cache is disposable, like the Whoosh index beside it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .model import CONFIG, DIM, MAX_CHARS, Embedder, document, load, normalise_rows, text_key

if TYPE_CHECKING:
    import numpy as np

    from ..chunks import Chunk

# Stamped into the vector cache: another model, or another way of building the embedded
# text (``document``: bump the number when it changes), makes the cache foreign and rebuilt.
MODEL = f"wordllama/{CONFIG}/{DIM};document=1"


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
    record_index: np.ndarray = field(init=False, repr=False)  # section row → its record index

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
            "record_index": np.array([where[r] for r in self.records], dtype=np.int64),
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
