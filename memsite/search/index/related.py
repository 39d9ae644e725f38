"""Related entries: the records most like one entry, by Whoosh's more-like-this over record
documents, fused with the records' meaning when the semantic extra is installed.
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as dt
import heapq
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from whoosh import classify
from whoosh.query import And, Or, Term

from ...errors import NotFound
from ...store.model import Entry
from .. import meaning
from ..chunks import Chunk, chunk_file
from ..ranking import Hit, Span, span_hit
from ..snippets import plain
from .documents import record_documents, stored_chunk
from .search import RECORD_POOL, Vectors

KINDS = ("decision", "learning", "note")  # what a related link names
RELATED_INDEX = "related"  # the cache folder of the index of those records only


def record_chunks(
    path: str,
    text: str,
    *,
    fallback_date: dt.date | None = None,
    entries: Sequence[Entry] | None = None,
) -> list[Chunk]:
    """The chunks of a file that related entries are looked for among (``KINDS``): an index
    of these answers ``related_many`` for a site without indexing the day logs' activities,
    which are 19 chunks of 20 in a year of memory and never a related link (issue 12).
    ``entries``: the file's entries when the caller parsed this text already."""
    chunks = chunk_file(path, text, fallback_date=fallback_date, entries=entries)
    return [c for c in chunks if c.kind in KINDS]


def chunker_of(parsed: Mapping[str, tuple[str, Sequence[Entry]]]) -> Callable[..., list[Chunk]]:
    """``record_chunks`` that reuses the entries of files already parsed (``parsed``: text
    and entries by path, as the site's build read them) when the text is still the same:
    a fresh build then parses each day log once, not twice."""

    def chunker(path: str, text: str, *, fallback_date: dt.date | None = None) -> list[Chunk]:
        known = parsed.get(path)
        entries = known[1] if known is not None and known[0] == text else None
        return record_chunks(path, text, fallback_date=fallback_date, entries=entries)

    return chunker


def related(  # type: ignore[no-untyped-def]
    searcher,
    root: Path,
    entry_id: str,
    limit: int,
    kinds: Sequence[str],
    vectors: Vectors | None = None,
) -> list[Hit]:
    """The records most like one entry, fused with their meaning when ``vectors`` (None:
    lexical only) gives the records' vectors."""
    own = _own_sections(searcher, root, entry_id)
    likeness = _Likeness(searcher, kinds)
    hits = _alike(searcher, own, limit, likeness)
    meaning = None if vectors is None else _record_meaning(vectors, entry_id)
    return _with_meaning(likeness, meaning, hits, own, kinds, limit)


def related_many(  # type: ignore[no-untyped-def]
    searcher,
    root: Path,
    ids: Sequence[str],
    limit: int,
    kinds: Sequence[str],
    vectors: Vectors | None = None,
) -> dict[str, list[Hit]]:
    """``{id: related(id)}`` for the ``ids`` the index knows, with one searcher and one kind
    filter for all of them, and their meanings in one product per block."""
    owns = {}
    for entry_id in dict.fromkeys(ids):
        with contextlib.suppress(NotFound):
            owns[entry_id] = _own_sections(searcher, root, entry_id)
    meanings = {} if vectors is None else _record_meanings(vectors, list(owns))
    likeness = _Likeness(searcher, kinds)
    alike = {e: _alike(searcher, own, limit, likeness) for e, own in owns.items()}
    return {
        entry_id: _with_meaning(
            likeness, meanings.get(entry_id), alike[entry_id], own, kinds, limit
        )
        for entry_id, own in owns.items()
    }


def _own_sections(searcher, root: Path, entry_id: str) -> list[dict]:  # type: ignore[no-untyped-def]
    own = [f for f in searcher.documents(record=entry_id) if "section" in f["roles"]]
    if not own:
        raise NotFound(f"no entry with id {entry_id!r} in {root}")
    own.sort(key=lambda f: f["meta"]["position"])
    return own


def _record_meaning(vectors: Vectors, record: str) -> meaning.Meaning | None:
    """How close one record is to every other; None without the extra."""
    store = vectors()
    vector = None if store is None else store.record_vector(record)
    return None if vector is None else meaning.Meaning(store, vector)


def _record_meanings(vectors: Vectors, records: list[str]) -> dict[str, meaning.Meaning]:
    """``_record_meaning`` of each record it can give one for, batched."""
    store = vectors()
    return {} if store is None else meaning.record_meanings(store, records)


def _alike(searcher, own: list[dict], limit: int, likeness: _Likeness) -> list[Hit]:  # type: ignore[no-untyped-def]
    """More-like-this hits for one record, given its section documents in order: up to
    ``limit + 1`` allowed records other than itself (:func:`_with_meaning` keeps ``limit``)."""
    entry_id = own[0]["record"]
    text = "\n\n".join(f["meta"]["text"] for f in own)
    path = own[0]["path"]
    # the document of the whole record: its own score is what the floor is measured against
    mine = searcher.document_number(uid=f"{entry_id}\0record")
    mine = searcher.document_number(uid=own[0]["uid"]) if mine is None else mine
    hits = []
    for score, number in likeness.top(f"{own[0]['heading']}\n{text}", mine, limit + 1):
        fields = searcher.stored_fields(number)
        if fields["record"] == entry_id and fields["path"] == path:
            continue
        if "section" in fields["roles"].split():
            opening = fields
        else:
            opening = likeness.opening(fields["path"], fields["record"])
        chunk = stored_chunk(opening)
        hits.append(span_hit(Span((chunk,), chunk, score), plain(chunk.body)))
    return hits


# Key terms every entry has, which say nothing of its topic: dates and other numbers, field
# labels (``**Why:**`` is indexed as ``**why``) and the ``id`` of the id line; and the author,
# whose name is on every entry they write.
_BOILERPLATE = re.compile(r"^(?:\d+|id|\W.*)$")
_AUTHOR = re.compile(r"^[-*+] \*\*author:\*\*.*$", re.IGNORECASE | re.MULTILINE)


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
    # The similarity floor (issue 13): a record is related only if it shares MIN_SHARED of the
    # entry's key terms and scores at least FLOOR of the entry's own score for them; an entry
    # with fewer than MIN_TERMS key terms (a one-word why) has too little text to compare and
    # gets none. On the sample memory this keeps the links of the entries that have a topic
    # (bcrypt/argon2, MongoDB/Postgres, feature flags: 3-5 each) and drops those that share
    # only a common word ("use", "without", "test") at 0.07-0.19 of the entry's score.
    MIN_TERMS = 3
    MIN_SHARED = 2
    FLOOR = 0.2

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
        expander.add_text(_AUTHOR.sub("", text))
        terms = [
            (word, boost)
            for word, boost in expander.expanded_terms(self.NUMTERMS * 2, normalize=False)
            if not _BOILERPLATE.match(word)
        ][: self.NUMTERMS]
        if len(terms) < self.MIN_TERMS:
            return []
        total: dict[int, float] = {}
        shared: dict[int, int] = {}
        for word, boost in terms:
            for number, score in self._term_scores(word).items():
                # the product is the one Whoosh's boost wrapper computes
                total[number] = total.get(number, 0.0) + (score * boost if boost != 1 else score)
                shared[number] = shared.get(number, 0) + 1
        floor = self.FLOOR * total.pop(mine, 0.0)  # type: ignore[arg-type]
        best = heapq.nsmallest(
            count,
            (
                (-score, number)
                for number, score in total.items()
                if shared[number] >= self.MIN_SHARED and score >= floor
            ),
        )
        return [(-negated, number) for negated, number in best]

    def opening(self, path: str, record: str) -> dict | None:
        """Stored fields of a record's first section (kept: a record is asked for often)."""
        key = (path, record)
        if key not in self.openings:
            sections = [
                f for f in record_documents(self.searcher, path, record) if "section" in f["roles"]
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
            chunk = stored_chunk(near[key])
            chosen.append(span_hit(Span((chunk,), chunk, fused[key]), plain(chunk.body)))
    return chosen
