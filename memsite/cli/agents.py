"""Commands that hand memory to an agent over a protocol: ``memsite mcp`` (issue 10) and
``memsite hook`` (issue 11)."""

from __future__ import annotations

import sys

import click

from ..agents.harnesses import NAMES as HARNESSES
from ..search.payloads.recall import HOOK_BUDGET, RECALL_BUDGET
from ..store.inputs import MAX_SECONDS, MAX_TOKENS, MIN_SECONDS
from .app import _memory, cli
from .options import Count, Number

# memsite is on no package index: the extra comes with memsite itself, from where it was
# installed (issue 25.1)
MISSING_SDK = (
    "memsite mcp needs the MCP SDK, memsite's mcp extra: reinstall memsite with it, e.g. "
    'pip install -e "/path/to/memsite[mcp]" (docs/agents.md#install-into-your-project)'
)


@cli.command()
@click.option(
    "--call-timeout",
    type=Number(MIN_SECONDS, MAX_SECONDS, 60),
    default=60.0,
    show_default=True,
    help="Seconds a tool call may take; past it the call is stopped and is a tool error.",
)
@click.pass_context
def mcp(ctx: click.Context, call_timeout: float) -> None:
    """Serve this memory to an agent over MCP (stdio): prime, recall, why, search, get, related,
    decide, learn, log, session and pending tools, check; persona, session and entries as
    resources. Each call runs in a worker process, stopped past --call-timeout. Needs
    memsite's mcp extra: pip install -e "/path/to/memsite[mcp]"."""
    try:
        from ..agents.mcp_server import serve
    except ModuleNotFoundError as err:
        if (err.name or "").partition(".")[0] != "mcp":
            raise
        raise click.ClickException(MISSING_SDK) from None
    serve(_memory(ctx), call_timeout)


@cli.command()
@click.option(
    "--prime-budget",
    type=Count(1, HOOK_BUDGET, MAX_TOKENS),
    default=HOOK_BUDGET,
    show_default=True,
    help="Tokens of the payload at SessionStart (at most 2,400: what a hook context holds).",
)
@click.option(
    "--recall-budget",
    type=Count(1, RECALL_BUDGET, MAX_TOKENS),
    default=RECALL_BUDGET,
    show_default=True,
    help="Tokens of the recall at UserPromptSubmit and PreToolUse (at most 2,400).",
)
@click.option(
    "--lexical",
    is_flag=True,
    help="Rank by words only: no embedding model is loaded (a faster turn).",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Say on stderr when a warm process is started (the default when run from a terminal).",
)
@click.option(
    "--harness",
    type=click.Choice(HARNESSES),
    default=None,
    help="The agent CLI that sends the event (default: told from the event's shape).",
)
@click.pass_context
def hook(
    ctx: click.Context,
    prime_budget: int,
    recall_budget: int,
    lexical: bool,
    verbose: bool,
    harness: str | None,
) -> None:
    """Answer one hook event of an agent CLI (its JSON on stdin; Claude Code's names below,
    each other CLI's mapped onto them by --harness): SessionStart primes,
    UserPromptSubmit recalls, PreToolUse of a file edit gives the memory that governs the
    file (once per file per session), PreCompact and PostCompact record a checkpoint,
    SessionEnd ends the session. Never blocks the agent: any failure is one line on stderr,
    exit 0."""
    from ..agents.hooks import CONTEXT_CAP, bounded, run

    for option, value in (("--prime-budget", prime_budget), ("--recall-budget", recall_budget)):
        if value > HOOK_BUDGET:
            click.echo(
                f"memsite hook: {option} {value} is over what fits an agent CLI's hook"
                f" context (about {CONTEXT_CAP:,} characters); using {HOOK_BUDGET}",
                err=True,
            )
    prime_budget, recall_budget = min(prime_budget, HOOK_BUDGET), min(recall_budget, HOOK_BUDGET)

    # the time limit covers reading stdin too, and a kill ends a call that holds the GIL
    said = bounded(
        lambda: run(
            sys.stdin.buffer.read(),
            lambda: _memory(ctx),
            prime_budget=prime_budget,
            recall_budget=recall_budget,
            lexical=lexical,
            # run by hand (a terminal), a process that outlives the command is said
            verbose=verbose or sys.stdin.isatty() or sys.stderr.isatty(),
            harness=harness,
        )
    )
    if said.stdout:
        click.echo(said.stdout)
    if said.error:
        click.echo(said.error, err=True)
