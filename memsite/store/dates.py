"""Parsing and validating the dates and times that name entries and files."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from ..errors import ALLOW_FUTURE, ALLOW_PAST, AT, BadValue, InvalidInput

_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_TIME = re.compile(r"^(\d{2}):(\d{2})(?::(\d{2}))?$")
AT_EXAMPLE = "2026-06-08T14:30:00"
# An entry dated further ahead of the clock than this is refused unless allowed: a typo in
# the year, not a plan (issue 13). A day of slack covers time zones and skewed clocks.
FUTURE_SLACK = dt.timedelta(days=1)
# An entry dated before this is refused unless allowed: year 1 is a typo or a zeroed field,
# and its file would land in warm/archive/0001/ (issue 25.8).
EARLIEST = dt.datetime(1970, 1, 1)


class BadDate(BadValue):
    """A date or time that cannot be read; ``reason`` says why, without repeating the value."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def parse_date(text: str) -> dt.date:
    """A calendar date ``YYYY-MM-DD``; raises ``BadDate`` for 2026-02-30 and the like."""
    match = _DATE.match(text.strip())
    if not match:
        raise BadDate(f"invalid date {text!r}: expected YYYY-MM-DD", "not a date YYYY-MM-DD")
    try:
        return dt.date(*(int(part) for part in match.groups()))
    except ValueError as err:
        raise BadDate(f"invalid date {text!r}: {err}", str(err)) from None


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
    """An ISO-8601 date or date-time for ``--at``; zoned times are turned into local time.
    Raises ``BadDate``, whose message names ``at`` (``--at``) and shows a valid example."""

    def bad(reason: str) -> BadDate:
        return BadDate(f"{AT} {text!r}: {reason}; e.g. {AT_EXAMPLE}", reason)

    raw = text.strip()
    date_part = raw[:10]
    if not _DATE.match(date_part):
        raise bad("not an ISO-8601 date or date-time")
    try:
        day = parse_date(date_part)  # names the bad calendar date (2026-02-30) precisely
    except BadDate as err:
        raise bad(err.reason) from None
    if raw == date_part:
        return dt.datetime.combine(day, dt.time(12, 0))
    try:
        moment = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise bad("not an ISO-8601 date or date-time") from None
    if moment.tzinfo is not None:
        try:
            moment = moment.astimezone().replace(tzinfo=None)
        except (OverflowError, ValueError):
            raise bad("outside the years 1-9999 in local time") from None
    return moment.replace(microsecond=0)


def refuse_future(moment: dt.datetime, now: dt.datetime) -> None:
    """Refuse (``BadValue``) a moment more than :data:`FUTURE_SLACK` ahead of ``now``."""
    if moment > now + FUTURE_SLACK:
        raise BadValue(
            f"{AT} {moment.isoformat()} is more than a day ahead of the clock "
            f"({now.replace(microsecond=0).isoformat()}); if that is really meant, pass "
            f"{ALLOW_FUTURE}"
        )


def refuse_past(moment: dt.datetime) -> None:
    """Refuse (``BadValue``) a moment before :data:`EARLIEST` (1970-01-01)."""
    if moment < EARLIEST:
        raise BadValue(
            f"{AT} {moment.isoformat()} is before {EARLIEST:%Y-%m-%d}; if that is really meant, "
            f"pass {ALLOW_PAST}"
        )


def moment_of(
    at: object,
    clock: Callable[[], dt.datetime],
    allow_future: bool,
    allow_past: bool = False,
) -> dt.datetime:
    """The moment of a write: ``at`` (a datetime, date or ISO-8601 string), else the clock.
    A backfill more than a day ahead of the clock is refused unless ``allow_future``, one
    before 1970 unless ``allow_past``."""
    if at is None:
        return clock().replace(microsecond=0)
    if isinstance(at, str):
        moment = parse_at(at)
    elif isinstance(at, dt.datetime):
        moment = (at.astimezone().replace(tzinfo=None) if at.tzinfo else at).replace(microsecond=0)
    elif isinstance(at, dt.date):
        moment = dt.datetime.combine(at, dt.time(12, 0))
    else:
        raise InvalidInput(f"{AT} {at!r}: expected a datetime, a date or an ISO-8601 string")
    if not allow_future:
        refuse_future(moment, clock())
    if not allow_past:
        refuse_past(moment)
    return moment


def days_before(day: dt.date, days: int) -> dt.date:
    """``day`` minus ``days``, or the first day of year 1 when that is further back."""
    try:
        return day - dt.timedelta(days=days)
    except OverflowError:
        return dt.date.min
