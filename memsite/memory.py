"""``Memory``: the Python API over one memory tree. The CLI is a thin layer over this."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .errors import InvalidInput, NotFound
from .store import hot, sessions, storage, tree
from .store.dates import days_before, moment_of
from .store.format import DECISIONS, LEARNINGS
from .store.intake import Intake
from .store.journal import Journal
from .store.markup import slugify
from .store.model import Entry, HotContext
from .store.notes import note_path, render_note
from .store.sessions import SessionStart


class Memory:
    """A memory tree rooted at ``root`` (``./memory`` by convention).

    Writes take ``at=`` (a datetime, date or ISO-8601 string) to backfill history; without
    it they use ``clock()``. An ``at`` more than a day ahead of ``clock()`` is refused unless
    ``allow_future``. Secrets are redacted before writing unless ``allow_secrets``; each
    redaction is passed to ``notify`` (and kept in ``notices``).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = "memory",
        *,
        author: str | None = None,
        allow_secrets: bool = False,
        allow_future: bool = False,
        notify: Callable[[str], None] | None = None,
        clock: Callable[[], dt.datetime] = dt.datetime.now,
        cache_dir: str | os.PathLike[str] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.root = Path(root)
        # the search index cache (default: $MEMSITE_CACHE, else .memsite/ beside the tree)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._search_index: Any = None
        self._chains: Any = None
        self.author = author if author is not None else os.environ.get("MEMSITE_AUTHOR") or None
        self.allow_secrets = allow_secrets
        self.allow_future = allow_future
        self.notify = notify
        self.clock = clock
        self.on_progress = on_progress  # (files read, of how many) while the index is built
        self.notices: list[str] = []

    # -- reading ---------------------------------------------------------------------

    def entries(self, kind: str | None = None) -> list[Entry]:
        """Every entry of the tree (decisions, learnings, activities, notes; not the persona)."""
        read = self.read()
        return [e for e in read.parsed.entries if kind is None or e.kind == kind]

    def read(self) -> tree.TreeRead:
        """Entries, problems and file texts in one pass; unreadable files become problems."""
        tree.check_root(self.root)
        read = tree.read_tree(self.root)
        for problem in read.parsed.problems:
            if "skipped" in problem.message:
                self._notice(f"warning: {problem.path}:{problem.line}: {problem.message}")
        return read

    def entry(self, entry_id: str) -> Entry:
        for entry in self.entries():
            if entry.id == entry_id:
                return entry
        raise NotFound(f"no entry with id {entry_id!r} (list ids with 'memsite search')")

    def get(self, ref: str) -> Any:
        """One entry by id, hit id or citation (``path#anchor``): a ``Found`` with its full
        markdown, ``status`` and ``superseded_by`` (issue 10)."""
        from .search.lookup import find

        tree.check_root(self.root)
        return find(self.root, ref)

    def session(self) -> HotContext | None:
        """The live session, or None."""
        tree.check_root(self.root)
        return hot.load(self.root)

    def latest_decisions(self, limit: int = 5) -> list[Entry]:
        """The newest decisions (reads ``cold/decisions.md`` only, so it stays cheap)."""
        parsed, _ = tree.read_file(self.root, DECISIONS)
        return sorted(parsed.entries, key=lambda e: (e.date, e.line), reverse=True)[:limit]

    # -- sessions --------------------------------------------------------------------

    def start_session(
        self, task: str, session_id: str | None = None, *, at: object = None
    ) -> SessionStart:
        """Start a session; an unfinished one still in ``hot/`` is archived to warm first."""
        task = self._intake.line(task, "task")
        now = self._when(at)
        sid = (
            self._intake.line(session_id, "session id")
            if session_id is not None
            else (f"{now:%Y%m%d-%H%M%S}-{slugify(task, 32)}")
        )
        tree.check_root(self.root)
        return sessions.start(self._journal, sid, task, now, chosen=session_id is not None)

    def end_session(self, summary: str | None = None, *, at: object = None) -> str:
        """Archive the live session into the warm log and clear ``hot/``; returns the log id."""
        now = self._when(at)
        summary = self._intake.text(summary, "summary")
        tree.check_root(self.root)
        return sessions.end(self._journal, summary, now)

    def progress(self, step: str, files: Iterable[str] = (), *, at: object = None) -> str:
        """Record the current step (and files touched) in hot and in the warm log."""
        step = self._intake.line(step, "step")
        files = [self._intake.line(name, "file") for name in files]
        now = self._when(at)
        tree.check_root(self.root)
        return sessions.progress(self._journal, step, files, now)

    def pending_add(self, text: str, *, at: object = None) -> list[str]:
        text = self._intake.line(text, "pending action")
        now = self._when(at)
        tree.check_root(self.root)
        return sessions.pending_add(self._journal, text, now)

    def pending_done(self, text: str, *, at: object = None) -> list[str]:
        """Mark a pending action done (exact text, or a unique part of it); it is logged to warm."""
        text = self._intake.line(text, "pending action")
        now = self._when(at)
        tree.check_root(self.root)
        return sessions.pending_done(self._journal, text, now)

    # -- entries ---------------------------------------------------------------------

    def decide(
        self,
        title: str,
        why: str,
        risk: str | None = None,
        supersedes: str | None = None,
        tags: Iterable[str] = (),
        *,
        body: str | None = None,
        at: object = None,
        author: str | None = None,
    ) -> str:
        """Append a decision to ``cold/decisions.md``; returns its id."""
        fields = {"why": self._intake.required(why, "--why")}
        if risk is not None and risk.strip():
            fields["risk"] = self._intake.text(risk, "risk")
        if supersedes is not None:
            fields["supersedes"] = self._intake.line(supersedes, "--supersedes")
        return self._write_cold(DECISIONS, "decision", title, fields, tags, body, at, author)

    def learn(
        self,
        title: str,
        category: str,
        why: str | None = None,
        tags: Iterable[str] = (),
        *,
        supersedes: str | None = None,
        body: str | None = None,
        at: object = None,
        author: str | None = None,
    ) -> str:
        """Append a learning to ``cold/learnings.md``; returns its id. ``supersedes`` names an
        earlier learning this one corrects (it must exist)."""
        fields = {"category": self._intake.line(category, "--category")}
        if why is not None and why.strip():
            fields["why"] = self._intake.text(why, "why")
        if supersedes is not None:
            fields["supersedes"] = self._intake.line(supersedes, "--supersedes")
        return self._write_cold(LEARNINGS, "learning", title, fields, tags, body, at, author)

    def log(
        self,
        action: str,
        details: Mapping[str, str] | None = None,
        result: str | None = None,
        *,
        body: str | None = None,
        at: object = None,
        author: str | None = None,
    ) -> str:
        """Append an activity to the day's warm log; returns its id."""
        action = self._intake.line(action, "action")
        clean = {
            self._intake.detail_key(k): self._intake.line(v, f"detail {k!r}")
            if str(v).strip()
            else ""
            for k, v in (details or {}).items()
        }
        result = self._intake.text(result, "result")
        body = self._intake.text(body, "body")
        now = self._when(at)
        tree.check_root(self.root)
        return self._journal.append_activity(now, action, clean, result, body, self._author(author))

    def note(
        self, title: str, body: str | None = None, *, at: object = None, author: str | None = None
    ) -> str:
        """Create ``notes/<slug of title>.md`` (never over an existing file); returns its path
        relative to the root. The body is free markdown, redacted and limited like an entry's."""
        title = self._intake.line(title, "title")
        body = self._intake.text(body, "body")
        text = render_note(title, self._when(at).date(), body, self._author(author))
        rel = note_path(title)
        tree.check_root(self.root)
        try:
            storage.create(self.root, self.root / rel, text)
        except FileExistsError:
            raise InvalidInput(
                f"{self.root / rel} already exists; give the note another title, or edit it"
            ) from None
        return rel

    # -- maintenance -----------------------------------------------------------------

    def prune(self, keep_days: int = 7, *, today: dt.date | None = None) -> list[tuple[str, str]]:
        """Move warm logs older than ``keep_days`` to ``warm/archive/YYYY/``; delete nothing."""
        if keep_days < 0:
            raise InvalidInput("--keep-days must be 0 or more")
        tree.check_root(self.root)
        today = today or self.clock().date()
        return self._journal.prune(days_before(today, keep_days))

    # -- internals -------------------------------------------------------------------
    # The writes themselves live in the store (journal: entries and ids; sessions: the hot
    # context; intake: checking and redaction); Memory picks the moment and the author.

    def _when(self, at: object) -> dt.datetime:
        return moment_of(at, self.clock, self.allow_future)

    def _notice(self, message: str) -> None:
        self.notices.append(message)
        if self.notify is not None:
            self.notify(message)

    @property
    def _intake(self) -> Intake:
        # built per call so that changing ``allow_secrets`` or ``notify`` later still counts
        return Intake(self.allow_secrets, self._notice)

    @property
    def _journal(self) -> Journal:
        return Journal(self.root, self._author(None), self._notice)

    def _author(self, author: str | None) -> str | None:
        """The author to sign with, redacted like every other text written (issue 15.5)."""
        name = author if author is not None else self.author
        return self._intake.line(name, "author") if name else name

    def _write_cold(
        self,
        rel: str,
        kind: str,
        title: str,
        fields: dict[str, str],
        tags: Iterable[str],
        body: str | None,
        at: object,
        author: str | None,
    ) -> str:
        title = self._intake.line(title, "title")
        tag_list = [self._intake.tag(t) for t in tags]
        if tag_list:
            fields["tags"] = ", ".join(dict.fromkeys(tag_list))
        author = self._author(author)
        journal = self._journal
        fields.update(journal.author_field(author))
        body = self._intake.text(body, "body")
        now = self._when(at)
        tree.check_root(self.root)
        return journal.write_cold(rel, kind, title, fields, body, now, author)

    # -- search and recall (issue 3) -------------------------------------------------
    # Thin wrappers: the work is in search/ (index, ranking, recall, priming,
    # tree_evaluation), imported here lazily so that writes never load Whoosh.

    def _index(self) -> Any:
        if self._search_index is None:
            import weakref

            from .search.index import SearchIndex

            self._search_index = SearchIndex(
                self.root, self.cache_dir, notify=self._notice, progress=self.on_progress
            )
            # the index keeps a searcher open between queries; close it with this object
            weakref.finalize(self, self._search_index.close)
        return self._search_index

    def close(self) -> None:
        """Close the search index's open files (also done when the object is collected)."""
        if self._search_index is not None:
            self._search_index.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def index(self, rebuild: bool = False) -> Any:
        """Bring the search index up to date (only changed files are re-read); a ``Refresh``."""
        return self._index().refresh(rebuild=rebuild)

    def search(
        self,
        query: str,
        limit: int = 10,
        kind: str | None = None,
        tier: str | None = None,
        category: str | None = None,
        tag: str | None = None,
        since: str | dt.date | None = None,
        until: str | dt.date | None = None,
        lexical: bool = False,
        current: bool = False,
    ) -> list[Any]:
        """The best ``limit`` hits (``memsite.search.ranking.Hit``) for a natural-language query.

        Every decision and learning hit carries ``status`` (``current`` or ``superseded``) and,
        when superseded, ``superseded_by`` (the newest entry of its chain); among near-tied
        scores current entries rank first, and ``current=True`` leaves superseded ones out.

        Quoted phrases must occur; ``kind:``, ``tier:``, ``category:``, ``tag:``, ``date:``,
        ``since:``, ``until:`` and ``path:`` in the query filter like the keyword arguments.
        With the ``semantic`` extra installed the ranking also weighs meaning (issue 6);
        ``lexical=True`` ranks by words alone.
        """
        from .search.query import make_filters, parse_query, require_something
        from .search.supersession import Chains, settle

        if limit < 1:
            raise InvalidInput("limit must be 1 or more")
        filters = make_filters(
            kind=kind, tier=tier, category=category, tag=tag, since=since, until=until
        )
        parsed = require_something(parse_query(query), filters, query)
        # superseded hits may be dropped: ask for enough that ``limit`` current ones remain
        asked = limit * 2 + 5 if current else limit
        hits = self._index().search(parsed, asked, filters, lexical=lexical)
        self._chains = self._chains or Chains(self.root)
        return settle(hits, self._chains.current(), limit, current)

    def recall(self, prompt: str, budget: int = 1500, limit: int = 8, lexical: bool = False) -> Any:
        """The memory most relevant to ``prompt`` that fits ``budget`` tokens (``Recalled``:
        ``.markdown`` is the block to inject, ``.hits`` what it holds)."""
        from .search.recall import fit_recall, site_url

        if budget < 1:
            raise InvalidInput("budget must be 1 token or more")
        from .search.query import parse_query
        from .search.supersession import with_successors

        # an empty prompt recalls nothing, quietly: hooks pass every prompt (issue 13)
        blank = parse_query(prompt).blank
        hits = [] if blank else self.search(prompt, limit=limit, lexical=lexical)
        # a superseded decision never comes alone: the one that holds comes first
        hits = with_successors(self.root, hits)
        return fit_recall(hits, budget, site_url(self.root))

    def prime(self, task: str | None = None, budget: int = 40000, lexical: bool = False) -> Any:
        """The session-start payload (``Primed``): persona, hot context, relevant decisions
        and learnings, recent activity, each capped by its share of ``budget`` tokens."""
        from .search.priming import prime

        if budget < 1:
            raise InvalidInput("budget must be 1 token or more")
        tree.check_root(self.root)
        return prime(self.root, task, budget, self.search, self._notice, lexical)

    def related(self, entry_id: str, limit: int = 5, lexical: bool = False) -> list[Any]:
        """The decisions, learnings and notes most like one entry (Whoosh more-like-this)."""
        if limit < 1:
            raise InvalidInput("limit must be 1 or more")
        return self._index().related(entry_id, limit, lexical=lexical)

    def evaluate(self, queries: str | os.PathLike[str], k: int = 5, lexical: bool = False) -> Any:
        """Recall@k and MRR@10 of this memory's search over a labelled JSON-lines file."""
        from .search.tree_evaluation import evaluate_tree

        return evaluate_tree(
            self.root,
            Path(queries),
            lambda q: self.search(q, limit=max(k, 10), lexical=lexical),
            k,
        )
