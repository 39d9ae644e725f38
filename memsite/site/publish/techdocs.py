"""``memsite build --techdocs DIR``: the memory as a source Backstage TechDocs builds as it is
(issue 28).

It is the ``--docs-only`` export (escaped pages, secrets refused) with four changes: the
configuration's plugins are TechDocs' (``techdocs-core``, which brings its own search and
theme settings), memsite's browser scripts are left out (TechDocs searches in the portal and
runs no page script), each page has the trigger syntax of TechDocs' extra extensions made
text (:mod:`.inert`), and the nav's labels are plain text: they are the pages' titles in
the portal's search index, where a note titled ``**bold**`` kept its asterisks (issue 34).
Beside it goes a ``catalog-info.yaml`` (:mod:`.catalog`).
"""

from __future__ import annotations

import datetime as dt
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...search.headings import inline_text
from ..builder import CONFIG, export_docs
from ..escaping import title_text
from .catalog import UNKNOWN_OWNER, Catalog, component_name, default_name, owner_ref
from .catalog import write_catalog as _write_catalog
from .inert import inert

PLUGIN = "techdocs-core"
DEFAULT_TITLE = "Memory"
# memsite's own scripts: the search worker and the polyfill that runs it from file:// pages
_SCRIPTS = ("search-worker.js", "iframe-worker")


@dataclass(frozen=True)
class TechDocs:
    """What the export wrote, and what became of the catalog entity."""

    written: list[Path]
    catalog: Catalog
    title: str


def techdocs_config(config: dict[str, Any], title: str) -> dict[str, Any]:
    """The export's configuration made TechDocs': its plugin, no palette or JavaScript-only
    Material features (``techdocs-core`` adds the footer and edit features it supports) and no
    polyfill. (Emoji shortcodes are made text in the pages, :mod:`.inert`: TechDocs accepts no
    ``!!python/name:`` that would choose another emoji generator.)"""
    out = dict(config)
    out["site_name"] = title
    out["site_description"] = "Decisions, learnings and activity kept by memsite."
    out["theme"] = {"name": "material", "font": False, "icon": {"logo": "material/brain"}}
    out["plugins"] = [PLUGIN]
    out.pop("extra", None)
    if "nav" in out:
        out["nav"] = plain_nav(out["nav"])
    return out


def plain_nav(nav: Any) -> Any:
    """``nav`` with each label the plain text of its markdown (``Use **b** `c``` is ``Use b
    c``), still escaped as MkDocs takes a title (:func:`~..escaping.title_text`)."""
    if isinstance(nav, list):
        return [plain_nav(item) for item in nav]
    if isinstance(nav, dict):
        return {_plain_label(label): plain_nav(item) for label, item in nav.items()}
    return nav


def _plain_label(label: str) -> str:
    plain = inline_text(label)
    return title_text(plain) if plain else label


def configured_title(config_file: Path | None, root: Path) -> str | None:
    """The ``site_name`` of the MkDocs configuration ``memsite build`` would use, if any."""
    import yaml

    candidates = [config_file] if config_file else [Path(CONFIG), root.parent / CONFIG]
    for path in candidates:
        if path is not None and path.is_file():

            class Loader(yaml.SafeLoader):
                pass

            # a project's mkdocs.yml may hold !!python/name: and !ENV tags: read past them
            Loader.add_multi_constructor("", lambda loader, suffix, node: None)
            try:
                data = yaml.load(path.read_text("utf-8"), Loader=Loader)  # noqa: S506
            except (yaml.YAMLError, UnicodeDecodeError, OSError):
                return None
            name = data.get("site_name") if isinstance(data, dict) else None
            return " ".join(name.split()) if isinstance(name, str) and name.strip() else None
    return None


def default_component(title: str | None, repo: Path) -> str:
    """The component name when none is given: the configured site's, else the repository's
    folder name and ``-memory`` (each team's memory a name of its own in one portal)."""
    return default_name(title) if title else default_name(f"{repo.resolve().name}-memory")


def export_techdocs(
    root: Path,
    out: Path,
    now: dt.datetime,
    *,
    repo: Path,
    title: str | None = None,
    component: str | None = None,
    owner: str | None = None,
    allow_secrets: bool = False,
) -> TechDocs:
    """Write the TechDocs source of ``root`` into ``out``: ``docs/``, ``mkdocs.yml`` and,
    unless ``out`` or ``repo`` has one, ``catalog-info.yaml``."""
    import yaml

    name = component_name(component) if component else default_component(title, repo)
    owner = owner_ref(owner) if owner else UNKNOWN_OWNER
    title = title or DEFAULT_TITLE
    written = export_docs(root, out, now, allow_secrets=allow_secrets)
    assets = out / "docs" / "assets" / "memsite"
    for script in _SCRIPTS:
        path = assets / script
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    written = [path for path in written if path.exists()]
    for path in written:
        if path.suffix == ".md":
            path.write_text(inert(path.read_text("utf-8")), "utf-8")
    config_path = out / CONFIG
    config = techdocs_config(yaml.safe_load(config_path.read_text("utf-8")), title)
    text = yaml.safe_dump(config, allow_unicode=True, sort_keys=False)
    config_path.write_text(text, "utf-8")
    catalog = _write_catalog(out, repo, name, title, owner)
    if catalog.written is not None:
        written.append(catalog.written)
    return TechDocs(written, catalog, title)
