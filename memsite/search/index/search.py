"""Query-time search over the Whoosh index: a parsed query and its filters become one Whoosh
query run against section and record documents, the closest sections in meaning join the
candidates, and :mod:`memsite.search.ranking` fuses the scores and merges spans.

What it returns is what was found (:class:`~memsite.search.ranking.Found`: the spans, their
snippets and plain figures); what an agent is handed is made of it above the index
(``payloads/hits.py``: the top spans cut to passages, recall's floor measured).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from whoosh import highlight
from whoosh.query import (
    And,
    ConstantScoreQuery,
    Or,
    Query,
    Term,
)

from .. import meaning
from ..query import Filters
from ..query import Query as Parsed
from ..ranking import Found, Signal, fuse_scores
from ..snippets import SNIPPET_CHARS, clip, flat, plain
from ..spans import Span, assemble_spans
from . import postings
from .asking import as_the_memory_spells, filter_query, whoosh_query, words_of
from .documents import ANALYZER, FIELDS, attrs, record_documents, stored_chunk, term_documents

if TYPE_CHECKING:
    from ..chunks import Chunk

SECTION_POOL = 50  # best sections considered per query
RECORD_POOL = 20  # best records considered per query
Vectors = Callable[[], meaning.Store | None]  # the index's vectors, None without the extra


def search(  # type: ignore[no-untyped-def]
    searcher,
    query: Parsed,
    filters: Filters,
    limit: int,
    vectors: Vectors | None = None,
) -> Found:
    """The best ``limit`` spans for a parsed query, fused with its meaning when ``vectors``
    (None: lexical only) gives the sections' and records' vectors."""
    reader = searcher.reader()
    asked = " ".join([query.words, *query.phrases])
    # the floor measures a word the memory abbreviates as the memory spells it (issue 36)
    spelled = as_the_memory_spells(reader, asked)
    wanted = whoosh_query(query, reader)
    narrow = filter_query(filters)
    if wanted is None:
        if narrow is None:
            return Found((), ())
        results = searcher.search(
            And([Term("roles", "section"), narrow]),
            limit=limit,
            sortedby="date",
            reverse=True,
        )
        chunks = [stored_chunk(hit.fields()) for hit in results]
        return Found(
            tuple(Span((chunk,), chunk, 0.0) for chunk in chunks),
            tuple(plain(chunk.body) for chunk in chunks),
        )
    # One query serves both levels: section documents give section scores, record
    # documents record scores (a one-chunk record's document gives both).
    # a caller asking for more hits than the pool gets a pool that large
    section_pool = max(SECTION_POOL, limit)
    section_scores: dict[str, float] = {}
    record_scores: dict[str, float] = {}
    groups: dict[tuple[str, str], dict[str, Chunk]] = {}
    sizes: dict[tuple[str, str], int] = {}
    for fields, score in _candidates(searcher, wanted, narrow, section_pool + RECORD_POOL):
        roles = fields["roles"].split()
        key = (fields["path"], fields["record"])
        sizes[key] = fields["meta"]["size"]
        members = groups.setdefault(key, {})
        if "record" in roles and len(record_scores) < RECORD_POOL:
            record_scores.setdefault(fields["record"], score)
        if "section" in roles and len(section_scores) < section_pool:
            chunk = stored_chunk(fields)
            section_scores[chunk.id] = score
            members[chunk.id] = chunk
    matched = set(section_scores)
    meaning = None if vectors is None else _meaning(vectors, query.words, searcher)
    if meaning is not None and not query.phrases:  # quoted phrases stay required
        matched |= _add_meaning(searcher, meaning, groups, sizes, filters)
    for (path, record), members in groups.items():
        if sizes[(path, record)] <= len(members):
            continue
        for fields in record_documents(searcher, path, record):
            if "section" not in fields["roles"].split():
                continue
            chunk = stored_chunk(fields)
            if chunk.id not in members and filters.accepts(**attrs(chunk)):
                members[chunk.id] = chunk
    groups = {key: members for key, members in groups.items() if members}
    candidates = [c for members in groups.values() for c in members.values()]
    signals = [Signal("lexical", section_scores, record_scores)]
    if meaning is not None:
        signals.append(meaning.signal(candidates))
    scores = fuse_scores(candidates, signals)
    spans = assemble_spans(
        {f"{p}\0{r}": list(m.values()) for (p, r), m in groups.items()},
        scores,
        matched,
        limit,
    )
    terms = list(dict.fromkeys(spelled.get(t, t) for t in words_of(asked)))
    return Found(
        spans=tuple(spans),
        snippets=tuple(_snippet(span.seed.body, terms) for span in spans),
        scores=scores,
        words=section_scores,
        terms=tuple(terms),
        # recall's floor (issue 24): how large the index is, and what it holds of the query
        frequencies={term: _held_by(searcher, term) for term in terms},
        documents=searcher.doc_count_all(),
        analyze=_words,
        apart=None if meaning is None else _apart(meaning),
    )


def _held_by(searcher, word: str) -> int:  # type: ignore[no-untyped-def]
    """How many documents hold ``word`` in any field (heading, body or lead).

    The floor's measures read a word as held when a hit's text holds it, heading included;
    counted in the body alone, a word only headings hold ("export NANOCHAT_BASE_DIR so child
    processes get it too", an entry titled "graceful shutdown of the ops console") was a
    word no document holds, weighed as the rarest possible, and its hit's coverage counted it
    at that weight too (issue 36)."""
    reader = searcher.reader()
    counts = [reader.doc_frequency(field, word) for field in FIELDS]
    if sum(1 for count in counts if count) <= 1:
        return max(counts)
    held: set[int] = set()
    for field in FIELDS:
        held.update(term_documents(searcher, field, word))
    return len(held)


def _words(text: str) -> set[str]:
    """The words of ``text`` as the index analyses them."""
    return {token.text for token in ANALYZER(text)}


def _candidates(
    searcher, wanted: Query, narrow: Query | None, count: int
) -> list[tuple[dict, float]]:  # type: ignore[no-untyped-def]
    """The stored fields and scores of the ``count`` best documents for ``wanted`` among
    those ``narrow`` (None: all) keeps, best first.

    A query of free words (an ``Or`` of terms) is scored a posting block at a time
    (:mod:`.postings`), with Whoosh's BM25F: Whoosh's collector scores every match
    one document at a time through its matcher tree, 110-140 ms when the words are common
    (issue 16). Quoted phrases need positions: Whoosh answers those. With a filter, Whoosh's
    top-N collection also drops documents that belong in it (the ``ConstantScoreQuery``
    scores 1.0 but tells the pruning 0.0); the block reader keeps the exact best.
    """
    reader = searcher.reader()
    terms = _weighted(wanted)
    if terms is not None:
        try:
            allowed = None
            if narrow is not None:
                parts = narrow.subqueries if type(narrow) is And else [narrow]
                allowed = postings.documents_with(
                    searcher, [part.existing_terms(reader, expand=True) for part in parts]
                )
            best = postings.best_documents(searcher, terms, count, allowed)
        except postings.Unreadable:
            pass
        else:
            # Whoosh's ConstantScoreQuery(narrow, 0.0) below adds 1.0, not 0.0 (its list
            # matcher reads a weight of 0.0 as "no weight"): filtered scores keep that shift
            shift = 0.0 if narrow is None else 1.0
            return [(reader.stored_fields(n), score + shift) for n, score in best]
    if narrow is not None:
        # inside the query, not as a filter: Whoosh turns a filter into a set of
        # every matching document on each search
        wanted = And([wanted, ConstantScoreQuery(narrow, 0.0)])
    return [(hit.fields(), hit.score) for hit in searcher.search(wanted, limit=count)]


def _weighted(query: Query) -> list[postings.Weighted] | None:
    """``(field, word, boost)`` of every term of an ``Or`` of terms (nested or not), in
    the order Whoosh sums them; None for any other query."""
    if type(query) is Term:
        return [(query.fieldname, query.text, query.boost)]
    if type(query) is not Or or query.boost != 1.0 or query.scale or query.minmatch:
        return None
    terms: list[postings.Weighted] = []
    for sub in query.subqueries:
        found = _weighted(sub)
        if found is None:
            return None
        terms += found
    return terms


def _meaning(vectors: Vectors, text: str, searcher) -> meaning.Meaning | None:  # type: ignore[no-untyped-def]
    """How close ``text`` is to every section and record; None without the extra.

    The question is embedded with each word weighed by its idf in the memory (stop words
    not at all): the model averages its tokens' vectors, so without weights the everyday
    words of a question ("can my team ... in our accounts") pull it toward whatever records
    share them, and the one rare word that names the subject counts for no more than they
    do. Measured (``docs/benchmarks.md``): on the development set of real decision records,
    hybrid recall@5 / MRR@10 0.940 / 0.843 → 0.955 / 0.865; the sample's paraphrased
    questions 0.722 / 0.559 → 0.757 / 0.579, its 50 questions 0.790 / 0.681 → 0.790 / 0.702.
    """
    store = vectors() if text.strip() else None
    if store is None:
        return None
    text = text[: meaning.MAX_CHARS]  # what the model embeds of a long prompt
    words = [(t.startchar, t.endchar, t.text) for t in ANALYZER(text, chars=True, mode="query")]
    idf = _idf(searcher, {word for _, _, word in words})
    weights = [(start, end, idf[word]) for start, end, word in words]
    vector = meaning.load().embed_weighted(text, weights)
    return meaning.Meaning(store, vector).by_best_section()


def _apart(found: meaning.Meaning) -> float | None:
    """How much closer the query is to the memory than to everyday requests (the floor's)."""
    return meaning.apart(found, meaning.load())


def _idf(searcher, words: set[str]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """How rare each word is among the memory's documents: ``log((N + 1) / (df + 1))``, 0
    for a word in every document. Whoosh's own ``idf`` adds 1, so every word keeps a weight
    of at least 1 and the everyday ones still pull (measured with it: development set 0.940
    / 0.845, paraphrased questions 0.740 / 0.555; BM25's idf measures like this one)."""
    count = searcher.doc_count_all() + 1
    return {word: math.log(count / (searcher.doc_frequency("body", word) + 1)) for word in words}


def _add_meaning(searcher, meaning, groups, sizes, filters: Filters) -> set[str]:  # type: ignore[no-untyped-def]
    """Add the sections and records closest in meaning to the candidates; return the seeds.

    Each record gets at most one seed from meaning (its closest section): the lexical matches
    decide how far a span grows, so meaning picks records without widening spans.
    """
    reader = searcher.reader()
    seeds: set[str] = set()
    # sections and records the words found already are not looked up again
    known = {chunk_id: key for key, members in groups.items() for chunk_id in members}
    for path, uid in meaning.best_sections(SECTION_POOL):
        if uid in known:
            key = known[uid]
            found = [(key, groups[key][uid], sizes[key])]
        else:
            found = []
            for number in term_documents(searcher, "uid", uid):
                fields = reader.stored_fields(number)
                key = (fields["path"], fields["record"])
                found.append((key, stored_chunk(fields), fields["meta"]["size"]))
        for key, chunk, size in found:
            if key[0] != path or not filters.accepts(**attrs(chunk)):
                continue
            sizes[key] = size
            members = groups.setdefault(key, {})
            if not any(c in seeds for c in members):
                seeds.add(chunk.id)
            members.setdefault(chunk.id, chunk)
    for path, record in meaning.best_records(RECORD_POOL):
        if (path, record) in groups:
            continue
        for fields in record_documents(searcher, path, record):
            if "section" in fields["roles"].split():
                sizes[(path, record)] = fields["meta"]["size"]
                groups.setdefault((path, record), {})
    return seeds


class _Bold(highlight.Formatter):
    between = " … "

    def format_fragment(self, fragment, replace=False):  # type: ignore[no-untyped-def]
        # cut where the text's own markup stays whole (issue 25.8)
        marks = [(t.startchar, t.endchar) for t in fragment.matches if t.startchar is not None]
        return clip(fragment.text, fragment.startchar, fragment.endchar, marks)


def _snippet(text: str, terms: list[str]) -> str:
    """Up to two fragments of ``text`` around query words, the words in ``**bold**``."""
    one_line = flat(text)
    if terms:
        fragmenter = highlight.ContextFragmenter(maxchars=SNIPPET_CHARS, surround=50)
        found = highlight.highlight(one_line, terms, ANALYZER, fragmenter, _Bold(), top=2)
        if found:
            return found
    return plain(one_line)
