"""What the commands' option values must look like, checked as Click parses them.

A bad value is a usage error (exit 2) that names the option once and shows one valid example:
``Error: Invalid value for '--at': '2026/11/20': not an ISO-8601 date or date-time; e.g.
2026-06-08T14:30:00`` (issue 13).
"""

from __future__ import annotations

import ipaddress
from typing import Any

import click

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
    """A whole number of at least ``minimum``; a bad one is refused with ``example``."""

    name = "integer"

    def __init__(self, minimum: int, example: int) -> None:
        self.minimum = minimum
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            number = value if isinstance(value, int) else int(str(value).strip())
        except ValueError:
            number = None
        if number is None or number < self.minimum:
            self.fail(
                f"{value!r} is not a whole number of {self.minimum} or more; e.g. {self.example}"
            )
        return number


class Fraction(click.ParamType):
    """A number from 0 to 1; a bad one is refused with ``example``."""

    name = "float"

    def __init__(self, example: float) -> None:
        self.example = example

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            number = value if isinstance(value, float) else float(str(value).strip())
        except ValueError:
            number = None
        if number is None or not 0 <= number <= 1:
            self.fail(f"{value!r} is not a number from 0 to 1; e.g. {self.example}")
        return number
