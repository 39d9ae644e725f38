"""Commands that hand memory to an agent over a protocol: ``memsite mcp`` (issue 10)."""

from __future__ import annotations

import click

from .app import _memory, cli


@cli.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve this memory to an agent over MCP (stdio): prime, recall, search, get, related,
    decide, learn, log, session and pending tools, check; persona, session and entries as
    resources. Needs the extra: pip install "memsite[mcp]"."""
    try:
        from ..agents.mcp_server import serve
    except ModuleNotFoundError as err:
        if (err.name or "").partition(".")[0] != "mcp":
            raise
        raise click.ClickException(
            'memsite mcp needs the MCP SDK: pip install "memsite[mcp]"'
        ) from None
    serve(_memory(ctx))
