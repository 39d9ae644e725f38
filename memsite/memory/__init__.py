"""``Memory``: the Python API over one memory tree. The CLI is a thin layer over this. It
writes through the store and reads through a read side it composes (``search/facade.py``),
made when first asked: a write loads nothing of search/ but what it uses (issue 35)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CATEGORY, SEARCH_IDS, SUPERSEDES, WHY, NotFound
from ..store import inputs, tree
from ..store.dates import days_before, moment_of
from ..store.format import DECISIONS, LEARNINGS
from ..store.intake import Intake
from ..store.journal import Journal
from ..store.model import Entry, HotContext, Written
from ..store.notes import note_path, render_note, write_note
from ..store.session import hot
from .session import LiveSession, live_module

if TYPE_CHECKING:
    from ..search.facade import SearchFacade


class Memory(LiveSession):
    """A memory tree rooted at ``root`` (``./memory`` by convention).

    Writes take ``at=`` (a datetime, date or ISO-8601 string) to backfill history; without
    it they use ``clock()``. An ``at`` more than a day ahead of ``clock()`` is refused unless
    ``allow_future``, one before 1970 unless ``allow_past``. Secrets are redacted before
    writing unless ``allow_secrets``; each redaction is passed to ``notify`` (and kept in
    ``notices``).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = "memory",
        *,
        author: str | None = None,
        allow_secrets: bool = False,
        allow_future: bool = False,
        allow_past: bool = False,
        notify: Callable[[str], None] | None = None,
        clock: Callable[[], dt.datetime] = dt.datetime.now,
        cache_dir: str | os.PathLike[str] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.root = Path(root)
        # the search index cache (default: $MEMSITE_CACHE, else .memsite/ beside the tree)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._reading: SearchFacade | None = None  # the read side, made on first use
        self.author = author if author is not None else os.environ.get("MEMSITE_AUTHOR") or None
        self.allow_secrets = allow_secrets
        self.allow_future = allow_future
        self.allow_past = allow_past
        self.notify = notify
        self.clock = clock
        self.on_progress = on_progress  # (files read, of how many) while the index is built
        self.notices: list[str] = []

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
        raise NotFound(f"no entry with id {entry_id!r} (find ids with {SEARCH_IDS})")

    def get(self, ref: str) -> Any:
        """One entry by id, hit id or citation (``path#anchor``): a ``Found`` with its full
        markdown, ``status`` and ``superseded_by`` (issue 10)."""
        from ..search.lookup import find

        tree.check_root(self.root)
        return find(self.root, ref)

    def session(self) -> HotContext | None:
        """The live session, or None."""
        tree.check_root(self.root)
        return hot.load(self.root)

    def live_sessions(self) -> list[tuple[str, HotContext]]:
        """Every live session of the tree with its file: ``hot/context.json``, then those of
        Claude Code sessions running beside the first (``hot/sessions/``)."""
        return hot.live_contexts(self.root)

    def latest_decisions(self, limit: int = 5) -> list[Entry]:
        """The newest decisions (reads ``cold/decisions.md`` only, so it stays cheap)."""
        parsed, _ = tree.read_file(self.root, DECISIONS)
        return sorted(parsed.entries, key=lambda e: (e.date, e.line), reverse=True)[:limit]

    @property
    def _reader(self) -> SearchFacade:
        """The read side (``search/facade.py``), made on first use: a write never loads it."""
        if self._reading is None:
            from ..search.facade import SearchFacade

            self._reading = SearchFacade(self.root, self.cache_dir, self._notice, self.on_progress)
        return self._reading

    def close(self) -> None:
        """Close the search index's open files (also done when the object is collected)."""
        if self._reading is not None:
            self._reading.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def index(self, rebuild: bool = False) -> Any:
        """Bring the search index up to date (only changed files are re-read); a ``Refresh``."""
        return self._reader.index(rebuild)

    def search(
        self, query: str, limit: int = 10, kind: str | None = None, tier: str | None = None,
        category: str | None = None, tag: str | None = None, since: str | dt.date | None = None,
        until: str | dt.date | None = None, lexical: bool = False, current: bool = False,
    ) -> list[Any]:  # fmt: skip
        """The best ``limit`` hits (``memsite.search.ranking.Hit``) for a natural-language query.

        Every decision and learning hit carries ``status`` (``current`` or ``superseded``) and,
        when superseded, ``superseded_by`` (the newest entry of its chain); among near-tied
        scores current entries rank first, and ``current=True`` leaves superseded ones out.

        Quoted phrases must occur; when no entry holds one, its words are searched instead
        and each hit's ``phrase_fallback`` names the phrases (issue 36). ``kind:``,
        ``tier:``, ``category:``, ``tag:``, ``date:``, ``since:``, ``until:`` and ``path:``
        in the query filter like the keyword arguments.
        With the ``semantic`` extra installed the ranking also weighs meaning (issue 6);
        ``lexical=True`` ranks by words alone.
        """
        filters = dict(kind=kind, tier=tier, category=category, tag=tag, since=since, until=until)
        return self._reader.search(query, limit, lexical, current, **filters)

    def recall(self, prompt: str, budget: int = 1500, limit: int = 8, lexical: bool = False) -> Any:
        """The memory most relevant to ``prompt`` that fits ``budget`` tokens (``Recalled``:
        ``.markdown`` is the block to inject, ``.hits`` what it holds)."""
        return self._reader.recall(prompt, budget, limit, lexical)

    def prime(
        self, task: str | None = None, budget: int = 40000, lexical: bool = False, *,
        after_compact: bool = False, use_index: bool = True,
    ) -> Any:  # fmt: skip
        """The session-start payload (``Primed``): persona, hot context (with its latest
        checkpoint, which leads ``after_compact``), relevant decisions and learnings, recent
        activity, each capped by its share of ``budget`` tokens."""
        return self._reader.prime(task, budget, lexical, after_compact, use_index)

    def why(self, path: str, budget: int = 1500) -> Any:
        """The memory about a path of the code (``Why``, issue 14): the decisions and
        learnings whose paths govern it (current first, the most specific first), then the
        entries that mention it, within ``budget`` tokens. ``path`` is relative to the
        repository root (or absolute inside it)."""
        return self._reader.why(path, budget)

    def before_edit(self, path: str, budget: int = 1500) -> Any:
        """``why`` for a file an agent is about to edit, when a current decision or learning
        governs it and the live session was not given it yet (then noted there); else None.
        Runs on every edit: the cheap checks come first, the search index is opened only for
        a governed file."""
        return self._reader.before_edit(path, budget)

    def budget(self, window: int = 200_000, task: str | None = None) -> Any:
        """The context budget table (``Budget``) of a ``window``-token context: each tier's
        share and the tokens it would take now, with a warning per tier over its share."""
        return self._reader.budget(window, task)

    def related(self, entry_id: str, limit: int = 5, lexical: bool = False) -> list[Any]:
        """The decisions, learnings and notes most like one entry (Whoosh more-like-this)."""
        # the id checked as ``get`` checks it: empty is a usage error, a huge one is refused
        # before it is echoed whole (the sweep after issue 36); cleaned first, as every
        # query's text is (a lone surrogate is U+FFFD, issue 22)
        entry_id = inputs.one_line(inputs.clean(entry_id), "id")
        return self._reader.related(entry_id, limit, lexical)

    def evaluate(self, queries: str | os.PathLike[str], k: int = 5, lexical: bool = False) -> Any:
        """Recall@k and MRR@10 of this memory's search over a labelled JSON-lines file."""
        return self._reader.evaluate(queries, k, lexical)

    def decide(
        self, title: str, why: str, risk: str | None = None, supersedes: str | None = None,
        tags: Iterable[str] = (), *, body: str | None = None, at: object = None,
        author: str | None = None, paths: Iterable[str] = (), commit: str | None = None,
        paths_from_session: bool = False,
    ) -> Written:  # fmt: skip
        """Append a decision to ``cold/decisions.md``; returns its id, whose
        ``may_supersede`` names the current decisions it may replace (issue 27). ``paths``
        (files, folders, globs relative to the repository root) and ``commit`` name the code it
        governs; ``paths_from_session`` adds the files the live session touched since its
        previous decision (issue 14)."""
        fields = {"why": self._intake.required(why, WHY)}
        if risk is not None and risk.strip():
            fields["risk"] = self._intake.text(risk, "risk")
        if supersedes is not None:
            fields["supersedes"] = self._intake.line(supersedes, SUPERSEDES)
        touched = (
            live_module().files_since_decision(self.root, self._notice)
            if paths_from_session
            else []
        )
        code = self._intake.code(self.root, paths, commit, touched)
        made = self._write_cold(DECISIONS, "decision", title, fields, tags, body, at, author, code)
        from ..search.notices import after_decision  # pure Python: no index, no model

        return after_decision(self.root, made, title, fields, self._notice)

    def learn(
        self, title: str, category: str, why: str | None = None, tags: Iterable[str] = (), *,
        supersedes: str | None = None, body: str | None = None, at: object = None,
        author: str | None = None, paths: Iterable[str] = (), commit: str | None = None,
    ) -> Written:  # fmt: skip
        """Append a learning to ``cold/learnings.md``; returns its id, whose ``repeats`` names
        the learning it repeats, also recorded as its ``Repeats`` (issue 27). ``supersedes``
        names an earlier learning this one corrects (it must exist); ``paths`` and ``commit``
        as for ``decide``."""
        fields = {"category": self._intake.line(category, CATEGORY)}
        if why is not None and why.strip():
            fields["why"] = self._intake.text(why, "why")
        if supersedes is not None:
            fields["supersedes"] = self._intake.line(supersedes, SUPERSEDES)
        code = self._intake.code(self.root, paths, commit)
        from ..search.notices import before_learning  # pure Python: no index, no model

        repeats = before_learning(self.root, title, fields, tags, self._notice)
        made = self._write_cold(LEARNINGS, "learning", title, fields, tags, body, at, author, code)
        return Written(made, repeats=repeats)

    def log(
        self, action: str, details: Mapping[str, str] | None = None, result: str | None = None,
        *, body: str | None = None, at: object = None, author: str | None = None,
        paths: Iterable[str] = (), commit: str | None = None, cut: bool = False,
    ) -> str:  # fmt: skip
        """Append an activity to the day's warm log; returns its id (``paths`` and ``commit``
        as for ``decide``). ``cut``: a detail over the one-line limit is cut (after it is
        redacted) instead of refused, for text from outside such as a harness's command."""
        action = self._intake.line(action, "action")
        clean = self._intake.details(details, cut)
        result = self._intake.text(result, "result")
        body = self._intake.text(body, "body")
        now = self._when(at)
        tree.check_root(self.root)
        code = self._intake.code(self.root, paths, commit)
        author = self._author(author)
        return self._journal.append_activity(now, action, clean, result, body, author, code=code)

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
        write_note(self.root, rel, text)
        return rel

    def prune(self, keep_days: int = 7, *, today: dt.date | None = None) -> list[tuple[str, str]]:
        """Move warm logs older than ``keep_days`` to ``warm/archive/YYYY/``; delete nothing."""
        keep_days = inputs.count(keep_days, "keep_days", 0)
        tree.check_root(self.root)
        today = today or self.clock().date()
        return self._journal.prune(days_before(today, keep_days))

    # The writes themselves live in the store (journal: entries and ids; sessions: the hot
    # context; intake: checking and redaction); Memory picks the moment and the author.

    def _when(self, at: object) -> dt.datetime:
        return moment_of(at, self.clock, self.allow_future, self.allow_past)

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
        self, rel: str, kind: str, title: str, fields: dict[str, str], tags: Iterable[str],
        body: str | None, at: object, author: str | None, code: dict[str, str],
    ) -> str:  # fmt: skip
        title = self._intake.line(title, "title")
        tag_list = [self._intake.tag(t) for t in tags]
        if tag_list:
            fields["tags"] = ", ".join(dict.fromkeys(tag_list))
        fields.update(code)
        author = self._author(author)
        journal = self._journal
        fields.update(journal.author_field(author))
        body = self._intake.text(body, "body")
        now = self._when(at)
        tree.check_root(self.root)
        return journal.write_cold(rel, kind, title, fields, body, now, author)
