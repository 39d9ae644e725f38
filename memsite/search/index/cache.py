"""The Whoosh index of chunks asked: each question with a fresh searcher.

:class:`SearchIndex` is a :class:`.freshness.FreshIndex` (the index kept fresh beside the
tree) that hands each question to the other modules of this package (the only ones that
import Whoosh) with a fresh searcher: :mod:`.search` (query-time search), :mod:`.related`
(related entries) and :mod:`.documents` (a record's sections, as stored).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from ...errors import MemsiteError
from .. import meaning
from ..chunks import CHUNK_VERSION, Chunk
from ..query import Filters
from ..query import Query as Parsed
from ..ranking import Found, Hit
from . import related, search
from .damage import is_damage, quiet_leaks
from .documents import records_chunks
from .freshness import FreshIndex

_Answer = TypeVar("_Answer")


class SearchIndex(FreshIndex):
    """The chunk index of one tree, asked. ``chunker`` is replaceable for benchmarks."""

    # -- asking -----------------------------------------------------------------------

    def close(self) -> None:
        """Release the open searcher (its files); the next query opens a new one."""
        if self._searcher is not None:
            self._searcher.close()
        self._searcher, self._searcher_stamp = None, -1

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fresh_searcher(self):  # type: ignore[no-untyped-def]
        self.refresh()
        try:
            stamp = self.state_path.stat().st_mtime_ns
        except OSError:
            stamp = -1
        if self._searcher is None or stamp != self._searcher_stamp or stamp == -1:
            self.close()
            assert self._ix is not None
            self._searcher, self._searcher_stamp = self._ix.searcher(), stamp
        return self._searcher

    def _with_index(self, ask: Callable[..., _Answer]) -> _Answer:
        """Run ``ask`` with a searcher on a fresh index; a damaged index is rebuilt once.

        A failure is first retried on a newly opened index: another process may have just
        swapped in a rebuilt one under an open searcher. Only what reading damaged files
        raises counts (:func:`.damage.is_damage`); any other error is the question's or
        memsite's and is raised as it is, with the index left alone.
        """
        failure = ""
        with quiet_leaks():
            for _ in range(2):
                try:
                    return ask(self._fresh_searcher())
                except MemsiteError:
                    raise
                except Exception as err:  # a damaged segment shows up only when read
                    if not is_damage(err):
                        raise
                    failure = type(err).__name__
                self.close()
                self._ix = None
                gc.collect()
        with self._locked():
            self.notify(
                f"search index {self.folder} is unreadable ({failure}); "
                "rebuilding it from the markdown"
            )
            self._build(time.perf_counter())
        return ask(self._fresh_searcher())

    def search(
        self,
        query: Parsed,
        limit: int = 10,
        filters: Filters | None = None,
        lexical: bool = False,
    ) -> Found:
        """The best ``limit`` spans for a parsed query (hybrid when the semantic extra is
        installed, unless ``lexical``): what the index found, which
        ``payloads.hits.build_hits`` makes hits of."""
        filters = query.filters.merge(filters or Filters())
        vectors = None if lexical else self._vectors
        return self._with_index(
            lambda searcher: search.search(searcher, query, filters, limit, vectors)
        )

    def records(self, wanted: dict[str, str]) -> dict[str, list[Chunk]]:
        """The sections of each record asked (``{record: path}``), as the index stores them."""
        return self._with_index(lambda searcher: records_chunks(searcher, wanted))

    def related(
        self,
        entry_id: str,
        limit: int = 5,
        kinds: Sequence[str] = ("decision", "learning", "note"),
        lexical: bool = False,
    ) -> list[Hit]:
        """The records most like one entry (Whoosh more-like-this over record documents,
        fused with the records' meaning when the semantic extra is installed)."""
        vectors = None if lexical else self._vectors
        return self._with_index(
            lambda searcher: related.related(searcher, self.root, entry_id, limit, kinds, vectors)
        )

    def related_many(
        self,
        ids: Sequence[str],
        limit: int = 5,
        kinds: Sequence[str] = ("decision", "learning", "note"),
        lexical: bool = False,
    ) -> dict[str, list[Hit]]:
        """``{id: related(id)}`` for many entries at once, the same hits in the same order;
        ids the index does not know are left out.

        A site build asks this for every decision and learning (a thousand in a year of
        memory): the index is checked for freshness once, one searcher and one kind filter
        serve every entry, and the meaning of all the entries is one product per block.
        """
        vectors = None if lexical else self._vectors
        return self._with_index(
            lambda searcher: related.related_many(searcher, self.root, ids, limit, kinds, vectors)
        )

    # -- the vectors, with the semantic extra -------------------------------------------

    def _vectors(self) -> meaning.Store | None:
        """Section and record vectors in line with the index (issue 6); None without the
        extra. They live beside the index folder, keyed by text: a rebuilt index reuses them."""
        if not meaning.available():
            return None
        # the chunker's version is part of a file's stamp: a new chunker means new chunk ids
        files = {
            path: f"{entry[2]}:{CHUNK_VERSION}"
            for path, entry in self._load_state()["files"].items()
        }
        try:
            return meaning.update(
                self.folder.parent / f"{self.folder.name}.vectors.npz",
                files,
                lambda rel: read[1] if (read := self._read(rel)) is not None else None,
            ).store
        finally:
            self._chunked.clear()
