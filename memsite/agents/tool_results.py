"""What the MCP tools return, as typed shapes: the SDK publishes them as each tool's output
schema, and checks every result against it. They are the JSON of the CLI's ``--json`` (the
``to_dict`` of ``Hit``, ``Recalled``, ``Primed``, ``Found``), named here for the protocol.

``recall``, ``why``, ``prime`` and ``search`` answer within their budget (issue 24): the model
reads their markdown once, as the one text block, and the structured content holds the other
fields, each hit as a reference (``REFERENCE``: where it is and whether it holds), not its
words. Before, the SDK sent the whole JSON twice, as structured content and as text, with
each hit's text and then the same hits as markdown: recall(budget=1500) reached the model as
16,456 + 15,443 characters, 5.3 times its budget. ``full`` gives the whole shape back.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any, NotRequired

from mcp.types import CallToolResult, TextContent
from pydantic import TypeAdapter

# pydantic reads TypedDicts from typing_extensions on Python < 3.12
from typing_extensions import TypedDict

from ..search.notices import Notice
from ..search.payloads.listing import render_listing
from ..search.payloads.tokens import estimate_tokens
from ..search.ranking import Hit as Found

# the fields of a hit in the structured content unless ``full``: its id, its citation
# (path#anchor), what it is and whether it holds
REFERENCE = ("id", "path", "anchor", "kind", "date", "status", "superseded_by")


class Successor(TypedDict):
    """The decision or learning that now holds in place of a superseded one."""

    id: str
    title: str
    date: str


class Hit(TypedDict):
    """One piece of memory: cite it as path#anchor; status is current or superseded
    (decisions and learnings only). The other fields come with ``full``: text is the whole
    section, snippet the matching words."""

    id: str
    path: str
    anchor: str
    kind: str
    date: str
    status: str | None
    superseded_by: Successor | None
    heading: NotRequired[str]
    breadcrumb: NotRequired[str]
    tier: NotRequired[str]
    time: NotRequired[str | None]
    category: NotRequired[str]
    tags: NotRequired[list[str]]
    score: NotRequired[float]
    line: NotRequired[int]
    end_line: NotRequired[int]
    snippet: NotRequired[str]
    text: NotRequired[str]
    record: NotRequired[str]


class Hits(TypedDict):
    """The hits; ``phrase_fallback``: the quoted phrases no entry held, searched as words."""

    hits: list[Hit]
    phrase_fallback: NotRequired[list[str]]


class Governing(Hit):
    """An entry about a path of the code: match is file, folder or glob (its Paths govern
    the path, pattern is the stored path that matched) or mentions (its text names it)."""

    match: str
    pattern: str


class Why(TypedDict):
    """The memory about one path of the code (issue 14): items governing first (current,
    then superseded; the most specific first), then entries that mention it. markdown (the
    text block) comes with ``full``."""

    path: str
    budget: int
    tokens: int
    left_out: int
    needed_budget: int
    items: list[Governing]
    markdown: NotRequired[str]


class Recalled(TypedDict):
    """markdown is the block to put in context (empty when nothing matched): the text block,
    and with ``full`` here too; left_out hits did not fit the budget, needed_budget would
    have held them all."""

    budget: int
    tokens: int
    left_out: int
    needed_budget: int
    hits: list[Hit]
    markdown: NotRequired[str]


class PrimeSection(TypedDict):
    name: str
    cap: int
    tokens: int
    items: int
    left_out: int


class Primed(TypedDict):
    """markdown is the session-start payload (the text block, and with ``full`` here too);
    cut names the sections shortened to fit."""

    budget: int
    tokens: int
    sections: list[PrimeSection]
    cut: list[str]
    needed_budget: int
    markdown: NotRequired[str]


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


class Noticed(TypedDict):
    """An entry a new one may replace or repeats (issue 27), and why it was named."""

    id: str
    title: str
    date: str
    why: str


def noticed(notice: Notice) -> Noticed:
    return {
        "id": notice.id,
        "title": notice.title,
        "date": notice.date.isoformat(),
        "why": notice.why,
    }


class Decided(Written):
    """A new decision's id, with the current decisions it may replace (each one also a line
    of ``notices``, saying how to name it with ``supersedes``)."""

    may_supersede: list[Noticed]


class Learned(Written):
    """A new learning's id, with the learning it repeats (recorded as its ``Repeats``)."""

    repeats: Noticed | None


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


def budgeted(make: Callable[[int], Any], budget: int, shape: Any, full: bool) -> CallToolResult:
    """The result of a payload (``make(budget)``: a ``Recalled``, ``Why`` or ``Primed``): its
    markdown the one text block, its other fields the structured content, each hit a
    reference. Both together stay within ``budget``: when the references push them past it,
    the markdown is made again at the budget less what they take (twice at most: fewer hits
    take less, which leaves room for more), and needed_budget counts them too. With ``full``,
    the whole shape: each hit's text, and the markdown again."""
    if full:
        payload = make(budget).to_dict()
        return _result(payload["markdown"], _shaped(shape, payload))

    def fits(made: tuple[dict[str, Any], dict[str, Any], int]) -> bool:
        return made[0]["tokens"] + made[2] <= budget

    made = _made(make, budget)
    if not fits(made):
        made = _made(make, max(1, budget - made[2]))
        more = _made(make, max(1, budget - made[2]))
        made = more if fits(more) else made
    payload, data, reserve = made
    data["budget"] = budget
    if data["needed_budget"]:
        data["needed_budget"] += reserve
    return _result(payload["markdown"], data)


def _made(make: Callable[[int], Any], room: int) -> tuple[dict[str, Any], dict[str, Any], int]:
    """The payload at ``room`` tokens, its structured content, and the tokens that takes."""
    payload = make(room).to_dict()
    data = _compact(payload)
    return payload, data, estimate_tokens(_json(data))


def listed(hits: Sequence[Found], full: bool) -> CallToolResult:
    """Search hits: their compact markdown (``render_listing``) the text block, each hit a
    reference in the structured content (with ``full``, whole)."""
    found = [hit.to_dict() for hit in hits]
    data: dict[str, Any] = {"hits": found if full else [_reference(hit) for hit in found]}
    if hits and hits[0].phrase_fallback:
        data["phrase_fallback"] = list(hits[0].phrase_fallback)
    return _result(render_listing(hits), _shaped(Hits, data))


def _compact(payload: dict[str, Any]) -> dict[str, Any]:
    data = {key: value for key, value in payload.items() if key != "markdown"}
    for key in ("hits", "items"):
        if key in data:
            data[key] = [_reference(hit) for hit in data[key]]
    return data


def _reference(hit: dict[str, Any]) -> dict[str, Any]:
    kept = REFERENCE + (("match", "pattern") if "match" in hit else ())
    return {key: hit[key] for key in kept}


def _json(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _result(markdown: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=markdown)], structured_content=data
    )


def _shaped(shape: Any, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as the SDK sends a returned dict: checked against ``shape``, unknown keys
    left out."""
    adapter = _adapter(shape)
    return adapter.dump_python(adapter.validate_python(data), mode="json")  # type: ignore[no-any-return]


@functools.cache
def _adapter(shape: Any) -> TypeAdapter[Any]:
    return TypeAdapter(shape)
