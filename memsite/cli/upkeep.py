"""Commands that keep the tree sound: ``check`` (validate it, audit its history, warn of
overlapping decisions) and ``prune`` (move old day logs to the archive).

Each parses its options, makes one call, and echoes.
"""

from __future__ import annotations

import dataclasses
import json

import click

from ..store.tree import persona_is_template
from .app import _memory, cli
from .options import Count
from .written import overlap_warnings


@cli.command()
@click.option(
    "--since", metavar="GIT-REF", help="Also fail if any entry changed or vanished since REF."
)
@click.option(
    "--overlaps",
    is_flag=True,
    help="Also warn of current decisions that govern one path and answer one question.",
)
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the problems and their counts as JSON."
)
@click.pass_context
def check(
    ctx: click.Context, since: str | None, overlaps: bool, strict: bool, as_json: bool
) -> None:
    """Validate the tree; prints path:line: message, exits 1 on errors."""
    import time

    from ..agents.running import warm_processes
    from ..store.check import audit_since, check_tree

    memory = _memory(ctx)
    root = memory.root
    problems = check_tree(root)
    if since:
        problems += audit_since(root, since)
    if overlaps:
        problems += overlap_warnings(root)
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    template = persona_is_template(root)
    if as_json:
        data = {
            "problems": [dataclasses.asdict(problem) for problem in problems],
            "errors": errors,
            "warnings": warnings,
            "persona_is_template": template,
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for problem in problems:
            click.echo(f"{problem}")
        if template:  # not a problem of the tree, but why prime has no persona
            click.echo("persona.md is still the template: nothing injected (edit it)", err=True)
        for process in warm_processes(root, memory.cache_dir, time.time()):  # nor are these
            click.echo(f"info: {process}", err=True)
        click.echo(f"{errors} error(s), {warnings} warning(s)", err=True)
    if errors or (strict and warnings):
        ctx.exit(1)


@cli.command()
@click.option(
    "--keep-days",
    default=7,
    show_default=True,
    type=Count(0, 7),
    help="Days of warm logs to keep in warm/.",
)
@click.pass_context
def prune(ctx: click.Context, keep_days: int) -> None:
    """Move warm logs older than N days to warm/archive/YYYY/ (nothing is deleted)."""
    moved = _memory(ctx).prune(keep_days)
    for source, target in moved:
        click.echo(f"{source} -> {target}")
    click.echo(f"moved {len(moved)} log(s)", err=True)
