"""The MCP tools of ``memsite mcp`` over one ``Memory``: each tool's typed arguments, and one
call into ``Memory`` that makes its result (``mcp_server.py`` serves them)."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from ..memory import Memory
from ..store.check import check_tree
from . import tool_results as out
from .arguments import (
    AllowFuture,
    AllowPast,
    At,
    Body,
    Budget,
    Commit,
    Full,
    Limit,
    Paths,
    Since,
    Supersedes,
    Tags,
    Title,
    Until,
)
from .calls import Queue, allowing, one_call
from .worker import Worker

READING = ("prime", "recall", "why", "search", "get", "related", "check")
WRITING = (
    "session_start",
    "progress",
    "pending_add",
    "pending_done",
    "decide",
    "learn",
    "log",
    "session_end",
)


class MemoryTools:
    """The tools and resources over one ``Memory``; each method is one call into it."""

    def __init__(self, memory: Memory, worker: Worker | None = None) -> None:
        self.memory = memory
        self.queue = Queue(worker)  # tools and resources alike: Memory serves one call at a time

    def _author(self, ctx: Context | None) -> str | None:
        """$MEMSITE_AUTHOR, or else the client named in the handshake."""
        if self.memory.author is None and ctx is not None:
            params = ctx.session.client_params
            self.memory.author = params.client_info.name if params is not None else None
        return self.memory.author

    def _signed(self, ctx: Context | None) -> Memory:
        """The memory, writing as $MEMSITE_AUTHOR or else as the client named in the handshake
        (in the worker, the author the server sent with the call)."""
        self._author(ctx)
        return self.memory

    def _written(self, entry_id: str, noticed: list[str] | None = None) -> out.Written:
        return {"id": str(entry_id), "notices": [*self.memory.notices, *(noticed or [])]}

    # -- reading -------------------------------------------------------------------------

    @one_call
    def prime(
        self,
        task: Annotated[
            str | None, Field(description="What this session is about (default: the live one's).")
        ] = None,
        budget: Budget = 40000,
        full: Full = False,
    ) -> Annotated[CallToolResult, out.Primed]:
        """Load memory at the start of a session: who you are (persona), where the work stands
        (the live session), the decisions and learnings relevant to the task, recent activity.
        Put its markdown in your context once, before starting work."""
        return out.budgeted(
            lambda b: self.memory.prime(task=task, budget=b), budget, out.Primed, full
        )

    @one_call
    def recall(
        self,
        prompt: Annotated[str, Field(description="The user's message, or what you need to know.")],
        budget: Budget = 1500,
        full: Full = False,
    ) -> Annotated[CallToolResult, out.Recalled]:
        """What memory holds about a prompt, as one dated, cited markdown block within the
        budget (empty when nothing matches). Call it before answering about earlier work."""
        return out.budgeted(
            lambda b: self.memory.recall(prompt, budget=b), budget, out.Recalled, full
        )

    @one_call
    def why(
        self,
        path: Annotated[
            str, Field(description="A file or folder of the code, relative to the repository root.")
        ],
        budget: Budget = 1500,
        full: Full = False,
    ) -> Annotated[CallToolResult, out.Why]:
        """The decisions and learnings that govern a path of the code (current first, the most
        specific first), then the entries that mention it. Call it before changing a file."""
        return out.budgeted(lambda b: self.memory.why(path, budget=b), budget, out.Why, full)

    @one_call
    def search(
        self,
        query: Annotated[
            str,
            Field(
                description='Words or a question; "quoted phrases" must occur (when none '
                "holds one, its words are searched: phrase_fallback); tag:x filters."
            ),
        ],
        limit: Limit = 10,
        kind: Literal["decision", "learning", "activity", "note"] | None = None,
        since: Since = None,
        until: Until = None,
        current: Annotated[
            bool, Field(description="Leave out decisions and learnings that were superseded.")
        ] = False,
        full: Full = False,
    ) -> Annotated[CallToolResult, out.Hits]:
        """Ranked pieces of memory for a query, each dated and cited (path#anchor) with its
        matching words, the status of decisions and learnings and what superseded them."""
        hits = self.memory.search(
            query, limit=limit, kind=kind, since=since, until=until, current=current
        )
        return out.listed(hits, full)

    @one_call
    def get(
        self,
        id: Annotated[
            str,
            Field(
                description="An entry id (2026-11-05-move-to-postgres) or a path#anchor citation."
            ),
        ],
    ) -> out.Entry:
        """One whole entry as written: its markdown, date, fields, whether it still holds and
        what superseded it."""
        return self.memory.get(id).to_dict()  # type: ignore[no-any-return]

    @one_call
    def related(
        self,
        id: Annotated[str, Field(description="The id of an entry.")],
        limit: Limit = 5,
    ) -> out.Hits:
        """The decisions, learnings and notes most like one entry."""
        return {"hits": [hit.to_dict() for hit in self.memory.related(id, limit=limit)]}

    @one_call
    def check(self) -> out.Checked:
        """Validate the memory tree: malformed entries, duplicate ids, broken supersedes."""
        problems = check_tree(self.memory.root)
        errors = sum(p.severity == "error" for p in problems)
        return {
            "errors": errors,
            "warnings": len(problems) - errors,
            "problems": [
                {"path": p.path, "line": p.line, "severity": p.severity, "message": p.message}
                for p in problems
            ],
        }

    # -- writing -------------------------------------------------------------------------

    @one_call
    def session_start(
        self, task: Annotated[str, Field(description="What this session will do.")], ctx: Context
    ) -> out.SessionStarted:
        """Start a live session for a task; an unfinished one is archived to the log first."""
        started = self._signed(ctx).start_session(task)
        return {
            "session": started.context.to_dict(),  # type: ignore[typeddict-item]
            "archived_id": started.archived_id,
            "notices": list(self.memory.notices),
        }

    @one_call
    def progress(
        self,
        step: Annotated[str, Field(description="The step you are on now, in one line.")],
        ctx: Context,
        files: Annotated[list[str] | None, Field(description="Files touched.")] = None,
    ) -> out.Written:
        """Record the current step of the live session (and the files it touched)."""
        return self._written(self._signed(ctx).progress(step, files or ()))

    @one_call
    def pending_add(
        self, text: Annotated[str, Field(description="Something still to do.")], ctx: Context
    ) -> out.Pending:
        """Add a pending action to the live session."""
        pending = self._signed(ctx).pending_add(text)
        return {"pending": pending, "notices": list(self.memory.notices)}

    @one_call
    def pending_done(
        self,
        text: Annotated[str, Field(description="The pending action, or a unique part of it.")],
        ctx: Context,
    ) -> out.Pending:
        """Mark a pending action of the live session done."""
        pending = self._signed(ctx).pending_done(text)
        return {"pending": pending, "notices": list(self.memory.notices)}

    @one_call
    def decide(
        self,
        title: Title,
        why: Annotated[str, Field(description="Why: the reasons a later reader needs.")],
        ctx: Context,
        risk: Annotated[str | None, Field(description="What could go wrong.")] = None,
        supersedes: Supersedes = None,
        tags: Tags = None,
        body: Body = None,
        at: At = None,
        paths: Paths = None,
        commit: Commit = None,
        allow_future: AllowFuture = False,
        allow_past: AllowPast = False,
    ) -> out.Decided:
        """Record a decision and why it was made (appended to cold/decisions.md); the result
        names the current decisions it may replace."""
        with allowing(self._signed(ctx), allow_future, allow_past) as memory:
            entry_id = memory.decide(
                title,
                why,
                risk,
                supersedes,
                tags or (),
                body=body,
                at=at,
                paths=paths or (),
                commit=commit,
            )  # fmt: skip
        found = entry_id.may_supersede
        written = self._written(entry_id, [notice.line() for notice in found])
        return {**written, "may_supersede": [out.noticed(notice) for notice in found]}

    @one_call
    def learn(
        self,
        title: Title,
        category: Annotated[str, Field(description="The kind of lesson, e.g. testing.")],
        ctx: Context,
        why: Annotated[str | None, Field(description="Why it matters or what went wrong.")] = None,
        supersedes: Supersedes = None,
        tags: Tags = None,
        body: Body = None,
        at: At = None,
        paths: Paths = None,
        commit: Commit = None,
        allow_future: AllowFuture = False,
        allow_past: AllowPast = False,
    ) -> out.Learned:
        """Record a learning: a mistake and its correction, a fact worth keeping; the result
        names the learning it repeats, if any."""
        with allowing(self._signed(ctx), allow_future, allow_past) as memory:
            entry_id = memory.learn(
                title,
                category,
                why,
                tags or (),
                supersedes=supersedes,
                body=body,
                at=at,
                paths=paths or (),
                commit=commit,
            )  # fmt: skip
        again = entry_id.repeats
        written = self._written(entry_id, [again.repeated()] if again is not None else [])
        return {**written, "repeats": out.noticed(again) if again is not None else None}

    @one_call
    def log(
        self,
        action: Annotated[str, Field(description="What was done, in one line.")],
        ctx: Context,
        details: Annotated[
            dict[str, str] | None, Field(description="Details, e.g. {'command': 'pytest'}.")
        ] = None,
        result: Annotated[str | None, Field(description="How it turned out.")] = None,
        body: Body = None,
        at: At = None,
        paths: Paths = None,
        commit: Commit = None,
        allow_future: AllowFuture = False,
        allow_past: AllowPast = False,
    ) -> out.Written:
        """Append an activity to today's log."""
        with allowing(self._signed(ctx), allow_future, allow_past) as memory:
            entry_id = memory.log(
                action, details, result, body=body, at=at, paths=paths or (), commit=commit
            )
        return self._written(entry_id)

    @one_call
    def session_end(
        self,
        ctx: Context,
        summary: Annotated[str | None, Field(description="What the session achieved.")] = None,
        drop_pending: Annotated[
            bool, Field(description="Drop the open pending actions instead of carrying them.")
        ] = False,
    ) -> out.Written:
        """End the live session: it is archived into today's log; its open pending actions
        carry over to the next session unless drop_pending."""
        memory = self._signed(ctx)
        return self._written(memory.end_session(summary, drop_pending=drop_pending))
