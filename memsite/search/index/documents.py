"""What the Whoosh index holds: its schema, the documents a file's chunks become, and the
chunk a stored document gives back.

Each chunk is one *section* document; a record of several chunks also gets one *record*
document holding all its text (a one-chunk record's document plays both roles). Each
document carries a fingerprint of its content, so an update re-adds only what changed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json

from whoosh.analysis import Filter, LowercaseFilter, RegexTokenizer, StemFilter, StopFilter
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema
from whoosh.reading import TermNotFound

from ..chunks import Chunk

# 2: posting blocks in a current pickle protocol (codec.py); 3: a dotted name's parts (issue 36)
SCHEMA_VERSION = 3

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


class DottedParts(Filter):
    """A dotted name in a text (``workflow.configuration.enable_caesar_data_fetching``, one
    word to the tokenizer) is also each of its snake_case parts, at its position (a phrase
    with the name whole still matches): the memory holds ``enable_caesar_data_fetching``,
    and a question naming it finds it (issue 36: it was a word no document holds). Only the
    identifiers: every part ("github" and "com" of a link, "py" of a file name) cost hybrid
    search 0.923 → 0.909 recall@5 on the devset (``bench/bench_devset.py``). Asked in a query
    (``mode="query"``), a dotted name stays whole."""

    def __call__(self, tokens):  # type: ignore[no-untyped-def]
        for token in tokens:
            yield token
            if token.mode == "query" or "." not in token.text:
                continue
            whole, start = token.text, getattr(token, "startchar", None)
            offset, seen = 0, {whole}
            for part in whole.split("."):
                if "_" in part.strip("_") and part not in seen:
                    seen.add(part)
                    token.text = part
                    if start is not None:
                        token.startchar = start + offset
                        token.endchar = start + offset + len(part)
                    yield token
                offset += len(part) + 1


# Whoosh's StemmingAnalyzer with the dotted names' parts, stemmed as words
ANALYZER = (
    RegexTokenizer()
    | LowercaseFilter()
    | StopFilter(stoplist=STOP_WORDS, minsize=2)
    | DottedParts()
    | StemFilter(cachesize=-1)
)
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


def file_documents(chunks: list[Chunk]) -> list[dict]:
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


def replace_documents(writer, searcher, path: str, documents: list[dict]) -> int:  # type: ignore[no-untyped-def]
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


def stored_chunk(fields: dict) -> Chunk:
    """The chunk a section document's stored fields hold."""
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


def attrs(chunk: Chunk) -> dict[str, object]:
    """What ``Filters.accepts`` asks of a chunk."""
    return {
        "kind": chunk.kind,
        "tier": chunk.tier,
        "category": chunk.category,
        "tags": chunk.tags,
        "path": chunk.path,
        "date": chunk.date,
        "record": chunk.record,
    }


def record_documents(searcher, path: str, record: str) -> list[dict]:  # type: ignore[no-untyped-def]
    """Stored fields of every document of one record (one term lookup, not an And query)."""
    reader = searcher.reader()
    found = (reader.stored_fields(n) for n in term_documents(searcher, "record", record))
    return [fields for fields in found if fields["path"] == path]


def records_chunks(searcher, wanted: dict[str, str]) -> dict[str, list[Chunk]]:  # type: ignore[no-untyped-def]
    """The stored sections of each record asked (``{record: path}``) that the index holds."""
    found = {
        record: [stored_chunk(d) for d in record_documents(searcher, path, record)]
        for record, path in wanted.items()
    }
    return {record: chunks for record, chunks in found.items() if chunks}


def term_documents(searcher, field: str, text: str) -> list[int]:  # type: ignore[no-untyped-def]
    """The live documents holding one term, in order: ``docs_for_query(Term(field, text))``
    with one lookup of the term per segment, not three (it builds a scorer first)."""
    found: list[int] = []
    for sub, offset in searcher.leaf_searchers():
        try:
            postings = sub.reader().postings(field, text)  # leaves deleted documents out
        except TermNotFound:
            continue
        found += (offset + number for number in postings.all_ids())
    return found
