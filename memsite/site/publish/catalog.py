"""The Backstage catalog entity of a memory's TechDocs (``catalog-info.yaml``, issue 28).

A repository registered in Backstage already has one more often than not; that file is the
team's, so it is never rewritten: the annotation it needs is said instead.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import BadValue

CATALOG = "catalog-info.yaml"
ANNOTATION = "backstage.io/techdocs-ref"
# Backstage's rule for an entity name: 1 to 63 letters, digits and "-_.", alphanumeric at
# both ends; an owner is an entity reference, "[kind:][namespace/]name"
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?")
_OWNER = re.compile(r"(?:[A-Za-z0-9_.-]+:)?(?:[A-Za-z0-9_.-]+/)?[A-Za-z0-9](?:[A-Za-z0-9_.-]*)")
UNKNOWN_OWNER = "unknown"


@dataclass(frozen=True)
class Catalog:
    """What became of the entity: ``written`` (the new file) or ``kept`` (a file that was
    already there, with the ``annotation`` line to add to its ``metadata.annotations``)."""

    name: str
    owner: str
    written: Path | None = None
    kept: Path | None = None
    annotation: str = ""


def component_name(name: str) -> str:
    """``name`` checked as a Backstage entity name (``--component``)."""
    if not _NAME.fullmatch(name):
        raise BadValue(
            f"--component {name!r}: a Backstage name is 1 to 63 letters, digits, '-', '_' "
            "or '.', starting and ending with a letter or digit"
        )
    return name


def default_name(title: str) -> str:
    """A component name made from a title (``"Shop memory"`` -> ``shop-memory``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:63].strip("-")
    return slug or "memory"


def owner_ref(owner: str) -> str:
    """``owner`` checked as a Backstage entity reference (``--owner``)."""
    if not _OWNER.fullmatch(owner) or len(owner) > 253:
        raise BadValue(
            f"--owner {owner!r}: give a Backstage owner such as team-a or group:default/team-a"
        )
    return owner


def render_catalog(name: str, title: str, owner: str) -> str:
    """The text of a ``catalog-info.yaml`` for a Component whose TechDocs are beside it."""
    import yaml

    entity = {
        "apiVersion": "backstage.io/v1alpha1",
        "kind": "Component",
        "metadata": {
            "name": name,
            "title": title,
            "description": "What this team and its agents decided, learned and did (memsite).",
            "annotations": {ANNOTATION: "dir:."},
        },
        "spec": {"type": "documentation", "lifecycle": "production", "owner": owner},
    }
    header = "# Written by `memsite build --techdocs`: register this file in Backstage.\n"
    return header + yaml.safe_dump(entity, sort_keys=False, allow_unicode=True)


def write_catalog(out: Path, repo: Path, name: str, title: str, owner: str) -> Catalog:
    """Write ``out/catalog-info.yaml`` unless ``out`` or the repository ``repo`` already has
    one; then the annotation that file needs is returned instead (its ``dir:`` is where the
    TechDocs source is, seen from that file)."""
    for folder in dict.fromkeys([out.resolve(), repo.resolve()]):
        existing = folder / CATALOG
        if existing.exists():
            where = Path(os.path.relpath(out.resolve(), folder)).as_posix()
            ref = "." if where == "." else f"./{where}"
            return Catalog(name, owner, kept=existing, annotation=f"{ANNOTATION}: dir:{ref}")
    path = out / CATALOG
    with open(path, "x", encoding="utf-8") as handle:  # "x": a file that appeared stays
        handle.write(render_catalog(name, title, owner))
    return Catalog(name, owner, written=path)
