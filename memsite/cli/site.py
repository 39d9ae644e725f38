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
    """Let MkDocs' own messages (warnings; for serve, its address and rebuilds) reach stderr
    (ProperDocs' when it provides MkDocs)."""
    import logging  # ~3 ms at import time that the write commands never need

    from ..site.builder import provide_mkdocs

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("mkdocs: %(message)s"))
    logger = logging.getLogger(provide_mkdocs())
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
@click.option(
    "--techdocs",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Write a Backstage TechDocs source into DIR: the pages, an mkdocs.yml for "
    "techdocs-core and a catalog-info.yaml (never over one already there).",
)
@click.option(
    "--component",
    metavar="NAME",
    help="With --techdocs: the Backstage component's name (default: from site_name, else "
    "REPOSITORY-memory).",
)
@click.option(
    "--owner", metavar="OWNER", help="With --techdocs: the component's owner (default: unknown)."
)
@click.option(
    "--engine",
    type=click.Choice(["mkdocs", "zensical"]),
    help="What builds the site: mkdocs (MkDocs + Material, the default) or zensical (the "
    "zensical extra); default: [site] engine of memsite.toml, else mkdocs.",
)
@config_file_option
@click.pass_context
def build(
    ctx: click.Context,
    site_dir: Path | None,
    strict: bool,
    allow_secrets: bool,
    docs_only: Path | None,
    techdocs: Path | None,
    component: str | None,
    owner: str | None,
    engine: str | None,
    config_file: Path | None,
) -> None:
    """Build the memory site (MkDocs + Material, or Zensical); refuses to publish a secret."""
    from ..site import builder

    root = _explicit_root(ctx)
    if engine is not None and (docs_only is not None or techdocs is not None):
        raise click.UsageError("--engine builds a site: give it without --docs-only or --techdocs")
    if techdocs is None and (component is not None or owner is not None):
        raise click.UsageError("--component and --owner are for --techdocs DIR: give it too")
    if techdocs is not None:
        if docs_only is not None:
            raise click.UsageError("--techdocs and --docs-only both export: give one of them")
        tree = root or find_root(Path("."))
        _techdocs(tree, techdocs, component, owner, config_file, allow_secrets)
        return
    if docs_only is not None:
        tree = root or find_root(Path("."))
        _refuse_export(docs_only, tree, "--docs-only")
        written = builder.export_docs(
            tree, docs_only, dt.datetime.now(), allow_secrets=allow_secrets
        )
        click.echo(f"wrote {len(written)} files to {docs_only}")
        return
    if docs_only is None and techdocs is None and _engine(root, engine) == "zensical":
        _zensical(root, site_dir, strict, allow_secrets, config_file)
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


def _engine(root: Path | None, given: str | None) -> str:
    """``--engine``, else the tree's ``[site] engine``; MkDocs when no tree is found from here
    (then ``mkdocs.yml`` names it)."""
    from ..errors import NotFound
    from ..site.publish import zensical

    if given is not None:
        return given
    try:
        tree = root or find_root(Path("."))
    except NotFound:
        return zensical.DEFAULT_ENGINE
    return zensical.engine(tree, None)


def _zensical(
    root: Path | None,
    site_dir: Path | None,
    strict: bool,
    allow_secrets: bool,
    config_file: Path | None,
) -> None:
    from ..errors import NotFound
    from ..site.publish import techdocs, zensical

    if config_file is not None and not config_file.is_file():  # as the MkDocs build says it
        raise NotFound(f"{config_file}: no such MkDocs configuration")
    tree = root or find_root(Path("."))
    if site_dir is None:  # where the MkDocs build writes it: beside the tree (issue 39.7)
        site_dir = tree.parent / "site"
    warnings = zensical.build_zensical(
        tree,
        site_dir,
        dt.datetime.now(),
        strict=strict,
        allow_secrets=allow_secrets,
        title=techdocs.configured_title(config_file, tree),
    )
    for warning in warnings:
        click.echo(f"zensical: {warning}", err=True)
    click.echo(f"built {site_dir.resolve()} (Zensical)")


def _refuse_export(out: Path, tree: Path, option: str) -> None:
    from ..site.builder import BuildFailed
    from ..site.publish.folders import export_refusal

    refused = export_refusal(out, tree, option)
    if refused is not None:
        raise BuildFailed(f"not exported: {refused}")


def _techdocs(
    root: Path,
    out: Path,
    component: str | None,
    owner: str | None,
    config_file: Path | None,
    allow_secrets: bool,
) -> None:
    from ..site.publish import techdocs
    from ..store.code import repository_root

    _refuse_export(out, root, "--techdocs")
    title = techdocs.configured_title(config_file, root)
    done = techdocs.export_techdocs(
        root,
        out,
        dt.datetime.now(),
        repo=repository_root(root),
        title=title,
        component=component,
        owner=owner,
        allow_secrets=allow_secrets,
    )
    click.echo(f"wrote {len(done.written)} files to {out} (a TechDocs source: techdocs-core)")
    catalog = done.catalog
    if catalog.written is not None:
        click.echo(f"wrote {catalog.written}: Component {catalog.name}, owner {catalog.owner}")
    else:
        click.echo(
            f"kept    {catalog.kept} (already there): add to its metadata.annotations: "
            f"{catalog.annotation}"
        )


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
    import errno

    from ..site import builder

    address = dev_addr or _configured_address(config_file or Path("mkdocs.yml"))
    try:
        _try_binding(address)  # before the build: refused in a moment, not after it (39.4)
        with _mkdocs_log("INFO"):
            builder.serve(_explicit_root(ctx), dev_addr=dev_addr, config_file=config_file)
    except OSError as err:  # the bare strerror named neither the address nor the fix (25.8)
        if err.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise
        raise click.ClickException(
            f"cannot serve on {address}: {err.strerror}; pass --dev-addr IP:PORT for another "
            "address (e.g. --dev-addr 127.0.0.1:8001)"
        ) from None


def _try_binding(address: str) -> None:
    """Bind ``address`` and let it go at once: ``OSError`` when the server could not bind it
    (in use, not this machine's, a privileged port). An address that does not parse is left
    to the server's own message."""
    import socket

    host, _, port = address.rpartition(":")
    try:
        found = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM)
    except (ValueError, socket.gaierror):
        return
    family, kind, proto, _, where = found[0]
    with socket.socket(family, kind, proto) as probe:
        # as the dev server binds: an address in TIME_WAIT is free to it
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(where)


def _configured_address(config: Path) -> str:
    """The ``dev_addr`` MkDocs serves on without ``--dev-addr``: the configuration's, else its
    default (read without YAML: a message needs no more)."""
    import re

    try:
        found = re.search(r"^dev_addr:\s*['\"]?([^'\"\s#]+)", config.read_text("utf-8"), re.M)
    except (OSError, UnicodeDecodeError):
        found = None
    return found.group(1) if found else "127.0.0.1:8000"
