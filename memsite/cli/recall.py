"""Commands that read memory: index, search, recall, why, prime, get, related, eval (issue 3).

``memsite.cli`` imports this module once ``cli`` exists, so the commands register
themselves on the group here. Each parses, makes one ``Memory`` call, and echoes.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click

from ..store.inputs import MAX_HITS, MAX_TOKENS, escaped
from ..store.model import KINDS, TIERS
from .app import _memory, cli, text_or_stdin
from .options import Count, Number, validate_date
from .paths import from_here
from .progress import on_terminal

LEXICAL = click.option(
    "--lexical",
    is_flag=True,
    help="Rank by words alone; skip the semantic model even when it is installed.",
)


def _dump(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


# A query word the snippet marks ``**so**``: one word (the index's tokens), never a field
# label such as ``**Why:**``, which the entry's own text holds.
_MARKED_WORD = re.compile(r"\*\*(\w+(?:\.\w+)*)\*\*")


def styled(snippet: str) -> str:
    """The snippet for a terminal: the marked query words bold and coloured, not ``**``."""
    return _MARKED_WORD.sub(lambda m: click.style(m.group(1), fg="yellow", bold=True), snippet)


def _print_hits(hits: list[Any]) -> None:
    # in a pipe the snippet stays plain text, its query words in **bold** markdown
    terminal = on_terminal("stdout")
    for rank, hit in enumerate(hits, 1):
        click.echo(f"{rank}. {hit.breadcrumb}")
        click.echo(f"   {hit.citation} · {hit.date.isoformat()} · {hit.kind}")
        if hit.superseded_by is not None:
            newer = hit.superseded_by
            click.echo(f"   superseded by {newer.title} ({newer.id}) on {newer.date.isoformat()}")
        elif hit.status in ("rejected", "deprecated", "proposed", "superseded"):
            click.echo(f"   {hit.status}")
        if hit.snippet:
            click.echo(f"   {styled(hit.snippet) if terminal else hit.snippet}")


@cli.command()
@click.option("--rebuild", is_flag=True, help="Throw the index away and build it again.")
@click.pass_context
def index(ctx: click.Context, rebuild: bool) -> None:
    """Bring the search index up to date (only changed files are re-read)."""
    done = _memory(ctx).index(rebuild=rebuild)
    if not done.files and not done.removed and not done.rebuilt:
        click.echo("index is up to date")
        return
    what = "rebuilt" if done.rebuilt else "updated"
    click.echo(
        f"{what}: {done.files} file(s) indexed, {done.removed} removed, "
        f"{done.chunks} chunk(s) in {done.seconds:.2f} s"
    )


@cli.command()
@click.argument("query", required=False)
@click.option(
    "--limit",
    default=10,
    show_default=True,
    type=Count(1, 10, MAX_HITS),
    help="How many hits to print.",
)
@click.option("--kind", type=click.Choice(KINDS), help="Only this kind of entry.")
@click.option("--tier", type=click.Choice(TIERS), help="Only this tier.")
@click.option("--category", help="Only learnings (or notes) of this category.")
@click.option("--tag", help="Only entries carrying this tag.")
@click.option(
    "--since", metavar="DATE", callback=validate_date, help="Only from this date on (YYYY-MM-DD)."
)
@click.option(
    "--until", metavar="DATE", callback=validate_date, help="Only up to this date (YYYY-MM-DD)."
)
@click.option(
    "--current",
    is_flag=True,
    help="Leave out decisions and learnings that were superseded (and decision records "
    "rejected or deprecated).",
)
@click.option(
    "--recurring",
    is_flag=True,
    help="Instead, list the lessons that keep coming back: the learnings that repeat, grouped.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@LEXICAL
@click.pass_context
def search(
    ctx: click.Context, query: str | None, recurring: bool, as_json: bool, **options: Any
) -> None:
    """Search memory with a natural-language QUERY ("quoted phrases", tag:x filters work)."""
    if recurring:
        _print_recurring(ctx, query, as_json)
        return
    if query is None:
        raise click.UsageError("Missing argument 'QUERY' (or give --recurring).")
    hits = _memory(ctx).search(query, **options)
    from ..search.payloads.listing import fallback_line

    if said := fallback_line(hits):  # quotes are words (issue 36): exit 0, said on stderr
        click.echo(said, err=True)
    if as_json:
        _dump([hit.to_dict() for hit in hits])
    elif not hits:
        click.echo("no matches", err=True)
    else:
        _print_hits(hits)


def _print_recurring(ctx: click.Context, query: str | None, as_json: bool) -> None:
    """``search --recurring``: each lesson recorded more than once, how many times and when,
    the one that came back last first (issue 27)."""
    from ..search.notices import recurring

    if query is not None:
        raise click.UsageError("--recurring lists every recurring lesson; give no QUERY with it")
    found = recurring(_memory(ctx).entries("learning"))
    if as_json:
        _dump([group.to_dict() for group in found])
        return
    if not found:
        click.echo("no lesson was recorded twice", err=True)
    for group in found:
        dates = ", ".join(e.date.isoformat() for e in group.occurrences)
        click.echo(f"{group.count}× {group.latest.title} ({dates})")
        for entry in group.occurrences:
            click.echo(f"   {entry.path}#{entry.id} · {entry.date.isoformat()} · {entry.title}")


def _prompt_text(prompt: str) -> str:
    return text_or_stdin(prompt, "PROMPT") or ""


@cli.command()
@click.argument("prompt")
@click.option(
    "--budget", default=1500, show_default=True, type=Count(1, 1500, MAX_TOKENS), help="Tokens."
)
@click.option(
    "--limit", default=8, show_default=True, type=Count(1, 8, MAX_HITS), help="Hits considered."
)
@click.option("--json", "as_json", is_flag=True, help="Print hits, tokens and the block as JSON.")
@LEXICAL
@click.pass_context
def recall(
    ctx: click.Context, prompt: str, budget: int, limit: int, as_json: bool, lexical: bool
) -> None:
    """The memory relevant to PROMPT ('-' reads stdin) as one markdown block within --budget;
    an empty PROMPT prints nothing at all (a hook may pass one)."""
    text = _prompt_text(prompt)
    recalled = _memory(ctx).recall(text, budget=budget, limit=limit, lexical=lexical)
    if as_json:
        _dump(recalled.to_dict())
    elif recalled.markdown:
        click.echo(recalled.markdown, nl=False)
    elif text.strip():
        click.echo("memsite: nothing in memory matched", err=True)


@cli.command()
@click.argument("path")
@click.option(
    "--budget", default=1500, show_default=True, type=Count(1, 1500, MAX_TOKENS), help="Tokens."
)
@click.option("--json", "as_json", is_flag=True, help="Print the items, tokens and block as JSON.")
@click.pass_context
def why(ctx: click.Context, path: str, budget: int, as_json: bool) -> None:
    """The memory about PATH of the code (relative to the current folder): the decisions and
    learnings that govern it, current first and the most specific first, then the entries
    that mention it, as one markdown block within --budget."""
    memory = _memory(ctx)
    found = memory.why(from_here(memory, [path], "PATH").paths[0], budget=budget)
    if as_json:
        _dump(found.to_dict())
    elif found.markdown:
        click.echo(found.markdown, nl=False)
    elif found.left_out:  # too small a budget for even the heading
        click.echo(
            f"memsite: {found.left_out} item(s) left out to stay within {budget:,} tokens "
            f"(--budget {found.needed:,} would hold them all)",
            err=True,
        )
    else:
        # escaped: a path holding a newline is said on one line
        shown = escaped(found.path)
        click.echo(f"memsite: nothing in memory governs or mentions {shown}", err=True)


@cli.command()
@click.option("--task", help="What this session is about (default: the hot context's task).")
@click.option(
    "--budget", default=40000, show_default=True, type=Count(1, 40000, MAX_TOKENS), help="Tokens."
)
@click.option("--json", "as_json", is_flag=True, help="Print tokens per section and the payload.")
@LEXICAL
@click.pass_context
def prime(ctx: click.Context, task: str | None, budget: int, as_json: bool, lexical: bool) -> None:
    """The session-start payload: persona, hot context, relevant memory, recent activity."""
    primed = _memory(ctx).prime(task=task, budget=budget, lexical=lexical)
    if as_json:
        _dump(primed.to_dict())
    else:
        click.echo(primed.markdown, nl=False)


@cli.command()
@click.argument("ref", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the entry as the API's JSON.")
@click.pass_context
def get(ctx: click.Context, ref: str, as_json: bool) -> None:
    """One whole entry by id or path#anchor citation, as its markdown (what MCP's get gives)."""
    found = _memory(ctx).get(ref)
    if as_json:
        _dump(found.to_dict())
        return
    click.echo(found.markdown, nl=False)
    if found.superseded_by is not None:
        newer = found.superseded_by
        click.echo(
            f"superseded by {newer.title} ({newer.id}) on {newer.date.isoformat()}", err=True
        )


@cli.command()
@click.argument("entry_id", metavar="ID")
@click.option(
    "--limit",
    default=5,
    show_default=True,
    type=Count(1, 5, MAX_HITS),
    help="How many entries to print.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@LEXICAL
@click.pass_context
def related(ctx: click.Context, entry_id: str, limit: int, as_json: bool, lexical: bool) -> None:
    """The decisions, learnings and notes most like entry ID."""
    hits = _memory(ctx).related(entry_id, limit=limit, lexical=lexical)
    if as_json:
        _dump([hit.to_dict() for hit in hits])
    elif not hits:
        click.echo("nothing related", err=True)
    else:
        _print_hits(hits)


@cli.command("eval")
@click.argument("queries", type=click.Path(dir_okay=False, path_type=str))
@click.option(
    "--k",
    default=5,
    show_default=True,
    type=Count(1, 5, MAX_HITS),
    help="How many top hits count.",
)
@click.option(
    "--min-recall",
    type=Number(0, 1, 0.7),
    help="Exit 1 when recall@k is below this (for CI).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@LEXICAL
@click.pass_context
def eval_(
    ctx: click.Context,
    queries: str,
    k: int,
    min_recall: float | None,
    as_json: bool,
    lexical: bool,
) -> None:
    """Recall@k and MRR@10 of search over labelled QUERIES (JSON lines {"q", "relevant"})."""
    report = _memory(ctx).evaluate(queries, k=k, lexical=lexical)
    if as_json:
        _dump(report.to_dict())
    else:
        click.echo(
            f"recall@{k} {report.recall:.3f}  MRR@10 {report.mrr:.3f}  "
            f"({len(report.outcomes)} queries, {report.chars:.0f} chars in the top {k})"
        )
        for outcome in report.outcomes:
            if not outcome.found:
                click.echo(f"missed: {outcome.query}")
    if min_recall is not None and report.recall < min_recall:
        click.echo(f"recall@{k} {report.recall:.3f} is below --min-recall {min_recall}", err=True)
        ctx.exit(1)
