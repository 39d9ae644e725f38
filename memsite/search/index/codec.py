"""How the index is written: Whoosh's own segment format, with three changes that keep a
question of everyday words fast and a build of several years linear (issue 16, point 4).
Measured in ``docs/benchmarks.md``.

- Posting blocks are pickled with a current protocol, not protocol 2, and not compressed.
  Protocol 2 has no opcode for ``bytes``: each posting's positions come back through a call
  to ``_codecs.encode``, so one block of 128 postings read in ~150 us (plus ~30 us of zlib),
  and a question made of everyday words reads a hundred blocks; with protocol 5 a block
  reads in ~20 us. The segment stays Whoosh's ``W3`` format and names the stock codec:
  Whoosh's reader unpickles any protocol, so any Whoosh 2.7 opens the index.
- Writing a segment looks up each posting's field length; for a field that stores none
  (``uid``, ``path``, ``tags``, ...) Whoosh asked the file system again for every posting
  (half a million ``stat`` calls at three years). The answer is now kept.
- A fresh build commits a segment whenever the writer's pool of postings nears ``limitmb``
  (:data:`SEGMENT_SHARE`), so the pool never spills sorted runs to disk to merge them back
  one pickled posting at a time through a heap: that merge was why three years took over 4
  times a year to build.
"""

from __future__ import annotations

import pickle
import zlib

from whoosh.codec.whoosh3 import (
    WHOOSH3_HEADER_MAGIC,
    W3Codec,
    W3PerDocReader,
    W3PostingsWriter,
    W3Segment,
)
from whoosh.util.numeric import length_to_byte

PROTOCOL = 5
# a fresh build starts a new segment once the writer's pool holds this share of ``limitmb``
# (Whoosh spills at all of it): a year of one busy agent is one segment, three years two
SEGMENT_SHARE = 0.8


def writer(ix, **options: object):  # type: ignore[no-untyped-def]
    """``ix.writer(**options)`` writing with :class:`Codec`."""
    return ix.writer(codec=Codec(), **options)


class BuildWriter:
    """The writer of a fresh build: a new segment, none merged, whenever the pool of
    postings nears ``limitmb`` (``add_document``, ``commit`` and ``cancel`` as Whoosh's)."""

    def __init__(self, ix, limitmb: int) -> None:  # type: ignore[no-untyped-def]
        self._ix, self._limitmb = ix, limitmb
        self._writer = writer(ix, limitmb=limitmb)

    def add_document(self, **fields: object) -> None:
        self._writer.add_document(**fields)
        if self._writer.pool.currentsize > SEGMENT_SHARE * self._limitmb * 2**20:
            self._writer.commit(merge=False)
            self._writer = writer(self._ix, limitmb=self._limitmb)

    def commit(self) -> None:
        self._writer.commit(merge=False)

    def cancel(self) -> None:
        self._writer.cancel()


class Codec(W3Codec):
    """Whoosh's ``W3Codec``, writing posting blocks with :data:`PROTOCOL`, uncompressed."""

    def __init__(self, blocklimit: int = 128, compression: int = 0, inlinelimit: int = 1) -> None:
        # no zlib (Whoosh's default is level 3): a block then reads in ~20 us, not ~50, for
        # an index a quarter larger (29 MB at a year of common words; 23 MB before)
        super().__init__(blocklimit, compression, inlinelimit)

    def postings_writer(self, dbfile, byteids=False):  # type: ignore[no-untyped-def]
        return _PostingsWriter(
            dbfile,
            blocklimit=self._blocklimit,
            byteids=byteids,
            compression=self._compression,
            inlinelimit=self._inlinelimit,
        )

    def per_document_reader(self, storage, segment):  # type: ignore[no-untyped-def]
        return _Lengths(storage, segment)

    def new_segment(self, storage, indexname):  # type: ignore[no-untyped-def]
        # reading needs nothing of this class: the segment names the stock codec
        stock = W3Codec(self._blocklimit, self._compression, self._inlinelimit)
        return W3Segment(stock, indexname)


class _Lengths(W3PerDocReader):
    """Whoosh's per-document reader, remembering which fields have no length column."""

    def _cached_reader(self, fieldname, column):  # type: ignore[no-untyped-def]
        if fieldname not in self._readers:
            found = self.has_column(fieldname)
            self._readers[fieldname] = self.column_reader(fieldname, column) if found else None
        return self._readers[fieldname]


class _PostingsWriter(W3PostingsWriter):
    def _write_block(self, last=False):  # type: ignore[no-untyped-def]
        """``W3PostingsWriter._write_block`` of whoosh-reloaded 2.7.5, but for the protocol."""
        if not self._blockcount:
            self._postfile.write(WHOOSH3_HEADER_MAGIC)
        self._terminfo.add_block(self)
        data = (self._mini_ids(), self._mini_weights(), self._mini_values())
        databytes = pickle.dumps(data, PROTOCOL)
        comp = self._compression
        if comp:
            databytes = zlib.compress(databytes, comp)
        ids = self._ids
        # what a reader checks before it decides to read the block: postings, last id,
        # highest weight, compression, shortest and longest field length
        info = (
            len(ids),
            ids[-1],
            self._maxweight,
            comp,
            length_to_byte(self._minlength),
            length_to_byte(self._maxlength),
        )
        infobytes = pickle.dumps(info, 2)
        blocklength = len(infobytes) + len(databytes)
        self._postfile.write_int(-blocklength if last else blocklength)
        self._postfile.write(infobytes)
        self._postfile.write(databytes)
        self._blockcount += 1
        self._new_block()
