"""``memsite init --records DIR`` (issue 26): the option, and the ``[records]`` table it adds
to ``memsite.toml``, each folder checked before anything is written."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import MemsiteError


def _keep(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    ctx.meta["records"] = value


RECORDS = click.option(
    "--records",
    multiple=True,
    metavar="DIR",
    expose_value=False,
    callback=_keep,
    help="A folder of decision records (ADRs) to read in place as decisions: added to "
    "[records] in memsite.toml. Repeat for more.",
)


def add_records(ctx: click.Context, target: Path) -> None:
    """Name the ``--records`` folders in the ``[records]`` table of the tree at ``target``
    (made now if it is not there yet), and say so; a folder that cannot be read as records
    is a usage error, before anything is written."""
    from ..store.records import add_folders, folder_setting

    try:
        folders = [folder_setting(target, Path(folder)) for folder in ctx.meta["records"]]
    except MemsiteError as err:
        message = str(err).removeprefix("--records ")
        raise click.BadParameter(message, param_hint="--records") from None
    if not folders:
        return
    try:
        added = add_folders(target, folders)
    except MemsiteError as err:
        raise click.ClickException(str(err)) from None
    for rel in added:
        click.echo(f"records {rel} are read as decisions ([records] in {target}/memsite.toml)")
