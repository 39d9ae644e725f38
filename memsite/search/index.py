"""The Whoosh index of chunks: a rebuildable cache beside the tree. The only Whoosh importer.

Layout: ``<cache>/index/<tree>-<hash>/`` holds the Whoosh files and ``state.json`` (schema
version, Whoosh version, the tree's path and, per file, its mtime, size and content hash).
Every search first compares the tree with ``state.json``; files whose content changed are
re-chunked, deleted files leave the index. Updates run under an exclusive ``flock`` on
``<cache>/index/<tree>-<hash>.lock`` (a killed holder frees it at once) and Whoosh's own
writer lock is taken with a timeout, never ``AsyncWriter``. A missing, corrupt or
version-mismatched index is rebuilt from the markdown, with a one-line notice.

Each chunk is one *section* document; a record of several chunks also gets one *record*
document holding all its text (a one-chunk record's document plays both roles). A query runs
against both; :mod:`memsite.search.ranking` fuses the scores and merges spans.
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as dt
import fcntl
import gc
import hashlib
import heapq
import itertools
import json
import os
import re
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import whoosh
import whoosh.index
from whoosh import classify, highlight
from whoosh.analysis import StemmingAnalyzer
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema
from whoosh.query import (
    And,
    AndMaybe,
    ConstantScoreQuery,
    Or,
    Phrase,
    Prefix,
    Query,
    Term,
    TermRange,
)

from ..errors import MemsiteError, NotFound
from ..store import tree
from ..store.format import PERSONA
from ..store.markup import slugify
from . import semantic
from .chunks import CHUNK_VERSION, Chunk, chunk_file
from .query import Filters
from .query import Query as Parsed
from .ranking import Hit, Signal, Span, fuse_scores, merge_spans, span_hit

SCHEMA_VERSION = 1
SECTION_POOL = 50  # best sections considered per query
RECORD_POOL = 20  # best records considered per query
WRITE_TIMEOUT = 60.0  # seconds to wait for Whoosh's writer lock
LIMITMB = 256  # writer memory before it spills a run to disk (default 128)
COMPLETE_FROM = 4  # query words this long also match indexed words they begin
COMPLETIONS = 1  # at most this many such longer words per query word and field
COMPLETION_WEIGHT = 0.5
RACY_NS = 2_000_000_000  # files touched this close to the last check are re-hashed

Chunker = Callable[..., list[Chunk]]
_Answer = TypeVar("_Answer")

# Common English words, plus the words questions are made of ("why did we ..."): dropped at
# index and at query time, so a natural-language question ranks by its content words.
_STOP_TEXT = """
a about above after again against all also am an and any are aren as at be because been before
being below between both but by can cannot could couldn did didn do does doesn doing don down
during each either else ever every few for from further get got had hadn has hasn have haven
having he her here hers herself him himself his how if in into is isn it its itself just let
me more most much must my myself no nor not now of off on once only or other ought our ours
ourselves out over own please really same shall she should shouldn so some such than that the
their theirs them themselves then there these they this those through to too under until up
upon us very was wasn we were weren what when where whether which while who whom whose why
will with won would wouldn yet you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
ANALYZER = StemmingAnalyzer(stoplist=STOP_WORDS, minsize=2, cachesize=-1)
# Which fields keep positions is the main index-time cost: only heading and body need them
# (quoted phrases); ``lead`` only counts words.
SCHEMA = Schema(
    uid=ID(stored=True, unique=True),
    roles=KEYWORD(stored=True),
    record=ID(stored=True),
    path=ID(stored=True),
    kind=ID(stored=True),
    tier=ID(stored=True),
    date=ID(stored=True),
    category=ID(),
    tags=KEYWORD(commas=True, lowercase=True),
    heading=TEXT(analyzer=ANALYZER, stored=True, field_boost=2.0),
    body=TEXT(analyzer=ANALYZER),
    lead=TEXT(analyzer=ANALYZER, phrase=False, field_boost=0.5),
    meta=STORED(),
)
FIELDS = ("heading", "body", "lead")


class IndexBroken(MemsiteError):
    """The index cannot be used as it is (missing, corrupt, another version)."""


@dataclass(frozen=True)
class Refresh:
    """What bringing the index up to date did."""

    files: int  # files re-chunked
    removed: int  # files that left the index
    chunks: int  # chunks written
    rebuilt: bool
    seconds: float


def default_cache_dir(root: Path) -> Path:
    """``$MEMSITE_CACHE``, else a ``.memsite`` folder beside the tree."""
    env = os.environ.get("MEMSITE_CACHE")
    return Path(env) if env else root.resolve().parent / ".memsite"


def _hash(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


class SearchIndex:
    """The chunk index of one tree. ``chunker`` is replaceable for benchmarks."""

    def __init__(
        self,
        root: Path,
        cache_dir: Path | None = None,
        *,
        notify: Callable[[str], None] | None = None,
        chunker: Chunker = chunk_file,
        name: str = "index",
    ) -> None:
        self.root = Path(root)
        self.cache = Path(cache_dir) if cache_dir is not None else default_cache_dir(self.root)
        real = self.root.resolve()
        key = f"{slugify(real.name, 40)}-{_hash(str(real).encode())[:8]}"
        self.folder = self.cache / name / key
        self.lock_path = self.cache / name / f"{key}.lock"
        self.state_path = self.folder / "state.json"
        self.notify = notify or (lambda message: None)
        self.chunker = chunker
        self._ix: whoosh.index.Index | None = None
        self._searcher = None  # reused between queries while state.json is unchanged
        self._searcher_stamp = -1
        self._state_cache: tuple[tuple[int, int, int], dict] | None = None
        # Files chunked by the last index update, kept until the vectors have been brought up
        # to date from them (with the semantic extra): a fresh build then chunks each file
        # once, not once for Whoosh and again for the embeddings.
        self._chunked: dict[str, tuple[tuple[int, int, int], tuple[bytes, list[Chunk]]]] = {}
        self._keep_chunked = semantic.available()

    # -- keeping it fresh -------------------------------------------------------------

    def refresh(self, rebuild: bool = False) -> Refresh:
        """Bring the index up to date with the tree (or rebuild it from scratch)."""
        tree.check_root(self.root)
        started = time.perf_counter()
        if not rebuild:
            with contextlib.suppress(IndexBroken):
                state = self._load_state()
                stats = self._stat_tree()
                if not self._changed(state, stats):
                    self._ix = self._ix or self._open()
                    return Refresh(0, 0, 0, False, time.perf_counter() - started)
        with self._locked():
            try:
                if rebuild:
                    raise IndexBroken("rebuild requested")
                state = self._load_state()
                ix = self._open()
            except IndexBroken as why:
                if not rebuild:
                    self.notify(f"search index {why}; rebuilding it from the markdown")
                return self._build(started)
            return self._update(ix, state, started)

    def _changed(self, state: dict, stats: dict[str, tuple[int, int]]) -> list[str]:
        known = state["files"]
        racy = state.get("checked_ns", 0) - RACY_NS
        changed = [p for p in known if p not in stats]
        for path, (mtime, size) in stats.items():
            old = known.get(path)
            if old is None or old[0] != mtime or old[1] != size or mtime >= racy:
                changed.append(path)
        return changed

    def _stat_tree(self) -> dict[str, tuple[int, int]]:
        """``(mtime_ns, size)`` of every markdown file, as ``tree.markdown_files`` finds them.

        This runs before every query, so it walks with ``os.scandir`` and plain strings; a
        tree with symbolic links takes the slower, checked walk of ``tree.markdown_files``.
        """
        stats: dict[str, tuple[int, int]] = {}
        pending = [("", str(self.root))]
        while pending:
            prefix, folder = pending.pop()
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_symlink():
                        return self._stat_checked()
                    rel = prefix + entry.name
                    if entry.is_dir():
                        pending.append((rel + "/", entry.path))
                    elif entry.name.endswith(".md") and rel != PERSONA:
                        with contextlib.suppress(OSError):
                            info = entry.stat()
                            stats[rel] = (info.st_mtime_ns, info.st_size)
        return stats

    def _stat_checked(self) -> dict[str, tuple[int, int]]:
        paths, _ = tree.markdown_files(self.root)
        stats = {}
        for rel in paths:
            if rel == PERSONA:
                continue
            with contextlib.suppress(OSError):
                info = (self.root / rel).stat()
                stats[rel] = (info.st_mtime_ns, info.st_size)
        return stats

    def _read(self, rel: str) -> tuple[bytes, list[Chunk]] | None:
        path = self.root / rel
        try:
            stat = path.stat()
            key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            kept = self._chunked.get(rel)
            if kept is not None and kept[0] == key:
                return kept[1]
            raw = path.read_bytes()
            day = dt.date.fromtimestamp(stat.st_mtime)
        except OSError:
            return None
        read = self._chunk(rel, raw, day)
        if self._keep_chunked:
            self._chunked[rel] = (key, read)
        return read

    def _chunk(self, rel: str, raw: bytes, day: dt.date) -> tuple[bytes, list[Chunk]]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw, []  # memsite check reports it; nothing to search
        if "\x00" in text:
            return raw, []
        return raw, self.chunker(rel, text, fallback_date=day)

    def _build(self, started: float) -> Refresh:
        self._ix = None
        stats = self._stat_tree()
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
            writer = ix.writer(limitmb=LIMITMB)
            try:
                for rel, (mtime, size) in stats.items():
                    read = self._read(rel)
                    if read is None:
                        continue
                    raw, chunks = read
                    files[rel] = [mtime, size, _hash(raw)]
                    for document in _documents(chunks):
                        writer.add_document(**document)
                    count += len(chunks)
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            _write_json(fresh / "state.json", self._state(files, checked))
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
        stats = self._stat_tree()
        files = dict(state["files"])
        changed = self._changed(state, stats)
        reads = {}
        for rel in changed:
            read = self._read(rel) if rel in stats else None
            if read is not None and rel in files and files[rel][2] == _hash(read[0]):
                files[rel] = [*stats[rel], files[rel][2]]  # touched, not changed
                continue
            reads[rel] = read
        count = removed = 0
        if reads:
            writer = ix.writer(timeout=WRITE_TIMEOUT, delay=0.05, limitmb=LIMITMB)
            try:
                with writer.searcher() as searcher:
                    for rel, read in reads.items():
                        if read is None:
                            writer.delete_by_term("path", rel)
                            files.pop(rel, None)
                            removed += 1
                            continue
                        raw, chunks = read
                        files[rel] = [*stats[rel], _hash(raw)]
                        count += _replace(writer, searcher, rel, _documents(chunks))
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
        _write_json(self.state_path, self._state(files, checked))
        self._ix = ix
        return Refresh(len(reads) - removed, removed, count, False, time.perf_counter() - started)

    def _state(self, files: dict, checked: int) -> dict:
        return {
            "schema": SCHEMA_VERSION,
            "chunks": CHUNK_VERSION,
            "whoosh": whoosh.versionstring(),
            "root": str(self.root.resolve()),
            "checked_ns": checked,
            "files": files,
        }

    def _load_state(self) -> dict:
        try:
            info = self.state_path.stat()
            key = (info.st_mtime_ns, info.st_size, info.st_ino)
            if self._state_cache is not None and self._state_cache[0] == key:
                return self._state_cache[1]  # checked when it was read; not changed since
            state = json.loads(self.state_path.read_text("utf-8"))
        except FileNotFoundError:
            raise IndexBroken(f"{self.folder} is missing") from None
        except (OSError, ValueError) as err:
            raise IndexBroken(f"{self.state_path} is unreadable ({err})") from None
        if not isinstance(state, dict) or not isinstance(state.get("files"), dict):
            raise IndexBroken(f"{self.state_path} is corrupt")
        if (
            state.get("schema") != SCHEMA_VERSION
            or state.get("chunks") != CHUNK_VERSION
            or state.get("whoosh") != whoosh.versionstring()
        ):
            raise IndexBroken(
                f"{self.folder} was built by another version of memsite or Whoosh "
                f"(schema {state.get('schema')}.{state.get('chunks')}, "
                f"Whoosh {state.get('whoosh')})"
            )
        if state.get("root") != str(self.root.resolve()):
            raise IndexBroken(f"{self.folder} belongs to another tree ({state.get('root')})")
        self._state_cache = (key, state)
        return state

    def _open(self) -> whoosh.index.Index:
        with _quiet_leaks():
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
        swapped in a rebuilt one under an open searcher.
        """
        failure = ""
        with _quiet_leaks():
            for _ in range(2):
                try:
                    return ask(self._fresh_searcher())
                except MemsiteError:
                    raise
                except Exception as err:  # a damaged segment shows up only when read
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
    ) -> list[Hit]:
        """The best ``limit`` spans for a parsed query (hybrid when the semantic extra is
        installed, unless ``lexical``)."""
        filters = query.filters.merge(filters or Filters())
        return self._with_index(
            lambda searcher: self._search(searcher, query, filters, limit, lexical)
        )

    def _search(
        self, searcher, query: Parsed, filters: Filters, limit: int, lexical: bool = False
    ) -> list[Hit]:  # type: ignore[no-untyped-def]
        wanted = self._query(query, searcher.reader())
        narrow = _filter_query(filters)
        if wanted is None:
            if narrow is None:
                return []
            results = searcher.search(
                And([Term("roles", "section"), narrow]),
                limit=limit,
                sortedby="date",
                reverse=True,
            )
            return [
                span_hit(Span((chunk,), chunk, 0.0), _plain(chunk.body))
                for chunk in (_chunk(hit.fields()) for hit in results)
            ]
        if narrow is not None:
            # inside the query, not as a filter: Whoosh turns a filter into a set of
            # every matching document on each search, an intersection skips lazily
            wanted = And([wanted, ConstantScoreQuery(narrow, 0.0)])
        # One query serves both levels: section documents give section scores, record
        # documents record scores (a one-chunk record's document gives both).
        # a caller asking for more hits than the pool gets a pool that large
        section_pool = max(SECTION_POOL, limit)
        results = searcher.search(wanted, limit=section_pool + RECORD_POOL)
        section_scores: dict[str, float] = {}
        record_scores: dict[str, float] = {}
        groups: dict[tuple[str, str], dict[str, Chunk]] = {}
        sizes: dict[tuple[str, str], int] = {}
        for hit in results:
            fields = hit.fields()
            roles = fields["roles"].split()
            key = (fields["path"], fields["record"])
            sizes[key] = fields["meta"]["size"]
            members = groups.setdefault(key, {})
            if "record" in roles and len(record_scores) < RECORD_POOL:
                record_scores.setdefault(fields["record"], hit.score)
            if "section" in roles and len(section_scores) < section_pool:
                chunk = _chunk(fields)
                section_scores[chunk.id] = hit.score
                members[chunk.id] = chunk
        matched = set(section_scores)
        meaning = None if lexical else self._meaning(query.words)
        if meaning is not None and not query.phrases:  # quoted phrases stay required
            matched |= _add_meaning(searcher, meaning, groups, sizes, filters)
        for (path, record), members in groups.items():
            if sizes[(path, record)] <= len(members):
                continue
            for fields in _record_documents(searcher, path, record):
                if "section" not in fields["roles"].split():
                    continue
                chunk = _chunk(fields)
                if chunk.id not in members and filters.accepts(**_attrs(chunk)):
                    members[chunk.id] = chunk
        groups = {key: members for key, members in groups.items() if members}
        candidates = [c for members in groups.values() for c in members.values()]
        signals = [Signal("lexical", section_scores, record_scores)]
        if meaning is not None:
            signals.append(meaning.signal(candidates))
        scores = fuse_scores(candidates, signals)
        spans = merge_spans(
            {f"{p}\0{r}": list(m.values()) for (p, r), m in groups.items()},
            scores,
            matched,
        )[:limit]
        terms = self._terms(" ".join([query.words, *query.phrases]))
        return [span_hit(span, _snippet(span.seed.body, terms)) for span in spans]

    def _vectors(self) -> semantic.Store | None:
        """Section and record vectors in line with the index (issue 6); None without the
        extra. They live beside the index folder, keyed by text: a rebuilt index reuses them."""
        if not semantic.available():
            return None
        # the chunker's version is part of a file's stamp: a new chunker means new chunk ids
        files = {
            path: f"{entry[2]}:{CHUNK_VERSION}"
            for path, entry in self._load_state()["files"].items()
        }
        try:
            return semantic.update(
                self.folder.parent / f"{self.folder.name}.vectors.npz",
                files,
                lambda rel: read[1] if (read := self._read(rel)) is not None else None,
            ).store
        finally:
            self._chunked.clear()

    def _meaning(self, text: str) -> semantic.Meaning | None:
        """How close ``text`` is to every section and record; None without the extra."""
        store = self._vectors() if text.strip() else None
        return None if store is None else semantic.Meaning(store, semantic.load().embed_one(text))

    def _record_meaning(self, record: str) -> semantic.Meaning | None:
        """How close one record is to every other; None without the extra."""
        store = self._vectors()
        vector = None if store is None else store.record_vector(record)
        return None if vector is None else semantic.Meaning(store, vector)

    def _terms(self, text: str) -> list[str]:
        return list(dict.fromkeys(token.text for token in ANALYZER(text)))

    def _query(self, query: Parsed, reader=None) -> Query | None:  # type: ignore[no-untyped-def]
        words = self._terms(query.words)
        free = Or([Term(field, word) for word in words for field in FIELDS]) if words else None
        if free is not None and reader is not None:
            free = Or([free, *_completions(reader, words)])
        phrases: list[Query] = []
        for phrase in query.phrases:
            terms = self._terms(phrase)
            if len(terms) == 1:
                phrases.append(Or([Term("heading", terms[0]), Term("body", terms[0])]))
            elif terms:
                phrases.append(Or([Phrase("heading", terms), Phrase("body", terms)]))
        if not phrases:
            return free
        required = phrases[0] if len(phrases) == 1 else And(phrases)
        return AndMaybe(required, free) if free is not None else required

    def related(
        self,
        entry_id: str,
        limit: int = 5,
        kinds: Sequence[str] = ("decision", "learning", "note"),
        lexical: bool = False,
    ) -> list[Hit]:
        """The records most like one entry (Whoosh more-like-this over record documents,
        fused with the records' meaning when the semantic extra is installed)."""

        def ask(searcher) -> list[Hit]:  # type: ignore[no-untyped-def]
            own = self._own_sections(searcher, entry_id)
            likeness = _Likeness(searcher, kinds)
            hits = self._alike(searcher, own, limit, likeness)
            meaning = None if lexical else self._record_meaning(entry_id)
            return _with_meaning(likeness, meaning, hits, own, kinds, limit)

        return self._with_index(ask)

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

        def ask(searcher) -> dict[str, list[Hit]]:  # type: ignore[no-untyped-def]
            owns = {}
            for entry_id in dict.fromkeys(ids):
                with contextlib.suppress(NotFound):
                    owns[entry_id] = self._own_sections(searcher, entry_id)
            meanings = {} if lexical else self._record_meanings(list(owns))
            likeness = _Likeness(searcher, kinds)
            alike = {e: self._alike(searcher, own, limit, likeness) for e, own in owns.items()}
            return {
                entry_id: _with_meaning(
                    likeness, meanings.get(entry_id), alike[entry_id], own, kinds, limit
                )
                for entry_id, own in owns.items()
            }

        return self._with_index(ask)

    def _own_sections(self, searcher, entry_id: str) -> list[dict]:  # type: ignore[no-untyped-def]
        own = [f for f in searcher.documents(record=entry_id) if "section" in f["roles"]]
        if not own:
            raise NotFound(f"no entry with id {entry_id!r} in {self.root}")
        own.sort(key=lambda f: f["meta"]["position"])
        return own

    def _record_meanings(self, records: list[str]) -> dict[str, semantic.Meaning]:
        """``_record_meaning`` of each record it can give one for, batched."""
        store = self._vectors()
        return {} if store is None else semantic.record_meanings(store, records)

    def _alike(self, searcher, own: list[dict], limit: int, likeness: _Likeness) -> list[Hit]:  # type: ignore[no-untyped-def]
        """More-like-this hits for one record, given its section documents in order: up to
        ``limit + 1`` allowed records other than itself (:func:`_with_meaning` keeps ``limit``)."""
        entry_id = own[0]["record"]
        text = "\n\n".join(f["meta"]["text"] for f in own)
        path = own[0]["path"]
        mine = searcher.document_number(uid=own[0]["uid"])
        hits = []
        for score, number in likeness.top(f"{own[0]['heading']}\n{text}", mine, limit + 1):
            fields = searcher.stored_fields(number)
            if fields["record"] == entry_id and fields["path"] == path:
                continue
            if "section" in fields["roles"].split():
                opening = fields
            else:
                opening = likeness.opening(fields["path"], fields["record"])
            chunk = _chunk(opening)
            hits.append(span_hit(Span((chunk,), chunk, score), _plain(chunk.body)))
        return hits


class _Likeness:
    """Whoosh's more-like-this over the record documents of some kinds, scored term by term
    (and the opening section of each record it finds).

    ``searcher.more_like`` picks a text's key terms and runs their ``Or`` over the whole
    index, then drops what the kind filter rejects: in a year of memory 19 documents of 20
    are activity, matched and scored for nothing, and the filter is made into a set again
    on every call. Here each key term's BM25F scores (Whoosh's own scorer) are read once,
    for the allowed documents only, and kept: a site build asks about a thousand entries
    whose key terms repeat. A document's score is the sum of its terms' scores, as in
    Whoosh's ``Or`` (which adds them in a tree on indexes over 5,000 documents: the last
    bits of a score can differ from it, the order of hits does not in practice).
    """

    NUMTERMS = 12  # key terms per text

    def __init__(self, searcher, kinds: Sequence[str]) -> None:  # type: ignore[no-untyped-def]
        self.searcher = searcher
        query = And([Term("roles", "record"), Or([Term("kind", kind) for kind in kinds])])
        self.allowed = sorted(searcher.docs_for_query(query))
        self.field = searcher.schema["body"]
        self.reader = searcher.reader()
        self.scores: dict[str, dict[int, float]] = {}
        self.openings: dict[tuple[str, str], dict | None] = {}
        self.stats = _ReaderStats(self.reader)

    def top(self, text: str, mine: int | None, count: int) -> list[tuple[float, int]]:
        """``(score, document)`` of the ``count`` allowed documents most like ``text``, best
        first, ties in document order (Whoosh's order), leaving out document ``mine``."""
        # what searcher.key_terms_from_text does, with the reader's statistics remembered
        expander = classify.Expander(self.stats, "body", model=classify.Bo1Model)
        expander.add_text(text)
        terms = expander.expanded_terms(self.NUMTERMS, normalize=False)
        total: dict[int, float] = {}
        for word, boost in terms:
            for number, score in self._term_scores(word).items():
                # the product is the one Whoosh's boost wrapper computes
                total[number] = total.get(number, 0.0) + (score * boost if boost != 1 else score)
        total.pop(mine, None)  # type: ignore[arg-type]
        best = heapq.nsmallest(count, ((-score, number) for number, score in total.items()))
        return [(-negated, number) for negated, number in best]

    def opening(self, path: str, record: str) -> dict | None:
        """Stored fields of a record's first section (kept: a record is asked for often)."""
        key = (path, record)
        if key not in self.openings:
            sections = [
                f for f in _record_documents(self.searcher, path, record) if "section" in f["roles"]
            ]
            self.openings[key] = min(sections, key=lambda f: f["meta"]["position"], default=None)
        return self.openings[key]

    def _term_scores(self, word: str) -> dict[int, float]:
        found = self.scores.get(word)
        if found is not None:
            return found
        found = {}
        try:
            btext = self.field.to_bytes(word)
        except ValueError:
            btext = None
        if btext is not None and ("body", btext) in self.reader:
            matcher = self.searcher.postings("body", btext)
            allowed, start, end = self.allowed, 0, len(self.allowed)
            while matcher.is_active():
                number = matcher.id()
                start = bisect.bisect_left(allowed, number, start, end)
                if start == end:
                    break
                if allowed[start] == number:
                    found[number] = matcher.score()
                    matcher.next()
                else:
                    matcher.skip_to(allowed[start])
        self.scores[word] = found
        return found


class _ReaderStats:
    """The reader statistics Whoosh's key-term expander asks for, remembered: it looks up
    every word of a text, and the texts of a batch share most of their words."""

    def __init__(self, reader) -> None:  # type: ignore[no-untyped-def]
        self.reader = reader
        self.schema = reader.schema
        self.count = reader.doc_count_all()
        self.lengths: dict[str, int] = {}
        self.known: dict[tuple[str, bytes], bool] = {}
        self.frequencies: dict[tuple[str, bytes], float] = {}

    def doc_count_all(self) -> int:
        return self.count

    def field_length(self, field: str) -> int:
        if field not in self.lengths:
            self.lengths[field] = self.reader.field_length(field)
        return self.lengths[field]

    def __contains__(self, term: tuple[str, bytes]) -> bool:
        if term not in self.known:
            self.known[term] = term in self.reader
        return self.known[term]

    def frequency(self, field: str, text: bytes) -> float:
        key = (field, text)
        if key not in self.frequencies:
            self.frequencies[key] = self.reader.frequency(field, text)
        return self.frequencies[key]


def _completions(reader, words: list[str]) -> list[Query]:  # type: ignore[no-untyped-def]
    """The first longer indexed word that starts with a query word, at reduced weight.

    "mongo" then also finds "mongodb", "hasher" finds "hashers"; stemming alone does not.
    Measured on both labelled sets: +0.01-0.02 recall@5 and MRR@10.
    """
    found: list[Query] = []
    for word in words:
        if len(word) < COMPLETE_FROM:
            continue
        for field in ("heading", "body"):
            terms = (t.decode("utf-8") for t in reader.expand_prefix(field, word))
            longer = (t for t in terms if t != word)
            found += [
                Term(field, term, boost=COMPLETION_WEIGHT)
                for term in itertools.islice(longer, COMPLETIONS)
            ]
    return found


@contextlib.contextmanager
def _quiet_leaks() -> Iterator[None]:
    """Whoosh leaves the file it was reading open when it fails on a damaged index: the
    caller collects such files inside this block, quietly, instead of a ResourceWarning at
    some unrelated later moment."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        yield


def _add_meaning(searcher, meaning, groups, sizes, filters: Filters) -> set[str]:  # type: ignore[no-untyped-def]
    """Add the sections and records closest in meaning to the candidates; return the seeds.

    Each record gets at most one seed from meaning (its closest section): the lexical matches
    decide how far a span grows, so meaning picks records without widening spans.
    """
    reader = searcher.reader()
    seeds: set[str] = set()
    for path, uid in meaning.best_sections(SECTION_POOL):
        for number in searcher.docs_for_query(Term("uid", uid)):
            fields = reader.stored_fields(number)
            chunk = _chunk(fields)
            if fields["path"] != path or not filters.accepts(**_attrs(chunk)):
                continue
            key = (path, fields["record"])
            sizes[key] = fields["meta"]["size"]
            members = groups.setdefault(key, {})
            if not any(c in seeds for c in members):
                seeds.add(chunk.id)
            members.setdefault(chunk.id, chunk)
    for path, record in meaning.best_records(RECORD_POOL):
        for fields in _record_documents(searcher, path, record):
            if "section" in fields["roles"].split():
                sizes[(path, record)] = fields["meta"]["size"]
                groups.setdefault((path, record), {})
    return seeds


def _with_meaning(  # type: ignore[no-untyped-def]
    likeness: _Likeness,
    meaning,
    hits: list[Hit],
    own: list[dict],
    kinds: Sequence[str],
    limit: int,
) -> list[Hit]:
    """The related hits of a record: its more-like-this ``hits``, fused with its meaning
    when there is one, the best ``limit``."""
    if meaning is None:
        return hits[:limit]
    return _fuse_related(likeness, meaning, hits, (own[0]["path"], own[0]["record"]), kinds, limit)


def _fuse_related(  # type: ignore[no-untyped-def]
    likeness: _Likeness,
    meaning,
    hits: list[Hit],
    own: tuple[str, str],
    kinds: Sequence[str],
    limit: int,
) -> list[Hit]:
    """More-like-this hits and the records closest in meaning, ranked by the sum of their
    normalised scores (the same fusion as search, at record level); the best ``limit``."""
    found = {(hit.path, hit.record): hit for hit in hits}
    near: dict[tuple[str, str], dict] = {}  # close in meaning only: made into hits if chosen
    for path, record in meaning.best_records(RECORD_POOL + 1):
        key = (path, record)
        if key == own or key in found or key in near:
            continue
        opening = likeness.opening(path, record)
        if opening is not None and opening["kind"] in kinds:
            near[key] = opening
    scores = {key: hit.score for key, hit in found.items()} | dict.fromkeys(near, 0.0)
    top = max(scores.values(), default=0.0) or 1.0
    close = meaning.scaled_records([record for _, record in scores])
    fused = {key: score / top + close.get(key[1], 0.0) for key, score in scores.items()}
    chosen = []
    for key in sorted(scores, key=lambda k: -fused[k])[:limit]:
        if key in found:
            chosen.append(replace(found[key], score=fused[key]))
        else:
            chunk = _chunk(near[key])
            chosen.append(span_hit(Span((chunk,), chunk, fused[key]), _plain(chunk.body)))
    return chosen


def _record_documents(searcher, path: str, record: str) -> list[dict]:  # type: ignore[no-untyped-def]
    """Stored fields of every document of one record (one term lookup, not an And query)."""
    reader = searcher.reader()
    found = (reader.stored_fields(n) for n in searcher.docs_for_query(Term("record", record)))
    return [fields for fields in found if fields["path"] == path]


def _documents(chunks: list[Chunk]) -> list[dict]:
    """One file's documents: one per chunk, plus one per multi-chunk record. Each carries a
    fingerprint of its content so an update re-adds only the documents that changed."""
    records: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        records.setdefault(chunk.record, []).append(chunk)
    documents = []
    for members in records.values():
        single = len(members) == 1
        for chunk in members:
            documents.append(
                {
                    "uid": chunk.id,
                    "roles": "section record" if single else "section",
                    "record": chunk.record,
                    "path": chunk.path,
                    "kind": chunk.kind,
                    "tier": chunk.tier,
                    "date": chunk.date.isoformat(),
                    "category": chunk.category.casefold(),
                    "tags": ",".join(chunk.tags),
                    "heading": chunk.heading,
                    "body": chunk.body,
                    "lead": chunk.lead,
                    "meta": _meta(chunk, len(members)),
                }
            )
        if not single:
            first = members[0]
            documents.append(
                {
                    "uid": f"{first.record}\0record",
                    "roles": "record",
                    "record": first.record,
                    "path": first.path,
                    "kind": first.kind,
                    "tier": first.tier,
                    "date": first.date.isoformat(),
                    "category": first.category.casefold(),
                    "tags": ",".join(first.tags),
                    "heading": first.heading,
                    "body": "\n\n".join(c.body for c in members),
                    "meta": {"size": len(members), "position": -1},
                }
            )
    for document in documents:
        document["meta"]["print"] = _fingerprint(document)
    return documents


def _fingerprint(document: dict) -> str:
    data = json.dumps(document, sort_keys=True, ensure_ascii=False).encode("utf-8", "replace")
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def _replace(writer, searcher, path: str, documents: list[dict]) -> int:  # type: ignore[no-untyped-def]
    """Make the index hold exactly ``documents`` for ``path``, touching only what changed
    (appending one entry to a file of 500 re-adds one document, not 500)."""
    wanted = {(d["uid"], d["meta"]["print"]) for d in documents}
    held = set()
    for number in searcher.document_numbers(path=path):
        fields = searcher.stored_fields(number)
        key = (fields["uid"], fields["meta"].get("print"))
        if key in wanted and key not in held:
            held.add(key)
        else:
            writer.delete_document(number)
    added = 0
    for document in documents:
        if (document["uid"], document["meta"]["print"]) not in held:
            writer.add_document(**document)
            added += 1
    return added


def _meta(chunk: Chunk, size: int) -> dict[str, object]:
    return {
        "id": chunk.id,
        "position": chunk.position,
        "anchor": chunk.anchor,
        "breadcrumb": list(chunk.breadcrumb),
        "time": chunk.time.isoformat() if chunk.time else None,
        "category": chunk.category,
        "tags": list(chunk.tags),
        "line": chunk.line,
        "end_line": chunk.end_line,
        "text": chunk.text,
        "heading_lines": chunk.heading_lines,
        "size": size,
    }


def _chunk(fields: dict) -> Chunk:
    meta = fields["meta"]
    return Chunk(
        id=meta["id"],
        record=fields["record"],
        position=meta["position"],
        path=fields["path"],
        anchor=meta["anchor"],
        heading=fields["heading"],
        breadcrumb=tuple(meta["breadcrumb"]),
        kind=fields["kind"],
        tier=fields["tier"],
        date=dt.date.fromisoformat(fields["date"]),
        line=meta["line"],
        end_line=meta["end_line"],
        text=meta["text"],
        time=dt.time.fromisoformat(meta["time"]) if meta["time"] else None,
        category=meta["category"],
        tags=tuple(meta["tags"]),
        heading_lines=meta["heading_lines"],
    )


def _attrs(chunk: Chunk) -> dict[str, object]:
    return {
        "kind": chunk.kind,
        "tier": chunk.tier,
        "category": chunk.category,
        "tags": chunk.tags,
        "path": chunk.path,
        "date": chunk.date,
    }


def _filter_query(filters: Filters) -> Query | None:
    parts: list[Query] = []
    for field, values in (
        ("kind", filters.kinds),
        ("tier", filters.tiers),
        ("category", filters.categories),
        ("path", filters.paths),
    ):
        if values:
            parts.append(Or([Term(field, value) for value in values]))
    parts += [Term("tags", tag) for tag in filters.tags]
    if filters.dates:
        parts.append(Or([Prefix("date", day) for day in filters.dates]))
    if filters.since or filters.until:
        parts.append(
            TermRange(
                "date",
                filters.since.isoformat() if filters.since else None,
                filters.until.isoformat() if filters.until else None,
            )
        )
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(parts)


class _Bold(highlight.Formatter):
    between = " … "

    def format_token(self, text, token, replace=False):  # type: ignore[no-untyped-def]
        return "**" + highlight.get_text(text, token, replace) + "**"


SNIPPET_CHARS = 160


_BULLET = re.compile(r"^\s*[-*+]\s+", re.MULTILINE)


def _snippet(text: str, terms: list[str]) -> str:
    """Up to two fragments of ``text`` around query words, the words in ``**bold**``."""
    flat = " ".join(_BULLET.sub("", text).split())
    if terms:
        fragmenter = highlight.ContextFragmenter(maxchars=SNIPPET_CHARS, surround=50)
        found = highlight.highlight(flat, terms, ANALYZER, fragmenter, _Bold(), top=2)
        if found:
            return found
    return _plain(flat)


def _plain(text: str) -> str:
    flat = " ".join(_BULLET.sub("", text).split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"


def _write_json(path: Path, data: dict) -> None:
    fd, temp = tempfile.mkstemp(prefix=".state-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
