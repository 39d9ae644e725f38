"""What the MCP tools return, as typed shapes: the SDK publishes them as each tool's output
schema, and checks every result against it. They are the JSON of the CLI's ``--json`` (the
``to_dict`` of ``Hit``, ``Recalled``, ``Primed``, ``Found``), named here for the protocol."""

from __future__ import annotations

# pydantic reads TypedDicts from typing_extensions on Python < 3.12
from typing_extensions import TypedDict


class Successor(TypedDict):
    """The decision or learning that now holds in place of a superseded one."""

    id: str
    title: str
    date: str


class Hit(TypedDict):
    """One piece of memory: cite it as path#anchor; text is the whole section, snippet the
    matching words. status is current or superseded (decisions and learnings only)."""

    id: str
    path: str
    anchor: str
    heading: str
    breadcrumb: str
    kind: str
    tier: str
    date: str
    time: str | None
    category: str
    tags: list[str]
    score: float
    line: int
    end_line: int
    snippet: str
    text: str
    record: str
    status: str | None
    superseded_by: Successor | None


class Hits(TypedDict):
    hits: list[Hit]


class Governing(Hit):
    """An entry about a path of the code: match is file, folder or glob (its Paths govern
    the path, pattern is the stored path that matched) or mentions (its text names it)."""

    match: str
    pattern: str


class Why(TypedDict):
    """The memory about one path of the code (issue 14): items governing first (current,
    then superseded; the most specific first), then entries that mention it."""

    path: str
    budget: int
    tokens: int
    left_out: int
    needed_budget: int
    items: list[Governing]
    markdown: str


class Recalled(TypedDict):
    """markdown is the block to put in context (empty when nothing matched); left_out hits
    did not fit the budget, needed_budget would have held them all."""

    budget: int
    tokens: int
    left_out: int
    needed_budget: int
    hits: list[Hit]
    markdown: str


class PrimeSection(TypedDict):
    name: str
    cap: int
    tokens: int
    items: int
    left_out: int


class Primed(TypedDict):
    """markdown is the session-start payload; cut names the sections shortened to fit."""

    budget: int
    tokens: int
    sections: list[PrimeSection]
    cut: list[str]
    needed_budget: int
    markdown: str


class Entry(TypedDict):
    """One whole entry as written (markdown), where it is, and whether it still holds."""

    id: str
    kind: str
    tier: str
    title: str
    date: str
    time: str | None
    path: str
    line: int
    end_line: int
    citation: str
    fields: dict[str, str]
    tags: list[str]
    supersedes: str | None
    status: str | None
    superseded_by: Successor | None
    markdown: str


class Written(TypedDict):
    """The id of the new entry; notices say what was changed on the way (secrets redacted)."""

    id: str
    notices: list[str]


class Session(TypedDict):
    session_id: str
    task: str
    current_step: str
    files_modified: list[str]
    decisions: list[str]
    pending_actions: list[str]
    started: str
    updated: str


class SessionStarted(TypedDict):
    """The new live session; archived_id is the log entry of an unfinished one it archived."""

    session: Session
    archived_id: str | None
    notices: list[str]


class Pending(TypedDict):
    """The session's pending actions after the change."""

    pending: list[str]
    notices: list[str]


class Problem(TypedDict):
    path: str
    line: int
    severity: str
    message: str


class Checked(TypedDict):
    """Problems of the tree, path:line; errors make memsite check fail in CI."""

    errors: int
    warnings: int
    problems: list[Problem]
