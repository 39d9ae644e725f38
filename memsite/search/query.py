"""What a search query asks for: free words, quoted phrases and ``field:value`` filters.

Queries are natural language by default: an agent passes the user's last message as is, so
``?``, ``*``, ``'`` and ``-`` are plain punctuation, never query syntax. Two things are syntax:
``"quoted phrases"`` (each must occur) and ``field:value`` filters for ``kind``, ``tier``,
``category``, ``tag`` (or ``tags``), ``path``, ``date`` (a prefix: ``date:2026-03``),
``since`` and ``until`` (inclusive dates), ``governs`` (a code path or glob of the repository:
the decisions and learnings whose ``Paths`` govern it, as ``why`` finds them); a value with
spaces is quoted:
``category:"web dev"``. Stop words are dropped later, by the index's analyzer.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace

from ..errors import BadValue, EmptyQuery, InvalidInput
from ..store.dates import parse_date

_FILTER = re.compile(
    r'(?<!\S)(kind|tier|category|tags?|path|date|since|until|governs):(?:"([^"]*)"|(\S+))',
    re.IGNORECASE,
)
_PHRASE = re.compile(r'"([^"]+)"')
_WORD = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Filters:
    """Conditions every hit meets. Within one field any value may match (``kind:decision
    kind:learning``), except tags: a hit carries every tag asked for. Empty means no filter."""

    kinds: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    dates: tuple[str, ...] = ()  # ISO prefixes
    since: dt.date | None = None
    until: dt.date | None = None
    governs: tuple[str, ...] = ()  # code paths or globs; the search narrows them to ``records``
    records: tuple[str, ...] | None = None  # only these entries (None: any)

    def __bool__(self) -> bool:
        return self != Filters()

    def merge(self, other: Filters) -> Filters:
        since = max(filter(None, (self.since, other.since)), default=None)
        until = min(filter(None, (self.until, other.until)), default=None)
        return Filters(
            kinds=self.kinds + other.kinds,
            tiers=self.tiers + other.tiers,
            categories=self.categories + other.categories,
            tags=self.tags + other.tags,
            paths=self.paths + other.paths,
            dates=self.dates + other.dates,
            since=since,
            until=until,
            governs=self.governs + other.governs,
            records=self.records if other.records is None else other.records,
        )

    def accepts(
        self,
        *,
        kind: str,
        tier: str,
        category: str,
        tags: tuple[str, ...],
        path: str,
        date: dt.date,
        record: str = "",
    ) -> bool:
        """Whether a chunk with these attributes passes (used on sections fetched by record)."""
        folded = {t.casefold() for t in tags}
        iso = date.isoformat()
        return (
            (not self.kinds or kind in self.kinds)
            and (not self.tiers or tier in self.tiers)
            and (not self.categories or category.casefold() in self.categories)
            and all(t in folded for t in self.tags)
            and (not self.paths or path in self.paths)
            and (not self.dates or any(iso.startswith(d) for d in self.dates))
            and (self.since is None or date >= self.since)
            and (self.until is None or date <= self.until)
            and (self.records is None or record in self.records)
        )


@dataclass(frozen=True)
class Query:
    """A parsed query: ``words`` (free text, any may match), ``phrases`` (all must match)."""

    words: str
    phrases: tuple[str, ...] = ()
    filters: Filters = field(default_factory=Filters)

    @property
    def empty(self) -> bool:
        return not self.words.strip() and not self.phrases

    @property
    def blank(self) -> bool:
        """Nothing to search for: no word (``*`` and ``?`` are punctuation), phrase or filter."""
        return not _WORD.search(self.words) and not self.phrases and not self.filters


def parse_query(text: str) -> Query:
    """Split a query into free words, phrases and filters (see the module docstring)."""
    found: dict[str, list[str]] = {}
    since = until = None

    def take(match: re.Match[str]) -> str:
        nonlocal since, until
        name = match.group(1).lower()
        value = match.group(2) if match.group(2) is not None else match.group(3)
        value = value.strip()
        if name in ("since", "until"):
            day = _date(value, name)
            since, until = (day, until) if name == "since" else (since, day)
        elif value:
            key = {"tag": "tags", "date": "dates", "path": "paths", "governs": "governs"}.get(
                name, name + "s"
            )
            if name == "category":
                key = "categories"
            kept = value if name in ("path", "governs") else value.casefold()
            found.setdefault(key, []).append(kept)
        return " "

    rest = _FILTER.sub(take, text)
    phrases = tuple(p.strip() for p in _PHRASE.findall(rest) if p.strip())
    words = _PHRASE.sub(" ", rest).replace('"', " ")
    filters = Filters(
        **{key: tuple(values) for key, values in found.items()},  # type: ignore[arg-type]
        since=since,
        until=until,
    )
    return Query(" ".join(words.split()), phrases, filters)


def unquoted(text: str) -> str:
    """``text`` with its quoted phrases made words (issue 36: quotes are words in recall,
    and in a search whose phrase no entry holds); a filter's quoted value stays as it is."""
    kept = [(m.start(), m.end()) for m in _FILTER.finditer(text)]
    out, at = [], 0
    for start, end in [*kept, (len(text), len(text))]:
        out.append(_PHRASE.sub(lambda m: f" {m.group(1)} ", text[at:start]).replace('"', " "))
        out.append(text[start:end])
        at = end
    return "".join(out)


def require_something(query: Query, filters: Filters, text: str) -> Query:
    """``query``, unless it and ``filters`` ask for nothing at all (``EmptyQuery``)."""
    if query.blank and not filters:
        raise EmptyQuery(
            f'query {text!r} has nothing to search for; give words, a "phrase" or a filter, '
            'e.g. "why postgres" or tag:security'
        )
    return query


def make_filters(
    *,
    kind: str | None = None,
    tier: str | None = None,
    category: str | None = None,
    tag: str | None = None,
    since: str | dt.date | None = None,
    until: str | dt.date | None = None,
) -> Filters:
    """Filters from the API's keyword arguments (dates as ``YYYY-MM-DD`` or ``date``)."""
    return replace(
        Filters(),
        kinds=(kind,) if kind else (),
        tiers=(tier,) if tier else (),
        categories=(category.casefold(),) if category else (),
        tags=(tag.casefold(),) if tag else (),
        since=_date(since, "since") if since else None,
        until=_date(until, "until") if until else None,
    )


def _date(value: str | dt.date, name: str) -> dt.date:
    if isinstance(value, dt.date):
        return value
    try:
        return parse_date(value)
    except InvalidInput:
        # a usage error, as the same date given to --since is (exit 2, not 1)
        raise BadValue(f"{name}: invalid date {value!r}, expected YYYY-MM-DD") from None
