"""The ``memsite`` group and what its commands share: error handling, ``--root``, write options.

Heavy modules (the index, the site) are imported inside the commands that need them, so the
write commands stay fast.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..errors import InvalidInput, MemsiteError
from ..memory import Memory
from ..store.dates import parse_at
from ..store.tree import find_root


class _Group(click.Group):
    """Turns library errors and OS errors into one line on stderr and exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemsiteError as err:
            raise click.ClickException(str(err)) from None
        except OSError as err:
            where = f"{err.filename}: " if err.filename else ""
            raise click.ClickException(f"{where}{err.strerror or err}") from None


def explicit_root(ctx: click.Context) -> str | None:
    """The tree named by --root or $MEMSITE_ROOT, or None."""
    return ctx.find_root().params.get("root") or os.environ.get("MEMSITE_ROOT") or None


def _memory(ctx: click.Context, **kwargs: Any) -> Memory:
    # without --root, the tree is found from here up, as git finds .git (issue 10)
    root = explicit_root(ctx) or find_root(Path("."))
    return Memory(
        root, notify=lambda message: click.echo(f"memsite: {message}", err=True), **kwargs
    )


def _validate_at(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        parse_at(value)
    except InvalidInput as err:
        raise click.BadParameter(str(err)) from None
    return value


def text_or_stdin(value: str | None, name: str) -> str | None:
    """``value``, or standard input read strictly as UTF-8 when ``value`` is ``-``."""
    if value != "-":
        return value
    raw = sys.stdin.buffer.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InvalidInput(
            f"{name} -: standard input is not UTF-8 (bad byte at offset {err.start})"
        ) from None


def write_command(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options every write command shares; the command receives ``memory`` (honouring
    ``--allow-secrets``) and ``write`` (the ``body``, ``at`` and ``author`` keywords)."""

    @functools.wraps(func)
    def wrapper(
        at: str | None, body: str | None, author: str | None, allow_secrets: bool, **kwargs: Any
    ) -> Any:
        memory = _memory(click.get_current_context(), allow_secrets=allow_secrets)
        write = {"body": text_or_stdin(body, "--body"), "at": at, "author": author}
        return func(memory=memory, write=write, **kwargs)

    for option in (
        click.option(
            "--allow-secrets",
            is_flag=True,
            help="Keep secret-looking text instead of redacting it.",
        ),
        click.option("--author", help="Who wrote this (default: $MEMSITE_AUTHOR)."),
        click.option("--body", help="Longer text under the entry; '-' reads standard input."),
        click.option(
            "--at",
            callback=_validate_at,
            metavar="ISO-8601",
            help="When it happened (backfill), e.g. 2026-06-08T14:30:00.",
        ),
    ):
        wrapper = option(wrapper)
    return wrapper


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memsite")
@click.option(
    "--root",
    type=click.Path(path_type=str),
    metavar="DIR",
    help="The memory tree (default: $MEMSITE_ROOT, else the first memory/ found from here up).",
)
def cli(root: str | None) -> None:
    """memsite: an agent's memory as plain markdown, searchable and published as a site."""


def main() -> None:
    cli(prog_name="memsite")
