"""Where a build or an export may write (the sweep after issue 36).

A build replaces its site folder whole (MkDocs empties it first, Zensical's is swapped in),
so ``--site-dir .`` or ``--site-dir ""`` in a project deleted the project and its memory
tree. An export writes ``mkdocs.yml`` and ``docs/`` into its folder, over what was there.
Each function returns why a folder is refused, or None; its caller raises.
"""

from __future__ import annotations

from pathlib import Path

from ...store import reading
from ...store.reading import real_path

# what a folder a build wrote holds beside its index.html (MkDocs and Zensical write both)
_BUILT = ("404.html", "sitemap.xml", "sitemap.xml.gz")
_OURS = "assets/memsite"  # an export's assets folder, under docs/, named in its mkdocs.yml


def site_refusal(
    site_dir: Path, root: Path, cache: Path | None = None, name: str = "--site-dir"
) -> str | None:
    """Why a build may not replace ``site_dir`` with the site of the tree ``root`` (its index
    in ``cache``), or None: it holds the tree or the cache or lies inside the tree, it is the
    current folder or holds it, or it holds files that are not a site a build wrote."""
    site, tree = real_path(site_dir), real_path(root)
    held = [tree, *([real_path(cache)] if cache is not None else [])]
    if any(site == path or site in path.parents for path in held) or tree in site.parents:
        return (
            f"{name} {site_dir} holds the memory tree or its cache, or lies inside the tree, "
            "and the site replaces it whole: give a folder of its own (default: site/ beside "
            "the tree)"
        )
    here = real_path(Path.cwd())
    if site == here or site in here.parents:
        return (
            f"{name} {site_dir} is the current folder or holds it, and the site replaces it "
            "whole: give a folder of its own (default: site/ beside the tree)"
        )
    if site.is_dir() and not _replaceable(site):
        return (
            f"{name} {site_dir} holds files that are not a site a build wrote, and the site "
            "replaces it whole: give an empty folder or a new one"
        )
    return None


def _replaceable(site: Path) -> bool:
    """Whether ``site`` is empty or holds a site a build wrote."""
    try:
        if not any(site.iterdir()):
            return True
    except OSError:
        return False
    return (site / "index.html").is_file() and any((site / n).is_file() for n in _BUILT)


def export_refusal(out: Path, root: Path, name: str) -> str | None:
    """Why an export may not write ``mkdocs.yml`` and ``docs/`` into ``out``, or None: it is
    the tree or lies inside it (its pages would become memory), or it holds an
    ``mkdocs.yml`` or a ``docs/`` that an export did not write."""
    folder, tree = real_path(out), real_path(root)
    if folder == tree or tree in folder.parents:
        return f"{name} {out} is the memory tree or lies inside it: give a folder outside it"
    config, docs = folder / "mkdocs.yml", folder / "docs"
    if config.exists() and not _exported(config):
        return (
            f"{name} {out} holds an mkdocs.yml that memsite did not export, which the export "
            "would overwrite: give another folder"
        )
    try:
        foreign = docs.is_dir() and any(docs.iterdir()) and not (docs / _OURS).is_dir()
    except OSError:
        foreign = True
    if foreign:
        return (
            f"{name} {out} holds a docs/ folder that memsite did not export, whose pages the "
            "export would overwrite: give another folder"
        )
    return None


def _exported(config: Path) -> bool:
    """Whether ``config`` is an ``mkdocs.yml`` an export wrote: read as the tree's files are
    (a FIFO so named would wait for a writer for ever; one past a megabyte is no export's)."""
    try:
        return _OURS in reading.read_regular(config, limit=1 << 20).decode("utf-8", "replace")
    except (OSError, reading.NotAFile, reading.TooLarge):
        return False
