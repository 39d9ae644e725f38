"""Commands that write memory: session, progress, pending, decide, learn, log, note.

Each parses its options, makes one ``Memory`` call, and echoes.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ..memory import Memory
from .app import _memory, at_options, cli, write_command
from .options import key_values
from .paths import from_here
from .written import report

JSON_HELP = "Print the id and what the write noticed as JSON."


@cli.group()
def session() -> None:
    """Start, show and end the live session (hot/context.json)."""


@session.command("start")
@click.argument("task")
@click.option("--id", "session_id", help="Session id (default: date, time and task).")
@at_options("When the session started.")
@click.pass_context
def session_start(
    ctx: click.Context,
    task: str,
    session_id: str | None,
    at: str | None,
    allow_future: bool,
    allow_past: bool,
) -> None:
    """Start a session; an unfinished one is reported and archived first."""
    from ..store.session.hot import render

    memory = _memory(ctx, allow_future=allow_future, allow_past=allow_past)
    started = memory.start_session(task, session_id, at=at)
    if started.archived is not None:
        previous = started.archived
        click.echo(
            f"Archived unfinished session `{previous.session_id}` ({previous.task}) "
            f"as {started.archived_id}; last step: {previous.current_step or '(none)'}."
        )
    if started.context.carried:  # from the archived session or ended ones (issue 25.4)
        click.echo(f"Carried over {len(started.context.carried)} pending action(s).")
    if started.archived is not None or started.context.carried:
        click.echo()
    click.echo(render(started.context), nl=False)
    recent = memory.latest_decisions(5)
    if recent:
        click.echo("\n## Recent decisions\n")
        for entry in recent:
            click.echo(f"- {entry.date.isoformat()} — {entry.title} (`{entry.id}`)")
    click.echo(
        "\nFor the full session-start context (persona, relevant memory): memsite prime --task TASK"
    )


@session.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print the hot context as JSON.")
@click.pass_context
def session_show(ctx: click.Context, as_json: bool) -> None:
    """Where were we? The live session as markdown (or JSON)."""
    from ..store.session.hot import render

    memory = _memory(ctx)
    context = memory.session()
    others = [(rel, c) for rel, c in memory.live_sessions() if rel != "hot/context.json"]
    if as_json:
        click.echo(json.dumps(context.to_dict() if context else None, indent=2, ensure_ascii=False))
    elif context is None and not others:
        click.echo("No active session. Start one with: memsite session start TASK")
    else:
        if context is not None:
            click.echo(render(context), nl=False)
        for rel, other in others:  # Claude Code sessions running beside the first (issue 23)
            click.echo(f"\nAlso live ({rel}): {other.task} (`{other.session_id}`)")


@session.command("end")
@click.option("--summary", help="What the session achieved.")
@click.option(
    "--drop-pending",
    is_flag=True,
    help="Do not carry the open pending actions over to the next session.",
)
@at_options("When the session ended.")
@click.pass_context
def session_end(
    ctx: click.Context,
    summary: str | None,
    drop_pending: bool,
    at: str | None,
    allow_future: bool,
    allow_past: bool,
) -> None:
    """Archive the session into today's warm log and clear hot/; its open pending actions
    carry over to the next session unless --drop-pending."""
    memory = _memory(ctx, allow_future=allow_future, allow_past=allow_past)
    click.echo(memory.end_session(summary, drop_pending=drop_pending, at=at))


@cli.command()
@click.argument("step")
@click.option(
    "--file",
    "files",
    multiple=True,
    metavar="PATH",
    help="A file touched, relative to the current folder (repeatable).",
)
@at_options("When.")
@click.pass_context
def progress(
    ctx: click.Context,
    step: str,
    files: tuple[str, ...],
    at: str | None,
    allow_future: bool,
    allow_past: bool,
) -> None:
    """Record the current step of the live session."""
    memory = _memory(ctx, allow_future=allow_future, allow_past=allow_past)
    click.echo(memory.progress(step, from_here(memory, files, "--file").paths, at=at))


@cli.group()
def pending() -> None:
    """Pending actions of the live session."""


PENDING_JSON = click.option(
    "--json", "as_json", is_flag=True, help='Print the list as JSON: {"pending": [...]}.'
)


@pending.command("list")
@PENDING_JSON
@click.pass_context
def pending_list(ctx: click.Context, as_json: bool) -> None:
    """Print how many actions are pending in the live session, and the list."""
    context = _memory(ctx).session()
    _print_pending(list(context.pending_actions) if context is not None else [], as_json)


@pending.command("add")
@click.argument("text")
@PENDING_JSON
@click.pass_context
def pending_add(ctx: click.Context, text: str, as_json: bool) -> None:
    """Add a pending action; prints how many are pending, and the list."""
    _print_pending(_memory(ctx).pending_add(text), as_json)


@pending.command("done")
@click.argument("text")
@PENDING_JSON
@click.pass_context
def pending_done(ctx: click.Context, text: str, as_json: bool) -> None:
    """Mark a pending action done (exact text or a unique part of it); prints what is left."""
    _print_pending(_memory(ctx).pending_done(text), as_json)


def _print_pending(items: list[str], as_json: bool) -> None:
    """One shape for every ``pending`` command: the count, then the list (or the JSON)."""
    if as_json:
        click.echo(json.dumps({"pending": items}, indent=2, ensure_ascii=False))
        return
    click.echo(f"{len(items)} pending")
    for item in items:
        click.echo(f"- [ ] {item}")


def code_options(func: Any) -> Any:
    """``--path`` (repeatable) and ``--commit``: the code an entry governs (issue 14)."""
    func = click.option(
        "--commit",
        metavar="REF",
        help="The commit it is about (a full hash is stored when the tree is in a git repository).",
    )(func)
    return click.option(
        "--path",
        "paths",
        multiple=True,
        metavar="PATH",
        help="A file, folder or glob it governs, relative to the current folder (repeatable).",
    )(func)


@cli.command()
@click.argument("title")
@click.option("--why", required=True, help="Why this was decided.")
@click.option("--risk", help="What could go wrong.")
@click.option("--supersedes", metavar="ID", help="The id of the decision this replaces.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@code_options
@click.option(
    "--paths-from-session",
    is_flag=True,
    help="Add the files the live session touched since its previous decision as paths.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@write_command
def decide(
    memory: Memory,
    write: dict[str, Any],
    title: str,
    why: str,
    risk: str | None,
    supersedes: str | None,
    tags: tuple[str, ...],
    paths: tuple[str, ...],
    commit: str | None,
    paths_from_session: bool,
    as_json: bool,
) -> None:
    """Record a decision and its why in cold/decisions.md; prints the id, and on stderr each
    current decision it may replace."""
    typed = from_here(memory, paths, "--path")
    report(
        memory.decide(
            title,
            why,
            risk,
            supersedes,
            tags,
            **write,
            paths=typed.paths,
            commit=commit,
            paths_from_session=paths_from_session,
        ),  # fmt: skip
        "decision",
        as_json,
    )
    typed.warn()


@cli.command()
@click.argument("title")
@click.option("--category", required=True, help="The kind of lesson (e.g. testing, tooling).")
@click.option("--why", help="Why it matters, or what went wrong.")
@click.option("--supersedes", metavar="ID", help="The id of the learning this corrects.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@code_options
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@write_command
def learn(
    memory: Memory,
    write: dict[str, Any],
    title: str,
    category: str,
    why: str | None,
    supersedes: str | None,
    tags: tuple[str, ...],
    paths: tuple[str, ...],
    commit: str | None,
    as_json: bool,
) -> None:
    """Record a learning in cold/learnings.md; prints the id, and on stderr the learning it
    repeats."""
    typed = from_here(memory, paths, "--path")
    report(
        memory.learn(
            title,
            category,
            why,
            tags,
            supersedes=supersedes,
            **write,
            paths=typed.paths,
            commit=commit,
        ),
        "learning",
        as_json,
    )
    typed.warn()


@cli.command()
@click.argument("action")
@click.option(
    "--detail",
    "details",
    multiple=True,
    callback=key_values,
    metavar="KEY=VALUE",
    help="A detail of the activity (repeatable).",
)
@click.option("--result", help="How it turned out.")
@code_options
@click.option("--json", "as_json", is_flag=True, help='Print the id as JSON: {"id": ...}.')
@write_command
def log(
    memory: Memory,
    write: dict[str, Any],
    action: str,
    details: dict[str, str],
    result: str | None,
    paths: tuple[str, ...],
    commit: str | None,
    as_json: bool,
) -> None:
    """Append an activity to today's warm log; prints the id."""
    typed = from_here(memory, paths, "--path")
    entry_id = memory.log(action, details, result, paths=typed.paths, commit=commit, **write)
    click.echo(json.dumps({"id": entry_id}) if as_json else entry_id)
    typed.warn()


@cli.command()
@click.argument("title")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print the note as JSON: {"path": ..., "citation": ...}.',
)
@write_command
def note(memory: Memory, write: dict[str, Any], title: str, as_json: bool) -> None:
    """Create notes/<slug>.md titled TITLE from --body (never overwrites); prints its path."""
    rel = memory.note(title, **write)
    if as_json:
        data = {"path": str(memory.root / rel), "citation": rel}
        click.echo(json.dumps(data, ensure_ascii=False))
    else:
        click.echo(memory.root / rel)
