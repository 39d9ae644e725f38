"""The ``memsite`` group and what its commands share: error handling, ``--root``, write options.

Heavy modules (the index, the site) are imported inside the commands that need them, so the
write commands stay fast.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..errors import FLAGS, BadValue, InvalidInput, MemsiteError, spelled
from ..memory import Memory
from ..store.tree import find_root
from .options import validate_at
from .progress import Progress, on_terminal


class _Usage(click.ClickException):
    """A usage error (exit 2) shown as one line, without the usage text."""

    exit_code = 2


# The module of each command, imported when the command is asked for (issue 35): a write
# loads the writing commands, not the readers' (llm's CLI loads a plugin the same way).
_MODULES = {
    "setup": ("init",),
    "writing": (
        "session",
        "progress",
        "pending",
        "log",
        "decide",
        "learn",
        "note",
    ),
    "upkeep": ("check", "prune"),
    "window": ("checkpoint", "budget"),
    "recall": ("index", "search", "recall", "prime", "why", "get", "related", "eval"),
    "site": ("build", "serve"),
    "agents": ("mcp", "hook"),
}
COMMANDS = {name: module for module, names in _MODULES.items() for name in names}


class _Group(click.Group):
    """Turns library errors and OS errors into one line on stderr and exit code 1, and
    imports a command's module only when the command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            importlib.import_module(f"{__package__}.{COMMANDS[cmd_name]}")
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with spelled(FLAGS):  # memsite's messages name --at, not at= (issue 25.5)
                return super().invoke(ctx)
        except click.NoSuchOption as err:
            raise _Usage(_suggested(err)) from None
        except click.UsageError as err:
            # one line like every other error, keeping exit code 2 (issue 13)
            raise _Usage(err.format_message()) from None
        except BadValue as err:  # an empty query, an --at in the future
            raise _Usage(str(err)) from None
        except MemsiteError as err:
            raise click.ClickException(str(err)) from None
        except OSError as err:
            where = f"{err.filename}: " if err.filename else ""
            raise click.ClickException(f"{where}{err.strerror or err}") from None


# Words people type for an option memsite spells otherwise: click's own guess goes by spelling
# alone (`decide --reason` was told "Did you mean '--json'?", issue 39.2).
SYNONYMS = {
    "--reason": "--why",
    "--because": "--why",
    "--rationale": "--why",
    "--tags": "--tag",
    "--file": "--path",
    "--files": "--path",
    "--paths": "--path",
    "--message": "--body",
    "--text": "--body",
    "--date": "--at",
    "--when": "--at",
    "--format": "--json",
}


def _suggested(err: click.NoSuchOption) -> str:
    """The unknown option's message, suggesting the option it most likely means: one of
    :data:`SYNONYMS` that the command has, else click's guess by spelling."""
    meant = SYNONYMS.get(err.option_name)
    command = err.ctx.command if err.ctx is not None else None
    if meant is not None and command is not None:
        known = {name for param in command.params for name in getattr(param, "opts", ())}
        if meant in known:
            return f"No such option '{err.option_name}'. Did you mean '{meant}'?"
    return err.format_message()


def explicit_root(ctx: click.Context) -> str | None:
    """The tree named by --root or $MEMSITE_ROOT, or None."""
    return ctx.find_root().params.get("root") or os.environ.get("MEMSITE_ROOT") or None


def _memory(ctx: click.Context, **kwargs: Any) -> Memory:
    # without --root, the tree is found from here up, as git finds .git (issue 10)
    root = explicit_root(ctx) or find_root(Path("."))
    return Memory(
        root,
        notify=lambda message: click.echo(f"memsite: {message}", err=True),
        on_progress=progress(ctx, "indexing files"),
        **kwargs,
    )


def progress(ctx: click.Context, what: str) -> Progress:
    """A progress display for long work: on a terminal, unless ``--quiet``."""
    return Progress(what, shown=on_terminal() and not ctx.find_root().params.get("quiet"))


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


def at_options(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add ``--at``, ``--allow-future`` and ``--allow-past``, for the commands that can
    backfill."""

    def add(func: Callable[..., Any]) -> Callable[..., Any]:
        func = click.option(
            "--allow-past", is_flag=True, help="Accept an --at before 1970-01-01 (the epoch)."
        )(func)
        func = click.option(
            "--allow-future", is_flag=True, help="Accept an --at more than a day ahead of now."
        )(func)
        return click.option("--at", callback=validate_at, metavar="ISO-8601", help=help)(func)

    return add


def write_command(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options every write command shares; the command receives ``memory`` (honouring
    ``--allow-secrets``) and ``write`` (the ``body``, ``at`` and ``author`` keywords)."""

    @functools.wraps(func)
    def wrapper(
        at: str | None,
        allow_future: bool,
        allow_past: bool,
        body: str | None,
        author: str | None,
        allow_secrets: bool,
        **kwargs: Any,
    ) -> Any:
        memory = _memory(
            click.get_current_context(),
            allow_secrets=allow_secrets,
            allow_future=allow_future,
            allow_past=allow_past,
        )
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
        at_options("When it happened (backfill), e.g. 2026-06-08T14:30:00."),
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
@click.option(
    "--quiet", "-q", is_flag=True, help="No progress display while the index or site is built."
)
def cli(root: str | None, quiet: bool) -> None:
    """memsite: an agent's memory as plain markdown, searchable and published as a site."""


def main() -> None:
    cli(prog_name="memsite")
