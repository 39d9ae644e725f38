"""What the commands' option values must look like, checked as Click parses them.

A bad value is a usage error (exit 2) that names the option once and shows one valid example:
``Error: Invalid value for '--at': '2026/11/20': not an ISO-8601 date or date-time; e.g.
2026-06-08T14:30:00`` (issue 13).
"""

from __future__ import annotations

import ipaddress
import math
from typing import Any

import click

from ..store import inputs
from ..store.dates import AT_EXAMPLE, BadDate, parse_at, parse_date

DATE_EXAMPLE = "2026-11-01"


def validate_at(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--at``: an ISO-8601 date or date-time."""
    if value is not None:
        try:
            parse_at(value)
        except BadDate as err:
            raise click.BadParameter(f"{value!r}: {err.reason}; e.g. {AT_EXAMPLE}") from None
    return value


def validate_date(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--since``, ``--until``: a calendar date."""
    if value is not None:
        try:
            parse_date(value)
        except BadDate as err:
            raise click.BadParameter(f"{value!r}: {err.reason}; e.g. {DATE_EXAMPLE}") from None
    return value


def key_values(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    """``--detail KEY=VALUE`` (repeatable) as a dict."""
    found = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{value!r} is not KEY=VALUE; e.g. command=pytest")
        found[key.strip()] = rest
    return found


def validate_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--dev-addr``: IP:PORT (or localhost:PORT), as MkDocs reads it."""
    if value is None:
        return None
    host, _, port = value.rpartition(":")
    try:
        if host != "localhost":
            ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
        if not 0 <= int(port) <= 65535:
            raise ValueError(port)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not IP:PORT; e.g. 127.0.0.1:8000") from None
    return value


class Count(click.ParamType):
    """A whole number from ``minimum`` to ``maximum`` (None: no upper bound); a bad one is
    refused with ``example``. The ranges are the library's (``store/inputs.py``)."""

    name = "integer"

    def __init__(self, minimum: int, example: int, maximum: int | None = None) -> None:
        self.minimum = minimum
        self.example = example
        self.maximum = maximum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            # int() refuses a number of over 4,300 digits, and "1e308", "nan", "inf"
            number = value if isinstance(value, int) else int(str(value).strip())
        except ValueError:
            number = None
        too_big = number is not None and self.maximum is not None and number > self.maximum
        if number is None or number < self.minimum or too_big:
            what = inputs.whole(self.minimum, self.maximum)
            self.fail(f"{_shown(value)} is not {what}; e.g. {self.example}")
        return number


class Number(click.ParamType):
    """A finite number from ``minimum`` (excluded when ``above``) to ``maximum``; ``nan`` and
    ``inf``, which click's FloatRange lets through (every comparison with nan is false), are
    refused with ``example`` like any other bad value."""

    name = "float"

    def __init__(
        self, minimum: float, maximum: float, example: float, *, above: bool = False
    ) -> None:
        self.minimum, self.maximum, self.example, self.above = minimum, maximum, example, above

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            number = value if isinstance(value, float) else float(str(value).strip())
        except ValueError:
            number = math.nan
        low_ok = number > self.minimum if self.above else number >= self.minimum
        if not (math.isfinite(number) and low_ok and number <= self.maximum):
            what = inputs.finite(self.minimum, self.maximum, self.above)
            self.fail(f"{_shown(value)} is not {what}; e.g. {self.example:g}")
        return number


def _shown(value: Any) -> str:
    """The value as given, cut when it is long (a 400-digit number)."""
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:20]}…' ({len(str(value))} characters)"
