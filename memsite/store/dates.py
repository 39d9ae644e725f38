"""Parsing and validating the dates and times that name entries and files."""

from __future__ import annotations

import datetime as dt
import re

from ..errors import InvalidInput

_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_TIME = re.compile(r"^(\d{2}):(\d{2})(?::(\d{2}))?$")


def parse_date(text: str) -> dt.date:
    """A calendar date ``YYYY-MM-DD``; raises ``InvalidInput`` for 2026-02-30 and the like."""
    match = _DATE.match(text.strip())
    if not match:
        raise InvalidInput(f"invalid date {text!r}: expected YYYY-MM-DD")
    try:
        return dt.date(*(int(part) for part in match.groups()))
    except ValueError as err:
        raise InvalidInput(f"invalid date {text!r}: {err}") from None


def parse_time(text: str) -> dt.time:
    match = _TIME.match(text.strip())
    if not match:
        raise InvalidInput(f"invalid time {text!r}: expected HH:MM:SS")
    hour, minute, second = (int(part) if part else 0 for part in match.groups())
    try:
        return dt.time(hour, minute, second)
    except ValueError as err:
        raise InvalidInput(f"invalid time {text!r}: {err}") from None


def parse_at(text: str) -> dt.datetime:
    """An ISO-8601 date or date-time for ``--at``; zoned times are turned into local time."""
    raw = text.strip()
    if _DATE.match(raw):
        return dt.datetime.combine(parse_date(raw), dt.time(12, 0))
    date_part = raw[:10]
    if not _DATE.match(date_part):
        raise InvalidInput(f"invalid --at {text!r}: expected ISO-8601 like 2026-06-08T14:30:00")
    parse_date(date_part)  # names the bad calendar date (2026-02-30) precisely
    try:
        moment = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"invalid --at {text!r}: expected ISO-8601 like 2026-06-08T14:30:00"
        ) from None
    if moment.tzinfo is not None:
        try:
            moment = moment.astimezone().replace(tzinfo=None)
        except (OverflowError, ValueError):
            raise InvalidInput(
                f"invalid --at {text!r}: outside the years 1-9999 in local time"
            ) from None
    return moment.replace(microsecond=0)


def days_before(day: dt.date, days: int) -> dt.date:
    """``day`` minus ``days``, or the first day of year 1 when that is further back."""
    try:
        return day - dt.timedelta(days=days)
    except OverflowError:
        return dt.date.min
