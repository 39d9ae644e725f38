"""The site's search index: Material's search documents, trimmed, cut into small files the
browser loads only when a query needs them.

Material's own search fetches the whole index on every page and builds a lunr index from it
in the browser: about 2 s at a year of memory, on every page (issue 12). Here the documents
Material's search plugin wrote (``search/search_index.json``, one per page and one per entry
heading) become, under ``search/memsite/``:

- ``keys.js``: the shard keys that exist, the number of documents, the block size, the
  successors: for each superseded entry's document, the document of the entry that now holds
  (placed right before it in the results, as ``memsite search`` does: issue 25), and the
  groups of words read as one another (``GROUPS``: each group's term and its words);
- ``t/HEX.js``: one shard per first three characters of a term: for each term, its postings
  (document number as a delta from the previous one, and a BM25 weight made an integer,
  doubled, plus one when the term is in the document's title); a group's term has the
  postings of all its words;
- ``d/N.js``: the documents in blocks of ``BLOCK``: location, title, page title and the
  start of the text, which is all a result shows.

The search worker (``assets/search-worker.js``) speaks Material's worker protocol, so
Material's search box, result list and highlighting stay; it loads ``keys.js``, then only
the shards of the typed terms and the blocks of the results shown. The files are scripts
(``importScripts``), not JSON, so the same worker runs from ``file://`` through the
``iframe-worker`` shim. Every text is trimmed to ``LONG_BODY_CHARS`` before it is indexed.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..store.markup import LONG_BODY_CHARS

FOLDER = "search/memsite"
BLOCK = 100
SNIPPET_CHARS = 320
TITLE_WEIGHT = 3
# A term in the title doubles its weight: an entry titled with the query ranks above a short
# day-log line that only names it (measured on the sample: "clock skew" put the day log's
# pointer to the decision above the decision itself).
TITLE_BOOST = 2
K1, B = 1.2, 0.75
# Generated navigation text (related entries, supersession lines, the day pager) names other
# entries: indexed, a search for one entry's topic would return every entry that links to it.
# ``ms-nav`` is for any other generated list of links a template adds (issue 12.4).
NAVIGATION_CLASSES = ("ms-related", "ms-superseded", "ms-supersedes", "ms-daynav", "ms-nav")
# The search worker drops the same words from a query (``STOP`` in search-worker.js).
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        # a question asked in words (issue 39.6)
        *[
            "why",
            "what",
            "when",
            "where",
            "who",
            "whom",
            "how",
            "which",
            "did",
            "do",
            "does",
            "done",
        ],
        *["we", "our", "us", "you", "your", "me", "my", "should", "could", "would", "can", "about"],
    ]
)
# Words the search reads as one another (issue 39.6): the words a decision log uses for leaving
# a choice. "Why did we drop mongo" holds no word of the decision that answers it: the question
# says "drop", the decision "Move the session store from MongoDB to Postgres" says "move", its
# ADR "instead of", a later one "decommission"; read as written, "drop" only met entries about
# something else (a make target that drops a database) and no entry held both words. Every
# word of a group is also indexed under the group's term ("~": no indexed word holds it), and
# the worker reads a query word of a group as its group too, at a lower weight, when the word
# as written shares no document with any other word of the query (``relax`` in the worker).
# Words that more often say something else are not in it: migration and rollout (the work
# of a change, not the choice left), left and off (a side, a switch), delete and purge (data
# removed, not a choice).
_LEAVING_TEXT = """
    drop drops dropped dropping ditch ditched ditching abandon abandons abandoned abandoning
    leave leaves leaving quit quits quitting stop stops stopped stopping
    remove removes removed removing retire retires retired retiring
    decommission decommissions decommissioned decommissioning deprecate deprecates
    deprecated deprecating sunset sunsets replace replaces replaced replacing
    switch switches switched switching move moves moved moving migrate migrates migrated
    migrating instead
"""
LEAVING = frozenset(_LEAVING_TEXT.split())
GROUPS = {"~leave": LEAVING}
GROUP_OF = {word: term for term, members in GROUPS.items() for word in members}
_WORD = re.compile(r"[^\W_]+")
_TAG = re.compile(r"<[^>]*>")
_OPEN_TAIL = re.compile(r"<[^>]*$|&#?\w*$")
_CLASSED = re.compile(r"<(\w+)(\s[^>]*?\bclass=\"([^\"]*)\"[^>]*)>")
# A label: bold text that ends in a colon ("**Why:**", "**Paths:**", a detail's key). Every
# entry has the same ones, so indexed they made "why bcrypt" match every decision (issue 25).
_LABEL = re.compile(r"<strong>([^<>]{1,80}):</strong>")


@dataclass(frozen=True)
class Document:
    """One search document: a page (no ``#`` in its location) or an entry heading on it."""

    location: str
    title: str
    text: str
    page_title: str = ""


def exclude_navigation(content: str) -> str:
    """Rendered HTML whose generated navigation elements and labels Material's search leaves
    out (a label stays on the page and in a result's text, and is no word of its entry)."""

    def mark(found: re.Match[str]) -> str:
        classes = found.group(3).split()
        if "data-search-exclude" in found.group(2) or not any(
            name in classes for name in NAVIGATION_CLASSES
        ):
            return found.group(0)
        return f"<{found.group(1)}{found.group(2)} data-search-exclude>"

    marked = _CLASSED.sub(mark, content)
    return _LABEL.sub(r"<strong data-search-exclude>\1:</strong>", marked)


def trim(text: str, limit: int = LONG_BODY_CHARS) -> str:
    """``text`` (HTML as Material's search wrote it) cut to ``limit`` characters, never in the
    middle of a tag or an entity, with an ellipsis when it was cut."""
    if len(text) <= limit:
        return text
    return _OPEN_TAIL.sub("", text[:limit]).rstrip() + " …"


def words(text: str) -> list[str]:
    """The indexed words of an HTML text: lower case letters and digits, tags left out."""
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOP_WORDS]


def documents(index: dict[str, object]) -> list[Document]:
    """The documents of Material's ``search_index.json``, trimmed, each with its page title."""
    docs = index.get("docs") or []
    assert isinstance(docs, list)
    pages = {d["location"]: d["title"] for d in docs if "#" not in d["location"]}
    return [
        Document(
            location=d["location"],
            title=d["title"],
            text=trim(d.get("text") or ""),
            page_title=pages.get(d["location"].split("#", 1)[0], ""),
        )
        for d in docs
    ]


def shard_key(term: str) -> str:
    """The shard a term lives in: its first three characters (``shardOf`` in the worker)."""
    return term[:3]


def shard_file(key: str) -> str:
    """The file of a shard: its key's UTF-8 bytes in hex, so any letter makes a file name."""
    return f"t/{key.encode('utf-8').hex()}.js"


def postings(docs: list[Document]) -> dict[str, list[int]]:
    """For every term, ``[delta, weight, delta, weight, ...]`` over the documents holding it:
    BM25 over title (counted ``TITLE_WEIGHT`` times) and text, as integers, each doubled plus
    one for a term of the title; a group's term (``GROUPS``) counts every word of its group."""
    counts: list[Counter[str]] = []
    titled: list[frozenset[str]] = []
    lengths: list[int] = []
    for doc in docs:
        title = words(doc.title)
        count = Counter(words(doc.text))
        for word in title:
            count[word] += TITLE_WEIGHT
        lengths.append(sum(count.values()))
        grouped: Counter[str] = Counter()
        for word, times in count.items():
            if word in GROUP_OF:
                grouped[GROUP_OF[word]] += times
        count.update(grouped)
        counts.append(count)
        titled.append(frozenset(title).union(GROUP_OF[w] for w in title if w in GROUP_OF))
    total = len(counts) or 1
    average = sum(lengths) / total or 1.0
    frequency: Counter[str] = Counter()
    for count in counts:
        frequency.update(count.keys())
    idf = {t: 10 * math.log(1 + (total - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}
    found: dict[str, list[int]] = {}
    last: dict[str, int] = {}
    for number, count in enumerate(counts):
        norm = K1 * (1 - B + B * lengths[number] / average)
        in_title = titled[number]
        for term, tf in count.items():
            weight = round(idf[term] * tf * (K1 + 1) / (tf + norm))
            if term in in_title:
                weight *= TITLE_BOOST
            weight = 1 if weight < 1 else 999 if weight > 999 else weight
            weight = 2 * weight + (term in in_title)
            posted = found.get(term)
            if posted is None:
                found[term] = [number, weight]
            else:
                posted += (number - last[term], weight)
            last[term] = number
    return found


def successor_pairs(docs: list[Document], successors: Mapping[str, str]) -> list[list[int]]:
    """``[superseded, holder]`` document numbers, from anchors (a superseded entry's anchor,
    the anchor of the entry that now holds): the document whose location ends with it."""
    numbers: dict[str, int] = {}
    for number, doc in enumerate(docs):
        if "#" in doc.location:
            numbers.setdefault(doc.location.split("#", 1)[1], number)
    return [
        [numbers[old], numbers[new]]
        for old, new in successors.items()
        if old in numbers and new in numbers and old != new
    ]


def shard_files(
    docs: list[Document], successors: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Every file of the index, by its path under ``FOLDER``; ``successors`` maps the anchor
    of each superseded entry to the anchor of the entry that now holds."""
    shards: dict[str, dict[str, list[int]]] = {}
    for term, posted in postings(docs).items():
        shards.setdefault(shard_key(term), {})[term] = posted
    files = {
        shard_file(key): f"self.__msShard({_js(key)},{_js(terms)})" for key, terms in shards.items()
    }
    for start in range(0, len(docs), BLOCK):
        rows = [
            [d.location, d.title, d.page_title, trim(d.text, SNIPPET_CHARS)]
            for d in docs[start : start + BLOCK]
        ]
        files[f"d/{start // BLOCK}.js"] = f"self.__msDocs({start // BLOCK},{_js(rows)})"
    meta = {
        "keys": sorted(shards),
        "count": len(docs),
        "block": BLOCK,
        "successors": successor_pairs(docs, successors or {}),
        "groups": {term: sorted(members) for term, members in GROUPS.items()},
    }
    files["keys.js"] = f"self.__msKeys({_js(meta)})"
    return files


def _js(value: object) -> str:
    """A JSON value as JavaScript source that no ``</script>`` or line separator breaks."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def write_index(
    site_dir: Path, *, sharded: bool = True, successors: Mapping[str, str] | None = None
) -> None:
    """Rewrite the built site's search index: trimmed documents, and (``sharded``) the
    shard files, leaving Material's ``search_index.json`` with its configuration only.
    ``successors``: see ``shard_files``."""
    path = site_dir / "search" / "search_index.json"
    if not path.is_file():
        return
    index = json.loads(path.read_text("utf-8"))
    docs = documents(index)
    if sharded:
        folder = site_dir / FOLDER
        for rel, text in shard_files(docs, successors).items():
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, "utf-8")
        index["docs"] = []
    else:
        index["docs"] = [{"location": d.location, "title": d.title, "text": d.text} for d in docs]
    path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), "utf-8")


def read_documents(site_dir: Path) -> list[dict[str, str]]:
    """The documents a built site's search shows (location, title, page title, text), read
    back from the shard files, or from ``search_index.json`` when the site has none."""
    folder = site_dir / FOLDER
    if not (folder / "keys.js").is_file():
        index = json.loads((site_dir / "search" / "search_index.json").read_text("utf-8"))
        return list(index["docs"])
    found = []
    for path in sorted((folder / "d").glob("*.js"), key=lambda p: int(p.stem)):
        source = path.read_text("utf-8")
        rows = json.loads(source[source.index(",") + 1 : -1])
        found += [{"location": r[0], "title": r[1], "page_title": r[2], "text": r[3]} for r in rows]
    return found


def read_terms(site_dir: Path) -> dict[str, list[int]]:
    """Every indexed term of a built site with its document numbers (for tests)."""
    found: dict[str, list[int]] = {}
    for path in (site_dir / FOLDER / "t").glob("*.js"):
        source = path.read_text("utf-8")
        for term, posted in json.loads(source[source.index(",") + 1 : -1]).items():
            numbers, number = [], 0
            for delta in posted[::2]:
                number += delta
                numbers.append(number)
            found[term] = numbers
    return found
