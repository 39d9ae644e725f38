"""The read side of the ``Memory`` facade (issue 3; split from ``memsite/memory.py`` in
issue 11, composed rather than inherited since issue 35): thin wrappers over the index,
ranking, recall, prime, the budget table and the evaluation, each imported inside its
method. ``Memory`` makes one of these the first time it reads through the index, so a
write never loads this module, nor anything of search/ it does not use."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..store import inputs, tree
from ..store.inputs import clean


class SearchFacade:
    """What ``Memory`` reads through the search index of the tree at ``root``: the index
    (kept in ``cache_dir``) and the supersession chains, opened on first use; ``notify``
    and ``progress`` are ``Memory``'s. Each method is documented on ``Memory``."""

    def __init__(
        self,
        root: Path,
        cache_dir: Path | None,
        notify: Callable[[str], None],
        progress: Callable[[int, int], None] | None,
    ) -> None:
        self.root = root
        self.cache_dir = cache_dir
        self._notice = notify
        self.on_progress = progress
        self._search_index: Any = None
        self._chains: Any = None

    def _index(self) -> Any:
        if self._search_index is None:
            from .index.cache import SearchIndex

            self._search_index = SearchIndex(
                self.root,
                self.cache_dir,
                notify=self._notice,
                progress=self.on_progress,
                chunker=_chunker(self.root),
            )
            # the index keeps a searcher open between queries; close it with this object
            weakref.finalize(self, self._search_index.close)
        return self._search_index

    def close(self) -> None:
        if self._search_index is not None:
            self._search_index.close()

    def index(self, rebuild: bool = False) -> Any:
        return self._index().refresh(rebuild=rebuild)

    def search(
        self,
        query: str,
        limit: int = 10,
        lexical: bool = False,
        current: bool = False,
        **filters: Any,
    ) -> list[Any]:
        from .history import fold_history, named_first, successors_first
        from .index.documents import ANALYZER
        from .payloads.hits import build_hits
        from .query import make_filters, parse_query, require_something, unquoted
        from .supersession import Chains, settle

        # a query is text, whatever bytes it came from: a lone surrogate or a NUL never
        # reaches a tokenizer, where it once passed for a damaged index (issue 22)
        query = clean(query)
        limit = _limit(limit)
        narrow = make_filters(**filters)  # kind, tier, category, tag, since, until
        parsed = require_something(parse_query(query), narrow, query)
        governs = parsed.filters.governs + narrow.governs
        if governs:  # code paths: narrowed to the entries that govern them, as why finds them
            from .payloads.why import governed_ids

            records = tuple(sorted(governed_ids(self.root, governs)))
            if not records:
                return []
            parsed = dataclasses.replace(
                parsed, filters=dataclasses.replace(parsed.filters, records=records)
            )
        # superseded hits may be dropped: ask for enough that ``limit`` current ones remain
        asked = limit * 2 + 5 if current else limit
        index = self._index()
        hits = build_hits(index.search(parsed, asked, narrow, lexical=lexical), self.root)
        if parsed.phrases and not hits:
            # a phrase no entry holds: its words, said so (issue 36: quotes are words); the
            # filters stay as parsed (a governs: filter's entries included)
            loose = dataclasses.replace(parse_query(unquoted(query)), filters=parsed.filters)
            found = build_hits(index.search(loose, asked, narrow, lexical=lexical), self.root)
            hits = [dataclasses.replace(h, phrase_fallback=parsed.phrases) for h in found]
        self._chains = self._chains or Chains(
            self.root, index.folder.parent / f"{index.folder.name}.chains.json"
        )
        settled = settle(hits, self._chains.current(), limit, current)

        def words(text: str) -> set[str]:
            return {token.text for token in ANALYZER(text)}

        # the entry a query names first among near ties, a session's history never before
        # an entry it lists, a successor never after the entry it replaced (issue 36)
        settled = named_first(
            settled, words(unquoted(parsed.words + " " + " ".join(parsed.phrases))), words
        )
        return successors_first(fold_history(settled))

    def recall(self, prompt: str, budget: int = 1500, limit: int = 8, lexical: bool = False) -> Any:
        from .payloads.recall import fit_recall, site_url
        from .payloads.standing import ROOM, with_one_checkpoint

        prompt, budget, limit = clean(prompt), _budget(budget), _limit(limit)
        from .payloads.floor import covered_enough, relevant_enough
        from .query import parse_query, unquoted
        from .ranking import those_first
        from .supersession import Chains, with_successors

        # quotes are words in recall, never a filter (issue 36): a phrase typed from memory
        # that no entry holds verbatim still finds the entries with its words, and the
        # entries that hold it come first
        phrases = parse_query(prompt).phrases
        quoted, prompt = prompt, unquoted(prompt)

        # an empty prompt recalls nothing, quietly: hooks pass every prompt (issue 13)
        blank = parse_query(prompt).blank
        # room for the checkpoints left out (issue 24): a session's history, not answers
        asked = min(limit + ROOM, inputs.MAX_HITS)
        # recall runs on every prompt: nothing unless the prompt is about the memory (issue
        # 24), by how its words matched and, ranked with meaning, how much closer it is to the
        # memory than to everyday requests
        hits = [] if blank else self.search(prompt, limit=asked, lexical=True)
        if not lexical and covered_enough(hits):  # below it, no model is loaded
            hits = self.search(prompt, limit=asked, lexical=False)
        if not relevant_enough(hits):
            hits = []
        if phrases and hits:
            held = self.search(quoted, limit=asked, lexical=True)
            hits = those_first(hits, (h.id for h in held if not h.phrase_fallback))
        hits = with_one_checkpoint(self.root, prompt, hits, limit)
        # a superseded decision never comes alone: the one that holds comes first
        self._chains = self._chains or Chains(self.root)
        hits = with_successors(self._chains, hits, self._index().records)
        return fit_recall(hits, budget, site_url(self.root), self.root)

    def prime(
        self, task: str | None, budget: int, lexical: bool, after_compact: bool, use_index: bool
    ) -> Any:
        from .payloads.priming import prime

        task, budget = (clean(task) if task is not None else None), _budget(budget)
        tree.check_root(self.root)
        return prime(
            self.root, task, budget, self.search, self._notice, lexical, after_compact, use_index
        )

    def why(self, path: str, budget: int = 1500) -> Any:
        from .payloads.why import why

        budget = _budget(budget)
        tree.check_root(self.root)
        return why(self.root, path, budget, self.search)

    def before_edit(self, path: str, budget: int = 1500) -> Any:
        from ..store.session.hot import load, remember_recall
        from .payloads.why import Governance, may_govern, target, why

        tree.check_root(self.root)
        context = load(self.root)
        try:
            wanted = target(self.root, path)
        except InvalidInput:
            return None  # a file outside the repository: no entry can govern it
        given = context is not None and inputs.escaped(wanted) in context.recalled
        if context is None or given or not may_govern(self.root, wanted):
            return None
        governing = Governance(self.root).items(wanted)
        if not any(i.hit.status == "current" for i in governing):
            return None
        budget = _budget(budget)
        found = why(self.root, wanted, budget, self.search, governing)
        if not remember_recall(self.root, found.path):
            return None
        return found

    def budget(self, window: int = 200_000, task: str | None = None) -> Any:
        from .payloads.budget import shares, table

        window = inputs.count(window, "window", 1, inputs.MAX_TOKENS)
        given = shares(self.root)  # a broken memsite.toml is refused before the index opens
        return table(window, given, self.prime(task, inputs.MAX_TOKENS, False, False, True))

    def related(self, entry_id: str, limit: int = 5, lexical: bool = False) -> list[Any]:
        limit = _limit(limit)
        return self._index().related(clean(entry_id), limit, lexical=lexical)

    def evaluate(self, queries: str | os.PathLike[str], k: int = 5, lexical: bool = False) -> Any:
        from .evaluation.tree import evaluate_tree

        k = _limit(k, "k")
        return evaluate_tree(
            self.root,
            Path(queries),
            lambda q: self.search(q, limit=max(k, 10), lexical=lexical),
            k,
        )


def _chunker(root: Path) -> Callable[..., list[Any]]:
    """``chunk_file``, with each decision record dated as the tree reads it (issue 26): a
    record without a date of its own takes the day git first saw it, not its file's."""
    from ..store.records import is_record_path, read_records
    from .chunks import chunk_file

    dates: dict[str, dt.date | None] = {}

    def chunker(path: str, text: str, *, fallback_date: dt.date | None = None) -> list[Any]:
        if is_record_path(path) and path not in dates:
            dates.update({entry.path: entry.date for entry in read_records(root).entries})
            dates.setdefault(path, None)  # a record skipped: read again only when it changes
        day = dates.get(path) if is_record_path(path) else None
        return chunk_file(path, text, fallback_date=day or fallback_date)

    return chunker


def _budget(budget: object) -> int:
    """A token budget of ``recall``, ``prime`` and ``why``: from 1 to ``MAX_TOKENS``."""
    return inputs.count(budget, "budget", 1, inputs.MAX_TOKENS)


def _limit(limit: object, name: str = "limit") -> int:
    """How many hits to return: from 1 to ``MAX_HITS``."""
    return inputs.count(limit, name, 1, inputs.MAX_HITS)
