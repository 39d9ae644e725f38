"""``memsite.toml``, the tree's settings (issue 22): the one reader of the file, for every wing.

A wing names its table and what each key must be, and gets back plain values::

    BUDGET = config.Table("budget", {"window": config.Integer(1_000, 10_000_000)})
    config.read(root, BUDGET)  # {"window": 100000}, or {} when no file or table sets it

The file goes through ``reading.read_inside``: a link out of the tree, a FIFO or anything else
that is not a regular file, and a file over ``MAX_BYTES`` are refused before a byte of it is
parsed. Every refusal is a one-line ``BadConfig`` naming the file, and the table and key when
it is about a value; none quotes the file (a TOML error gives its line, nothing of the text).
Tables another wing owns are not checked here: each reader checks its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ..errors import InvalidInput, UnsafePath
from . import reading

CONFIG = "memsite.toml"
# a settings file holds a few dozen lines; 64 KiB is damage or a file put in its place
MAX_BYTES = 64 * 1024
_LINE = re.compile(r"\bat line (\d+)")

Value: TypeAlias = int | float | bool | str | tuple[str, ...]


class BadConfig(InvalidInput):
    """``memsite.toml`` cannot be read, or holds a value memsite cannot use."""


@dataclass(frozen=True)
class Integer:
    """A whole number from ``low`` to ``high`` (a float, even ``3.0``, is refused)."""

    low: int
    high: int

    @property
    def what(self) -> str:
        return f"an integer from {self.low:,} to {self.high:,}"

    def check(self, value: object) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        return value if self.low <= value <= self.high else None


@dataclass(frozen=True)
class Number:
    """A finite number from ``low`` to ``high``, read as a float (``nan`` and ``inf`` refused)."""

    low: float
    high: float

    @property
    def what(self) -> str:
        return f"a number from {self.low:g} to {self.high:g}"

    def check(self, value: object) -> float | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if isinstance(value, int) and not self.low <= value <= self.high:
            return None  # compared as an int: a 401-digit integer overflows float()
        number = float(value)
        return number if math.isfinite(number) and self.low <= number <= self.high else None


@dataclass(frozen=True)
class Flag:
    """``true`` or ``false``."""

    what = "true or false"

    def check(self, value: object) -> bool | None:
        return value if isinstance(value, bool) else None


@dataclass(frozen=True)
class Text:
    """One line of at most ``longest`` characters, no control character."""

    longest: int = 200

    @property
    def what(self) -> str:
        return f"one line of text of at most {self.longest:,} characters"

    def check(self, value: object) -> str | None:
        if not isinstance(value, str) or len(value) > self.longest:
            return None
        return None if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in value) else value


@dataclass(frozen=True)
class Choice:
    """One of ``options``."""

    options: tuple[str, ...]

    @property
    def what(self) -> str:
        return "one of " + ", ".join(repr(option) for option in self.options)

    def check(self, value: object) -> str | None:
        return value if isinstance(value, str) and value in self.options else None


@dataclass(frozen=True)
class Texts:
    """A list of at most ``most`` lines of text, each as ``Text`` checks it (issue 26: the
    ``[records]`` folders), read as a tuple."""

    most: int = 50
    longest: int = 400

    @property
    def what(self) -> str:
        return (
            f"a list of at most {self.most} strings of at most {self.longest:,} characters, "
            "no control character"
        )

    def check(self, value: object) -> tuple[str, ...] | None:
        if not isinstance(value, list) or len(value) > self.most:
            return None
        line = Text(self.longest)
        checked = [line.check(item) for item in value]
        return None if any(item is None for item in checked) else tuple(checked)  # type: ignore[arg-type]


Key: TypeAlias = Integer | Number | Flag | Text | Choice | Texts


@dataclass(frozen=True)
class Table:
    """A table of ``memsite.toml`` (``[name]``) and what each of its keys must be."""

    name: str
    keys: Mapping[str, Key]


def path(root: Path) -> Path:
    return root / CONFIG


def read(root: Path, table: Table) -> dict[str, Value]:
    """The keys of ``table`` that ``memsite.toml`` sets, each checked (``BadConfig`` names the
    first that is unknown or wrong); ``{}`` when there is no file or it has no such table."""
    where = path(root)
    data = _document(root)
    found = data.get(table.name) if data is not None else None
    if found is None:
        return {}
    if not isinstance(found, dict):
        raise BadConfig(f"{where}: {table.name} must be a table, written [{table.name}]")
    values: dict[str, Value] = {}
    for key, value in found.items():
        spec = table.keys.get(key)
        if spec is None:
            known = ", ".join(table.keys)
            raise BadConfig(
                f"{where}: [{table.name}] has no key {_shown(key)}; the keys are {known}"
            )
        checked = spec.check(value)
        if checked is None:
            raise BadConfig(f"{where}: [{table.name}] {key} must be {spec.what}")
        values[key] = checked
    return values


def _document(root: Path) -> dict[str, Any] | None:
    """The whole file parsed, or None when there is none."""
    import tomllib  # only the commands that read a setting pay for it

    where = path(root)
    try:
        raw = reading.read_inside(root, where, limit=MAX_BYTES)
    except FileNotFoundError:
        return None
    except UnsafePath as err:
        raise BadConfig(f"{err}; replace the link with the file itself") from None
    except reading.NotAFile as err:
        raise BadConfig(str(err)) from None
    except reading.TooLarge as err:
        raise BadConfig(f"{err}; fix or delete it") from None
    except OSError as err:
        raise BadConfig(f"{where}: cannot read it ({err.strerror}); fix or delete it") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadConfig(f"{where}: not UTF-8 text; fix or delete it") from None
    except tomllib.TOMLDecodeError as err:
        # the parser's message may quote a key or a character; the line number alone says where
        line = _LINE.search(str(err))
        at = f" at line {line.group(1)}" if line else ""
        raise BadConfig(f"{where}: not valid TOML{at}; fix or delete it") from None
    except ValueError:  # an integer past Python's 4,300-digit limit of int()
        raise BadConfig(f"{where}: holds a number too long to read; fix or delete it") from None
    except RecursionError:  # tomllib recurses once per level of arrays and inline tables
        raise BadConfig(f"{where}: arrays or tables nested too deeply; fix or delete it") from None


def _shown(key: str) -> str:
    """A key of the file as the error shows it: quoted, one line, cut to 40 characters."""
    return repr(key if len(key) <= 40 else key[:40] + "…")
