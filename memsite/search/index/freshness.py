"""The Whoosh index of chunks: a rebuildable cache beside the tree, kept fresh.

Layout: ``<cache>/index/<tree>-<hash>/`` holds the Whoosh files and ``state.json`` (schema
version, Whoosh version, the tree's path and, per file, its mtime, size and content hash).
Every search first compares the tree with ``state.json``; files whose content changed are
re-chunked, deleted files leave the index. Updates run under an exclusive ``flock`` on
``<cache>/index/<tree>-<hash>.lock`` (a killed holder frees it at once) and Whoosh's own
writer lock is taken with a timeout, never ``AsyncWriter``. A missing, corrupt or
version-mismatched index is rebuilt from the markdown, with a one-line notice.

:class:`FreshIndex` does this with :mod:`.state` (the tree's files and ``state.json``) and
:mod:`.documents` (the schema and what a chunk becomes in it); :mod:`.codec` and
:mod:`.postings` are how the postings are written and read. :mod:`.cache`'s ``SearchIndex``
asks it questions.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import gc
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import whoosh
import whoosh.index

from ...store import reading, tree
from ...store.records import renamed_ids
from .. import meaning
from ..chunks import Chunk, chunk_file
from . import codec
from .damage import quiet_leaks
from .documents import SCHEMA, file_documents, replace_documents
from .place import content_hash, default_cache_dir, index_key
from .state import (
    IndexBroken,
    Refresh,
    Stamp,
    as_record,
    changed_files,
    moved_records,
    new_state,
    read_state,
    renamed_records,
    stat_tree,
    write_state,
)

WRITE_TIMEOUT = 60.0  # seconds to wait for Whoosh's writer lock
LIMITMB = 256  # writer memory before it spills a run to disk (default 128)

Chunker = Callable[..., list[Chunk]]
Progress = Callable[[int, int], None]  # (files read, files to read) during a build or update


class FreshIndex:
    """The chunk index of one tree. ``chunker`` is replaceable for benchmarks."""

    def __init__(
        self,
        root: Path,
        cache_dir: Path | None = None,
        *,
        notify: Callable[[str], None] | None = None,
        chunker: Chunker = chunk_file,
        name: str = "index",
        progress: Progress | None = None,
    ) -> None:
        self.root = Path(root)
        self.cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(self.root)
        key = index_key(self.root)
        self.folder = self.cache / name / key
        self.lock_path = self.cache / name / f"{key}.lock"
        self.state_path = self.folder / "state.json"
        self.walk_path = self.cache / name / f"{key}.records.json"  # the records' walk
        self.notify = notify or (lambda message: None)
        self.progress = progress or (lambda done, total: None)
        self.chunker = chunker
        self._ix: whoosh.index.Index | None = None
        self._searcher = None  # reused between queries while state.json is unchanged
        self._searcher_stamp = -1
        self._state_cache: tuple[Stamp, dict] | None = None
        # Files chunked by the last index update, kept until the vectors have been brought up
        # to date from them (with the semantic extra): a fresh build then chunks each file
        # once, not once for Whoosh and again for the embeddings.
        self._chunked: dict[str, tuple[Stamp, tuple[bytes, list[Chunk]]]] = {}
        self._keep_chunked = meaning.available()
        self._skipped: set[str] = set()  # files said to be skipped, once each
        self._renamed: dict[str, str] = {}  # records whose id is not their name (issue 34)

    # -- keeping it fresh -------------------------------------------------------------

    def refresh(self, rebuild: bool = False) -> Refresh:
        """Bring the index up to date with the tree (or rebuild it from scratch)."""
        tree.check_root(self.root)
        started = time.perf_counter()
        if not rebuild:
            with contextlib.suppress(IndexBroken):
                state = self._load_state()
                stats = stat_tree(self.root, self.walk_path)
                if not changed_files(state, stats):
                    self._ix = self._ix or self._open()
                    return Refresh(0, 0, 0, False, time.perf_counter() - started)
        # no index was ever built for this tree here: say so, not that one is missing
        first = "building the search index (first use)" if not self.lock_path.exists() else ""
        with self._locked():
            try:
                if rebuild:
                    raise IndexBroken("rebuild requested")
                state = self._load_state()
                ix = self._open()
            except IndexBroken as why:
                if not rebuild:
                    self.notify(first or f"search index {why}; rebuilding it from the markdown")
                return self._build(started)
            return self._update(ix, state, started)

    def _read(self, rel: str) -> tuple[bytes, list[Chunk]] | None:
        path = self.root / rel
        try:
            stat = path.stat()
            key = (stat.st_mtime_ns, stat.st_size, stat.st_ino, self._renamed.get(rel))
            kept = self._chunked.get(rel)
            if kept is not None and kept[0] == key:
                return kept[1]
            raw = reading.read_regular(path)  # never waits on a FIFO
            day = dt.date.fromtimestamp(stat.st_mtime)
        except (OSError, reading.NotAFile):
            return None
        read = self._chunk(rel, raw, day)
        if self._keep_chunked:
            self._chunked[rel] = (key, read)
        return read

    def _chunk(self, rel: str, raw: bytes, day: dt.date) -> tuple[bytes, list[Chunk]]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return self._skip(rel, raw, "not UTF-8; re-save it as UTF-8")
        if "\x00" in text:
            return self._skip(rel, raw, "holds NUL bytes (binary?)")
        return raw, as_record(self.chunker(rel, text, fallback_date=day), self._renamed.get(rel))

    def _skip(self, rel: str, raw: bytes, why: str) -> tuple[bytes, list[Chunk]]:
        """Nothing to search in ``rel``: said once, not silently (issue 25.8; check says
        where)."""
        if rel not in self._skipped:
            self._skipped.add(rel)
            self.notify(f"skipped {rel}: {why}")
        return raw, []

    def _build(self, started: float) -> Refresh:
        self._ix = None
        stats = stat_tree(self.root, self.walk_path)
        self._renamed = renamed_ids(self.root)
        checked = time.time_ns()
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        self._write_gitignore()
        # builds run under the tree's lock: folders of earlier builds are from killed ones
        for kind in (".build", ".old"):
            for stale in self.folder.parent.glob(f"{kind}-{self.folder.name}-*"):
                shutil.rmtree(stale, ignore_errors=True)
        fresh = Path(tempfile.mkdtemp(prefix=f".build-{self.folder.name}-", dir=self.folder.parent))
        try:
            ix = whoosh.index.create_in(str(fresh), SCHEMA)
            files, count = {}, 0
            writer = codec.BuildWriter(ix, LIMITMB)
            try:
                for done, (rel, (mtime, size)) in enumerate(stats.items(), 1):
                    self.progress(done, len(stats))
                    read = self._read(rel)
                    if read is None:
                        continue
                    raw, chunks = read
                    files[rel] = [mtime, size, content_hash(raw)]
                    for document in file_documents(chunks):
                        writer.add_document(**document)
                    count += len(chunks)
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            state = new_state(self.root, files, checked, self._renamed)
            write_state(fresh / "state.json", state)
            trash = self.folder.parent / f".old-{self.folder.name}-{os.getpid()}-{time.time_ns()}"
            with contextlib.suppress(FileNotFoundError):
                os.rename(self.folder, trash)
            os.rename(fresh, self.folder)
            shutil.rmtree(trash, ignore_errors=True)
        finally:
            shutil.rmtree(fresh, ignore_errors=True)
        self._ix = self._open()
        return Refresh(len(files), 0, count, True, time.perf_counter() - started)

    def _update(self, ix: whoosh.index.Index, state: dict, started: float) -> Refresh:
        checked = time.time_ns()
        stats = stat_tree(self.root, self.walk_path)
        files = dict(state["files"])
        changed = changed_files(state, stats)
        self._renamed = renamed_records(self.root, state, changed)
        moved = moved_records(state, self._renamed) & stats.keys()  # chunked under another id
        changed += sorted(moved - set(changed))
        reads = {}
        for done, rel in enumerate(changed, 1):
            self.progress(done, len(changed))
            read = self._read(rel) if rel in stats else None
            same = read is not None and rel in files and files[rel][2] == content_hash(read[0])
            if same and rel not in moved:
                files[rel] = [*stats[rel], files[rel][2]]  # touched, not changed
                continue
            reads[rel] = read
        count = removed = 0
        if reads:
            writer = codec.writer(ix, timeout=WRITE_TIMEOUT, delay=0.05, limitmb=LIMITMB)
            try:
                with writer.searcher() as searcher:
                    for rel, read in reads.items():
                        if read is None:
                            writer.delete_by_term("path", rel)
                            files.pop(rel, None)
                            removed += 1
                            continue
                        raw, chunks = read
                        files[rel] = [*stats[rel], content_hash(raw)]
                        count += replace_documents(writer, searcher, rel, file_documents(chunks))
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
        write_state(self.state_path, new_state(self.root, files, checked, self._renamed))
        self._ix = ix
        return Refresh(len(reads) - removed, removed, count, False, time.perf_counter() - started)

    def _load_state(self) -> dict:
        self._state_cache = read_state(self.state_path, self.folder, self.root, self._state_cache)
        renamed = self._state_cache[1].get("renamed")
        self._renamed = dict(renamed) if isinstance(renamed, dict) else {}
        return self._state_cache[1]

    def _open(self) -> whoosh.index.Index:
        with quiet_leaks():
            try:
                ix = whoosh.index.open_dir(str(self.folder))
            except Exception as err:  # Whoosh raises many kinds on damaged files
                failure = type(err).__name__
            else:
                if set(ix.schema.names()) == set(SCHEMA.names()):
                    return ix
                failure = "another schema"
            gc.collect()
        raise IndexBroken(f"{self.folder} is unreadable ({failure})")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _write_gitignore(self) -> None:
        ignore = self.cache / ".gitignore"
        if not ignore.exists():
            with contextlib.suppress(OSError):
                ignore.write_text("# memsite's rebuildable cache\n*\n", "utf-8")
