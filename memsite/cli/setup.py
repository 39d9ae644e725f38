"""``memsite init``: a new memory tree, and what it can set up beside it (the ``[records]``
folders, the hooks of Claude Code and the other agent CLIs, a CI workflow).

It parses its options, makes the tree, and echoes what it created and what it kept.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import click

from ..errors import MemsiteError
from .app import cli, explicit_root
from .records import RECORDS, add_records


@cli.command()
@click.argument("directory", required=False, type=click.Path(path_type=str))
@click.option(
    "--ci",
    type=click.Choice(["github", "gitlab"]),
    help="Also write a CI workflow that checks the memory and publishes its site.",
)
@click.option(
    "--install",
    metavar="SPEC",
    help="Where the CI workflow installs memsite from: a pip requirement, git URL, path or "
    "wheel (default: how this copy was installed).",
)
@click.option(
    "--techdocs",
    is_flag=True,
    help="With --ci: a workflow that builds the memory's Backstage TechDocs site and publishes "
    "it (instead of the site's Pages workflow).",
)
@click.option(
    "--engine",
    type=click.Choice(["mkdocs", "zensical"]),
    help="With --ci: what the workflow builds the site with (default: the tree's [site] "
    "engine in memsite.toml, else mkdocs).",
)
@click.option(
    "--claude",
    is_flag=True,
    help="Also write (or merge into) the project's .claude/settings.json: memsite's hooks for "
    "every Claude Code event, calling this memsite by its absolute path.",
)
@click.option(
    "--codex",
    is_flag=True,
    help="Also write (or merge into) the project's .codex/hooks.json: memsite's hooks for "
    "every Codex event, calling this memsite by its absolute path.",
)
@click.option(
    "--qwen",
    is_flag=True,
    help="Also write (or merge into) the project's .qwen/settings.json: memsite's hooks for "
    "Qwen Code (hook --harness qwen), calling this memsite by its absolute path.",
)
@click.option(
    "--copilot",
    is_flag=True,
    help="Also write (or merge into) the project's .github/hooks/memsite.json: memsite's hooks "
    "for every GitHub Copilot CLI event, calling this memsite by its absolute path.",
)
@click.option(
    "--gemini",
    is_flag=True,
    help="Also write (or merge into) the project's .gemini/settings.json: memsite's hooks for "
    "Gemini CLI (hook --harness gemini), calling this memsite by its absolute path.",
)
@RECORDS
@click.pass_context
def init(
    ctx: click.Context,
    directory: str | None,
    ci: str | None,
    install: str | None,
    techdocs: bool,
    engine: str | None,
    claude: bool,
    codex: bool,
    qwen: bool,
    copilot: bool,
    gemini: bool,
) -> None:
    """Create a memory tree (never overwrites anything)."""
    from ..store.tree import init_tree

    if install is not None and not ci:
        raise click.UsageError("--install is for the CI workflow: give --ci github or gitlab too")
    if techdocs and not ci:
        raise click.UsageError("--techdocs is for the CI workflow: give --ci github or gitlab too")
    if engine is not None and not ci:
        raise click.UsageError("--engine is for the CI workflow: give --ci github or gitlab too")
    if engine == "zensical" and techdocs:
        raise click.UsageError("--techdocs builds with MkDocs (techdocs-core): drop --engine")

    # init never searches upwards: it makes ./memory unless told where (issue 10); but a tree
    # that already serves this folder is named, not doubled (issue 39.1)
    named = directory or explicit_root(ctx)
    if named is None:
        _refuse_a_second_tree()
    target = Path(named or "memory")
    if ci:
        from ..site import workflows

        how = workflows.given_install(install) if install else workflows.this_install(Path.cwd())
        workflows.check_names(ci, target.as_posix(), how)  # before anything is written
    add_records(ctx, target)
    created, kept = init_tree(target)
    for rel in created:
        click.echo(f"created {target / rel}")
    for rel in kept:
        click.echo(f"kept    {target / rel} (already there)")
    from ..store.git import hot_ignored, ignore_outputs, keep_union_merges_whole

    click.echo(hot_ignored(target))  # said to be ignored only when it is (issue 25.3)
    said = keep_union_merges_whole(target)
    if said:
        click.echo(said)
    ignored = ignore_outputs(Path.cwd())
    if ignored:
        click.echo(f"added {', '.join(ignored)} to .gitignore (what memsite builds, not memory)")
    if claude:
        from ..agents.settings import write_settings

        _write_hooks(target, write_settings, "Claude Code")
    for wanted, name, title in (
        (codex, "codex", "Codex"),
        (qwen, "qwen", "Qwen Code"),
        (copilot, "copilot", "Copilot CLI"),
        (gemini, "gemini", "Gemini CLI"),
    ):
        if wanted:  # each CLI's writer loads only when its option was given
            writer = importlib.import_module(f"memsite.agents.harnesses.setup.{name}")
            _write_hooks(target, writer.write_hooks, title)
            click.echo(f"note: {writer.NOTE}")
    if ci:
        from ..site.publish.zensical import engine as site_engine

        engine = engine or ("mkdocs" if techdocs else site_engine(target, None))
        path, created = workflows.write_workflow(
            Path.cwd(), ci, target.as_posix(), how, techdocs=techdocs, engine=engine
        )
        if not created:
            click.echo(f"kept    {path} (already there; remove it to write it again)")
            return
        click.echo(f"created {path}; CI installs memsite with: {how.command}")
        if not how.known:
            click.echo(
                f"edit {path}: memsite could not tell where it was installed from; replace "
                f"{how.spec} with a pip requirement, or run memsite init --ci {ci} --install SPEC"
            )


def _write_hooks(target: Path, write: Callable[[Path], tuple[Path, bool]], harness: str) -> None:
    """Write or merge an agent CLI's hooks configuration in the repository of ``target``."""
    from ..store.code import repository_root

    try:
        path, changed = write(repository_root(target))
    except MemsiteError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"{'wrote' if changed else 'kept   '} {path} (memsite's {harness} hooks)")


def _refuse_a_second_tree() -> None:
    """Refuse a bare ``init`` below (or inside) a tree that every command run here would use:
    the new ``./memory`` would silently take its place for this folder only."""
    from ..store.tree import find_root

    try:
        existing = find_root(Path("."))
    except MemsiteError:
        return
    if existing == Path("memory"):
        return  # this folder's own tree: init again keeps what is there
    raise click.ClickException(
        f"a memory tree already serves this folder: {existing}; commands run here use it. "
        "To make a second tree deliberately, name its folder: memsite init DIR"
    )
