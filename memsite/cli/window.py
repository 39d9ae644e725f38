"""Commands about the agent's context window (issue 11): ``checkpoint`` records where the
live session is before the window is compacted, ``budget`` shows how the window is shared.

Each parses its options, makes one ``Memory`` call, and echoes.
"""

from __future__ import annotations

import json

import click

from ..store.inputs import MAX_SECONDS, MAX_TOKENS, MIN_SECONDS
from ..store.session.checkpoints import THRESHOLD, TRIGGERS
from ..store.session.summaries import SUMMARIZER_TIMEOUT
from .app import _memory, at_options, cli, text_or_stdin
from .options import Count, Number


@cli.command()
@click.option("--summary", help="The summary the harness or model wrote; '-' reads stdin.")
@click.option(
    "--summarizer",
    metavar="CMD",
    help="A command (any LLM CLI, run without a shell) that reads the session on stdin and "
    "prints its summary; if it fails, memsite's own summary is kept.",
)
@click.option(
    "--summarizer-timeout",
    type=Number(MIN_SECONDS, MAX_SECONDS, SUMMARIZER_TIMEOUT),
    default=SUMMARIZER_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="How long the summarizer may take.",
)
@click.option("--trigger", type=click.Choice(TRIGGERS), help="What caused it (default: manual).")
@click.option(
    "--used", type=Count(0, 170000, MAX_TOKENS), help="Tokens the context window holds now."
)
@click.option(
    "--window", type=Count(1, 200000, MAX_TOKENS), help="Tokens the context window holds at most."
)
@click.option(
    "--threshold",
    type=Number(0, 1, THRESHOLD, above=True),
    default=THRESHOLD,
    show_default=True,
    help="With --used: write only once the window is this full.",
)
@click.option(
    "--tokens-after",
    type=Count(0, 30000, MAX_TOKENS),
    help="Tokens the window holds after compaction.",
)
@click.option("--allow-secrets", is_flag=True, help="Keep secret-looking text.")
@at_options("When it happened (backfill), e.g. 2026-06-08T14:30:00.")
@click.pass_context
def checkpoint(
    ctx: click.Context,
    summary: str | None,
    summarizer: str | None,
    summarizer_timeout: float,
    trigger: str | None,
    used: int | None,
    window: int | None,
    threshold: float,
    tokens_after: int | None,
    allow_secrets: bool,
    at: str | None,
    allow_future: bool,
    allow_past: bool,
) -> None:
    """Record a checkpoint of the live session in today's warm log: its summary and where
    it was. With --used and --window, only once the window is --threshold full."""
    if (used is None) != (window is None):
        raise click.UsageError(
            "--used and --window go together, e.g. --used 170000 --window 200000"
        )
    memory = _memory(
        ctx, allow_secrets=allow_secrets, allow_future=allow_future, allow_past=allow_past
    )
    done = memory.checkpoint(
        trigger or ("threshold" if used is not None else "manual"),
        text_or_stdin(summary, "--summary"),
        summarizer=summarizer,
        timeout=summarizer_timeout,
        used=used,
        window=window,
        threshold=threshold,
        tokens_after=tokens_after,
        at=at,
    )
    said = f"{done.fullness.describe()}: " if done.fullness else ""
    click.echo(f"{said}{done.id}" if done.id else f"{said}no checkpoint written")


@cli.command()
@click.option(
    "--window",
    type=Count(1, 200000, MAX_TOKENS),
    default=200_000,
    show_default=True,
    help="Tokens of the window.",
)
@click.option("--task", help="The task cold memory is chosen for (default: the session's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def budget(ctx: click.Context, window: int, task: str | None, as_json: bool) -> None:
    """How a context window is shared between memory's tiers and the work, the tokens each
    tier of this memory would take now, and a warning for each tier over its share."""
    from ..search.payloads.budget import render

    table = _memory(ctx).budget(window, task)
    click.echo(json.dumps(table.to_dict(), indent=2) if as_json else render(table), nl=as_json)
