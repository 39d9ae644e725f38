"""``Memory``: the Python API over one memory tree. The CLI is a thin layer over this."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InvalidInput, NotFound
from .store import hot, inputs, storage, tree
from .store.dates import parse_at
from .store.format import DECISIONS, LEARNINGS, next_free_id, parse_entries, render_entry
from .store.markup import slugify
from .store.model import Entry, HotContext
from .store.redact import redact

_STORED_ID = re.compile(r"^(?:<!-- id: (\S+) -->|[-*+] \*\*Id:\*\* ?(.*))$", re.MULTILINE)
_ENTRY_HEADING = re.compile(r"^ {0,3}#{2,3}[ \t]", re.MULTILINE)


@dataclass(frozen=True)
class SessionStart:
    """What ``start_session`` did: the new context and any unfinished session it archived."""

    context: HotContext
    archived: HotContext | None = None
    archived_id: str | None = None


def _when(at: dt.datetime | dt.date | str | None, clock: Callable[[], dt.datetime]) -> dt.datetime:
    if at is None:
        return clock().replace(microsecond=0)
    if isinstance(at, str):
        return parse_at(at)
    if isinstance(at, dt.datetime):
        moment = at.astimezone().replace(tzinfo=None) if at.tzinfo else at
        return moment.replace(microsecond=0)
    return dt.datetime.combine(at, dt.time(12, 0))


class Memory:
    """A memory tree rooted at ``root`` (``./memory`` by convention).

    Writes take ``at=`` (a datetime, date or ISO-8601 string) to backfill history; without
    it they use ``clock()``. Secrets are redacted before writing unless ``allow_secrets``;
    each redaction is passed to ``notify`` (and kept in ``notices``).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = "memory",
        *,
        author: str | None = None,
        allow_secrets: bool = False,
        notify: Callable[[str], None] | None = None,
        clock: Callable[[], dt.datetime] = dt.datetime.now,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.root = Path(root)
        # the search index cache (default: $MEMSITE_CACHE, else .memsite/ beside the tree)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._search_index: Any = None
        self.author = author if author is not None else os.environ.get("MEMSITE_AUTHOR") or None
        self.allow_secrets = allow_secrets
        self.notify = notify
        self.clock = clock
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
        task = self._clean_line(task, "task")
        now = _when(at, self.clock)  # type: ignore[arg-type]
        sid = (
            inputs.one_line(session_id, "session id")
            if session_id is not None
            else (f"{now:%Y%m%d-%H%M%S}-{slugify(task, 32)}")
        )
        tree.check_root(self.root)
        with storage.lock(self.root / hot.LOCK):
            previous = hot.load(self.root)
            archived_id = None
            if previous is not None:
                archived_id = self._archive(previous, now, "session archived", None)
            context = HotContext(
                session_id=sid,
                task=task,
                started=now.isoformat(),
                updated=now.isoformat(),
                pending_actions=list(previous.pending_actions) if previous else [],
            )
            hot.save(self.root, context)
        return SessionStart(context, previous, archived_id)

    def end_session(self, summary: str | None = None, *, at: object = None) -> str:
        """Archive the live session into the warm log and clear ``hot/``; returns the log id."""
        now = _when(at, self.clock)  # type: ignore[arg-type]
        summary = self._clean_text(summary, "summary")
        tree.check_root(self.root)
        with storage.lock(self.root / hot.LOCK):
            context = self._require_session()
            entry_id = self._archive(context, now, "session end", summary)
            hot.clear(self.root)
        return entry_id

    def progress(self, step: str, files: Iterable[str] = (), *, at: object = None) -> str:
        """Record the current step (and files touched) in hot and in the warm log."""
        step = self._clean_line(step, "step")
        files = [inputs.one_line(name, "file") for name in files]
        now = _when(at, self.clock)  # type: ignore[arg-type]
        tree.check_root(self.root)
        with storage.lock(self.root / hot.LOCK):
            context = self._require_session()
            context.current_step = step
            context.files_modified += [f for f in files if f not in context.files_modified]
            context.updated = now.isoformat()
            details = {"files": ", ".join(files)} if files else {}
            entry_id = self._append_activity(
                now, "progress", details, step, "", about=f"progress {step}"
            )
            hot.save(self.root, context)
        return entry_id

    def pending_add(self, text: str, *, at: object = None) -> list[str]:
        text = self._clean_line(text, "pending action")
        now = _when(at, self.clock)  # type: ignore[arg-type]
        tree.check_root(self.root)
        with storage.lock(self.root / hot.LOCK):
            context = self._require_session()
            if text not in context.pending_actions:
                context.pending_actions.append(text)
            context.updated = now.isoformat()
            hot.save(self.root, context)
            return list(context.pending_actions)

    def pending_done(self, text: str, *, at: object = None) -> list[str]:
        """Mark a pending action done (exact text, or a unique part of it); it is logged to warm."""
        text = self._clean_line(text, "pending action")
        now = _when(at, self.clock)  # type: ignore[arg-type]
        tree.check_root(self.root)
        with storage.lock(self.root / hot.LOCK):
            context = self._require_session()
            matches = [p for p in context.pending_actions if p == text] or [
                p for p in context.pending_actions if text.casefold() in p.casefold()
            ]
            if len(matches) != 1:
                listed = "; ".join(context.pending_actions) or "none"
                problem = "matches several" if matches else "matches no"
                raise NotFound(f"{text!r} {problem} pending action (pending: {listed})")
            context.pending_actions.remove(matches[0])
            context.updated = now.isoformat()
            self._append_activity(
                now, "pending done", {}, matches[0], "", about=f"done {matches[0]}"
            )
            hot.save(self.root, context)
            return list(context.pending_actions)

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
        fields = {"why": self._required_text(why, "--why")}
        if risk is not None and risk.strip():
            fields["risk"] = self._clean_text(risk, "risk")
        if supersedes is not None:
            fields["supersedes"] = inputs.one_line(supersedes, "--supersedes")
        return self._write_cold(DECISIONS, "decision", title, fields, tags, body, at, author)

    def learn(
        self,
        title: str,
        category: str,
        why: str | None = None,
        tags: Iterable[str] = (),
        *,
        body: str | None = None,
        at: object = None,
        author: str | None = None,
    ) -> str:
        """Append a learning to ``cold/learnings.md``; returns its id."""
        fields = {"category": self._clean_line(category, "--category")}
        if why is not None and why.strip():
            fields["why"] = self._clean_text(why, "why")
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
        action = self._clean_line(action, "action")
        clean = {
            inputs.detail_key(k): self._clean_line(v, f"detail {k!r}") if str(v).strip() else ""
            for k, v in (details or {}).items()
        }
        result = self._clean_text(result, "result")
        body = self._clean_text(body, "body")
        now = _when(at, self.clock)  # type: ignore[arg-type]
        tree.check_root(self.root)
        return self._append_activity(now, action, clean, result, body, author)

    # -- maintenance -----------------------------------------------------------------

    def prune(self, keep_days: int = 7, *, today: dt.date | None = None) -> list[tuple[str, str]]:
        """Move warm logs older than ``keep_days`` to ``warm/archive/YYYY/``; delete nothing."""
        if keep_days < 0:
            raise InvalidInput("--keep-days must be 0 or more")
        tree.check_root(self.root)
        today = today or self.clock().date()
        cutoff = today - dt.timedelta(days=keep_days)
        warm = self.root / "warm"
        if not warm.is_dir():
            return []
        with storage.lock(warm):  # no day-log append runs while logs move (_append_activity)
            return self._move_logs(warm, cutoff)

    def _move_logs(self, warm: Path, cutoff: dt.date) -> list[tuple[str, str]]:
        moved = []
        for path in sorted(warm.glob("????-??-??.md")):
            try:
                day = dt.date.fromisoformat(path.stem)
            except ValueError:
                continue
            if day >= cutoff or path.is_symlink():
                continue
            target = warm / "archive" / f"{day.year:04d}" / path.name
            if target.exists():
                self._notice(
                    f"{target.relative_to(self.root)} already exists; left {path.name} in place"
                )
                continue
            storage.move(self.root, path, target)
            moved.append(
                (path.relative_to(self.root).as_posix(), target.relative_to(self.root).as_posix())
            )
        return moved

    # -- internals -------------------------------------------------------------------

    def _notice(self, message: str) -> None:
        self.notices.append(message)
        if self.notify is not None:
            self.notify(message)

    def _redact(self, text: str, name: str) -> str:
        if self.allow_secrets or not text:
            return text
        clean, found = redact(text)
        if found:
            kinds = ", ".join(sorted({item.kind for item in found}))
            self._notice(
                f"redacted {len(found)} secret(s) in {name} ({kinds}); pass --allow-secrets to keep them"
            )
        return clean

    def _clean_line(self, value: str | None, name: str) -> str:
        return self._redact(inputs.one_line(value, name), name)

    def _clean_text(self, value: str | None, name: str) -> str:
        return self._redact(inputs.multi_line(value, name), name)

    def _required_text(self, value: str | None, name: str) -> str:
        text = self._clean_text(value, name)
        if not text:
            raise InvalidInput(f"{name} is empty: say why")
        return text

    def _require_session(self) -> HotContext:
        context = hot.load(self.root)
        if context is None:
            raise NotFound("no active session (start one with 'memsite session start TASK')")
        return context

    def _author_field(self, author: str | None) -> dict[str, str]:
        name = author if author is not None else self.author
        return {"author": inputs.one_line(name, "author")} if name else {}

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
        title = self._clean_line(title, "title")
        tag_list = [inputs.tag(t) for t in tags]
        if tag_list:
            fields["tags"] = ", ".join(dict.fromkeys(tag_list))
        fields.update(self._author_field(author))
        body = self._clean_text(body, "body")
        now = _when(at, self.clock)  # type: ignore[arg-type]
        tree.check_root(self.root)
        supersedes = fields.get("supersedes")
        written: dict[str, str] = {}
        base = f"{now.date().isoformat()}-{slugify(title)}"
        beside = self._ids_beside(rel, now.date(), base)

        def compose(current: str) -> str:
            taken = _ids_in(current, rel)
            if supersedes is not None and supersedes not in taken:
                raise NotFound(f"--supersedes {supersedes!r}: no decision with that id in {rel}")
            entry_id = next_free_id(base, taken | beside)
            written["id"] = entry_id
            entry = Entry(entry_id, kind, "cold", title, now.date(), fields=fields, body=body)
            head = (
                ""
                if current.strip()
                else "# Decisions\n\n"
                if kind == "decision"
                else "# Learnings\n\n"
            )
            return head + render_entry(entry)

        storage.append(self.root, self.root / rel, compose)
        entry_id = written["id"]
        self._append_activity(
            now, kind, {kind: entry_id, "title": title}, "", "", author, about=f"{kind} {title}"
        )
        if kind == "decision":
            with storage.lock(self.root / hot.LOCK):
                try:
                    context = hot.load(self.root)
                except hot.BrokenContext as err:
                    self._notice(str(err))
                    context = None
                if context is not None:
                    context.decisions.append(entry_id)
                    context.updated = now.isoformat()
                    hot.save(self.root, context)
        return entry_id

    def _ids_beside(self, rel: str, day: dt.date, base: str) -> set[str]:
        """Ids ``base`` or ``base-N`` already stored in the other files whose ids share the
        namespace of ``rel`` (the two cold files and the day log), so a decision, a learning
        and an activity with the same title on the same day get distinct ids. Found by plain
        substring search: this runs on every write, and cold files grow large."""
        taken: set[str] = set()
        for other in (DECISIONS, LEARNINGS, tree.day_log(self.root, day).relative_to(self.root)):
            if Path(other).as_posix() == rel:
                continue
            try:
                text = (self.root / other).read_text("utf-8", errors="replace")
            except OSError:
                continue
            for marker in ("<!-- id: ", "**Id:** "):
                at = text.find(marker + base)
                while at != -1:
                    end = text.find("\n", at)
                    line = text[at + len(marker) : end if end != -1 else len(text)]
                    taken.add(line.removesuffix("-->").strip())
                    at = text.find(marker + base, at + 1)
        return taken

    def _append_activity(
        self,
        now: dt.datetime,
        action: str,
        details: dict[str, str],
        result: str,
        body: str,
        author: str | None = None,
        about: str | None = None,
    ) -> str:
        """Append one activity; its id is the date plus the slug of ``about`` (else the action).

        memsite's own activities (pointers, progress, session archives) pass ``about`` so that
        their ids say what they point at and two branches don't mint the same id.
        """
        # prune moves day logs while it holds warm/ exclusively: choosing the day log and
        # appending under a shared hold means an entry never lands in a fresh copy of a log
        # that prune just archived
        with storage.lock(self.root / "warm", shared=True):
            path = tree.day_log(self.root, now.date())
            rel = path.relative_to(self.root).as_posix()
            fields = self._author_field(author)
            written: dict[str, str] = {}
            base = f"{now.date().isoformat()}-{slugify(about or action)}"
            beside = self._ids_beside(rel, now.date(), base)

            def compose(current: str) -> str:
                entry_id = next_free_id(base, _ids_in(current, rel) | beside)
                written["id"] = entry_id
                entry = Entry(
                    entry_id,
                    "activity",
                    "warm",
                    action,
                    now.date(),
                    now.time(),
                    fields,
                    body=body,
                    details=details,
                    result=result,
                )
                head = "" if current.strip() else f"# {now.date().isoformat()}\n\n"
                return head + render_entry(entry)

            storage.append(self.root, path, compose)
            return written["id"]

    def _archive(
        self, context: HotContext, now: dt.datetime, action: str, summary: str | None
    ) -> str:
        """Write a session into the warm log once (a retry after a crash finds it there)."""
        for day in {now.date(), _day_of(context.updated)} - {None}:
            path = tree.day_log(self.root, day)  # type: ignore[arg-type]
            if path.exists():
                rel = path.relative_to(self.root).as_posix()
                for entry in parse_entries(path.read_text("utf-8", errors="replace"), rel).entries:
                    if entry.details.get(
                        "session_id"
                    ) == context.session_id and entry.title.startswith("session"):
                        return entry.id
        details = {
            "session_id": context.session_id,
            "task": context.task,
            "started": context.started,
            "updated": context.updated,
        }
        if context.current_step:
            details["current_step"] = context.current_step
        lines = []
        for title, items in (
            ("Files modified", [f"`{f}`" for f in context.files_modified]),
            ("Decisions", context.decisions),
            ("Pending", context.pending_actions),
        ):
            if items:
                lines += [f"**{title}:**", *[f"- {item}" for item in items], ""]
        body = "\n".join(lines).strip()
        about = f"{action} {context.session_id}"
        return self._append_activity(now, action, details, summary or "", body, about=about)

    # -- search and recall (issue 3) -------------------------------------------------
    # Thin wrappers: the work is in index.py (Whoosh), ranking.py, recall.py and
    # evaluation.py, imported here lazily so that writes never load Whoosh.

    def _index(self) -> Any:
        if self._search_index is None:
            import weakref

            from .search.index import SearchIndex

            self._search_index = SearchIndex(self.root, self.cache_dir, notify=self._notice)
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
    ) -> list[Any]:
        """The best ``limit`` hits (``memsite.search.ranking.Hit``) for a natural-language query.

        Quoted phrases must occur; ``kind:``, ``tier:``, ``category:``, ``tag:``, ``date:``,
        ``since:``, ``until:`` and ``path:`` in the query filter like the keyword arguments.
        With the ``semantic`` extra installed the ranking also weighs meaning (issue 6);
        ``lexical=True`` ranks by words alone.
        """
        from .search.query import make_filters, parse_query

        if limit < 1:
            raise InvalidInput("limit must be 1 or more")
        filters = make_filters(
            kind=kind, tier=tier, category=category, tag=tag, since=since, until=until
        )
        return self._index().search(parse_query(query), limit, filters, lexical=lexical)

    def recall(self, prompt: str, budget: int = 1500, limit: int = 8, lexical: bool = False) -> Any:
        """The memory most relevant to ``prompt`` that fits ``budget`` tokens (``Recalled``:
        ``.markdown`` is the block to inject, ``.hits`` what it holds)."""
        from .search.recall import fit_recall, site_url

        if budget < 1:
            raise InvalidInput("budget must be 1 token or more")
        hits = self.search(prompt, limit=limit, lexical=lexical) if prompt.strip() else []
        return fit_recall(hits, budget, site_url(self.root))

    def prime(self, task: str | None = None, budget: int = 40000, lexical: bool = False) -> Any:
        """The session-start payload (``Primed``): persona, hot context, relevant decisions
        and learnings, recent activity, each capped by its share of ``budget`` tokens."""
        from .search.chunks import chunk_file
        from .search.ranking import Span, span_hit
        from .search.recall import ACTIVITY_DAYS, PrimeInputs, render_prime, site_url
        from .store.format import PERSONA

        if budget < 1:
            raise InvalidInput("budget must be 1 token or more")
        tree.check_root(self.root)
        persona_path = self.root / PERSONA
        persona = persona_path.read_text("utf-8") if persona_path.is_file() else ""
        try:
            context = hot.load(self.root)
        except hot.BrokenContext as err:
            self._notice(str(err))
            context = None
        topic = (task or (context.task if context else "")).strip()
        decisions = self.search(topic, 10, "decision", lexical=lexical) if topic else []
        learnings = self.search(topic, 10, "learning", lexical=lexical) if topic else []
        if not topic:
            decisions = self.search("", limit=10, kind="decision")
            learnings = self.search("", limit=10, kind="learning")
        logs = sorted(
            [
                *self.root.glob("warm/????-??-??.md"),
                *self.root.glob("warm/archive/*/????-??-??.md"),
            ],
            key=lambda p: p.name,
            reverse=True,
        )[:ACTIVITY_DAYS]
        activity = []
        for path in logs:
            rel = path.relative_to(self.root).as_posix()
            chunks = chunk_file(rel, path.read_text("utf-8", errors="replace"))
            activity += [span_hit(Span((c,), c, 0.0)) for c in chunks if c.kind == "activity"]
        activity.sort(key=lambda h: (h.date, h.time or dt.time()), reverse=True)
        inputs = PrimeInputs(
            persona=persona,
            hot=hot.render(context) if context else "",
            decisions=decisions,
            learnings=learnings,
            activity=activity,
            site=site_url(self.root),
        )
        return render_prime(inputs, budget)

    def related(self, entry_id: str, limit: int = 5, lexical: bool = False) -> list[Any]:
        """The decisions, learnings and notes most like one entry (Whoosh more-like-this)."""
        if limit < 1:
            raise InvalidInput("limit must be 1 or more")
        return self._index().related(entry_id, limit, lexical=lexical)

    def evaluate(self, queries: str | os.PathLike[str], k: int = 5, lexical: bool = False) -> Any:
        """Recall@k and MRR@10 of this memory's search over a labelled JSON-lines file."""
        from functools import cache

        from .search.chunks import chunk_file
        from .search.evaluation import evaluate, read_queries

        labelled = read_queries(Path(queries))

        @cache
        def chunks_of(rel: str) -> list[Any]:
            path = self.root / rel
            if not path.is_file():
                return []
            return chunk_file(rel, path.read_text("utf-8", errors="replace"))

        return evaluate(
            labelled, lambda q: self.search(q, limit=max(k, 10), lexical=lexical), chunks_of, k
        )


def _day_of(stamp: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(stamp[:10])
    except ValueError:
        return None


def _ids_in(text: str, rel: str) -> set[str]:
    """Ids already used in a file: stored ones, and those derived for hand-written entries."""
    stored = {(m.group(1) or m.group(2)).strip() for m in _STORED_ID.finditer(text)}
    if len(_ENTRY_HEADING.findall(text)) <= len(stored):
        return stored
    return stored | {e.id for e in parse_entries(text, rel).entries}
