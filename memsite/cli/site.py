"""Commands that publish memory: build and serve the site (issue 4)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path

import click

from ..store.tree import find_root
from .app import cli, progress
from .options import validate_address


def _explicit_root(ctx: click.Context) -> Path | None:
    """The tree named by --root or $MEMSITE_ROOT; None lets mkdocs.yml name it."""
    named = ctx.find_root().params.get("root") or os.environ.get("MEMSITE_ROOT")
    return Path(named) if named else None


@contextlib.contextmanager
def _mkdocs_log(level: str) -> Iterator[None]:
    """Let MkDocs' own messages (warnings; for serve, its address and rebuilds) reach stderr."""
    import logging  # ~3 ms at import time that the write commands never need

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("mkdocs: %(message)s"))
    logger = logging.getLogger("mkdocs")
    before = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)


config_file_option = click.option(
    "--config-file",
    "-f",
    type=click.Path(path_type=Path),
    help="MkDocs configuration (default: ./mkdocs.yml, else a built-in one).",
)


@cli.command()
@click.option(
    "--site-dir", type=click.Path(path_type=Path), help="Where to write the site (default: site/)."
)
@click.option("--strict", is_flag=True, help="Fail on any MkDocs warning (broken links, ...).")
@click.option(
    "--allow-secrets", is_flag=True, help="Publish even if a file holds a secret-looking string."
)
@click.option(
    "--docs-only",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Only write the pages as markdown (and a plugin-free mkdocs.yml) into DIR.",
)
@config_file_option
@click.pass_context
def build(
    ctx: click.Context,
    site_dir: Path | None,
    strict: bool,
    allow_secrets: bool,
    docs_only: Path | None,
    config_file: Path | None,
) -> None:
    """Build the memory site (MkDocs + Material); refuses to publish a secret."""
    from ..site import builder

    root = _explicit_root(ctx)
    if docs_only is not None:
        written = builder.export_docs(
            root or find_root(Path(".")), docs_only, dt.datetime.now(), allow_secrets=allow_secrets
        )
        click.echo(f"wrote {len(written)} files to {docs_only}")
        return
    with _mkdocs_log("WARNING"):
        site = builder.build(
            root,
            site_dir=site_dir,
            strict=strict,
            allow_secrets=allow_secrets,
            config_file=config_file,
            progress=progress(ctx, "writing pages"),
        )
    click.echo(f"built {site}")


@cli.command()
@click.option(
    "--dev-addr",
    metavar="IP:PORT",
    callback=validate_address,
    help="Address to serve on (default: 127.0.0.1:8000).",
)
@config_file_option
@click.pass_context
def serve(ctx: click.Context, dev_addr: str | None, config_file: Path | None) -> None:
    """Serve the site locally; it rebuilds when a memory file changes."""
    from ..site import builder

    with _mkdocs_log("INFO"):
        builder.serve(_explicit_root(ctx), dev_addr=dev_addr, config_file=config_file)
