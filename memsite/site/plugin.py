"""The ``memsite`` MkDocs plugin: a thin adapter that hands the pages of ``pages`` to MkDocs.

Every event is a line or two; the work happens in plain code (``pages``, ``safety``,
``fallback``).
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
from pathlib import Path
from typing import Any

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel

from ..errors import MemsiteError
from ..search.index.place import default_cache_dir
from . import fallback
from .escaping import title_text
from .indexes import NOTES_IN_NAV
from .pages import Site, build_site
from .publish.folders import site_refusal
from .render import Renderer
from .safety import (
    attribute_url,
    content_policy,
    find_leaks,
    page_settings,
    plain_title,
    sanitize,
    with_policy,
)
from .search_index import exclude_navigation, write_index

ASSETS = Path(__file__).resolve().parent / "assets"
STYLESHEET = "assets/memsite/memsite.css"
SHIM = "assets/memsite/iframe-worker/shim.js"
# Material's page configuration names its lunr worker; the sharded index has its own.
MATERIAL_WORKER = re.compile(r'("search": "[^"]*?)assets/javascripts/workers/search\.\w+\.min\.js"')
SEARCH_WORKER = "assets/memsite/search-worker.js"
# ``memsite build/serve --root`` names the tree for a config that names another one.
ROOT_VARIABLE = "MEMSITE_SITE_ROOT"
EXTENSIONS = ["attr_list", "admonition", "tables", "md_in_html", "def_list", "pymdownx.details"]


class MemsiteConfig(Config):
    root = c.Type(str, default="memory")
    templates_dir = c.Optional(c.Type(str))
    exclude = c.ListOfItems(c.Type(str), default=[])
    related = c.Type(bool, default=True)
    allow_secrets = c.Type(bool, default=False)
    remote_images = c.Type(bool, default=False)
    notes_in_nav = c.Type(int, default=NOTES_IN_NAV)
    search_shards = c.Type(bool, default=True)


class MemsitePlugin(BasePlugin[MemsiteConfig]):
    """Adds the memory site's pages to any MkDocs build (``plugins: [memsite]``)."""

    def __init__(self) -> None:
        self.site: Site | None = None
        self.titles: dict[str, str] = {}
        self.generated: set[str] = set()

    def _path(self, config: Any, value: str) -> Path:
        base = Path(config.config_file_path or ".").resolve().parent
        return (base / value).resolve()

    @property
    def root(self) -> Path:
        return self._root

    def site_refusal(self, config: Any) -> str | None:
        """Why the build may not empty ``config``'s site folder (``folders.site_refusal``:
        the project, the current folder, the tree or its cache, files no build wrote)."""
        root = self._path(config, os.environ.get(ROOT_VARIABLE) or self.config.root)
        return site_refusal(Path(config.site_dir), root, default_cache_dir(root), "site_dir")

    @event_priority(100)  # before Material's offline plugin looks for an iframe-worker shim
    def on_config(self, config: Any) -> Any:
        try:  # Material prints these raw into every page: the repository's config is escaped too
            config.update(page_settings(config, config.config_file_path or "mkdocs.yml"))
        except MemsiteError as err:
            raise PluginError(f"memsite: {err}") from None
        self._root = self._path(config, os.environ.get(ROOT_VARIABLE) or self.config.root)
        # MkDocs empties the site folder next (`mkdocs build` with this plugin too)
        refused = self.site_refusal(config)
        if refused is not None:
            raise PluginError(refused)
        folder = self.config.templates_dir
        self.renderer = Renderer(
            self._path(config, folder) if folder else None, images=self.config.remote_images
        )
        self.policy = content_policy(remote_images=self.config.remote_images)
        for name in EXTENSIONS:
            if name not in config.markdown_extensions:
                config.markdown_extensions.append(name)
        config.extra_css.append(STYLESHEET)
        if any(name.endswith("offline") for name in config.plugins):
            polyfills = config.extra.setdefault("polyfills", [])
            if not any("iframe-worker" in url for url in polyfills):
                polyfills.append(SHIM)
        return config

    def on_files(self, files: Files, config: Any) -> Files:
        try:
            self.site = build_site(
                self.root,
                dt.datetime.now(),
                renderer=self.renderer,
                exclude=self.config.exclude,
                related=self.config.related,
                notes_in_nav=self.config.notes_in_nav,
                repo_url=config.repo_url,
            )
        except MemsiteError as err:
            raise PluginError(f"memsite: {err}") from None
        self._refuse_secrets()
        for page in self.site.pages:
            inclusion = InclusionLevel.UNDEFINED if page.in_nav else InclusionLevel.NOT_IN_NAV
            files.append(
                File.generated(config, page.uri, content=page.markdown, inclusion=inclusion)
            )
        for asset in sorted(p for p in ASSETS.rglob("*") if p.is_file()):
            uri = "assets/memsite/" + asset.relative_to(ASSETS).as_posix()
            if files.get_file_from_path(uri) is None:
                files.append(File.generated(config, uri, abs_src_path=str(asset)))
        if config.nav is None:
            config.nav = self.site.nav + _user_pages(files, self.site)
        # Pages in the nav take their (escaped) title from it; the others from here.
        self.titles = {page.uri: page.title for page in self.site.pages if not page.in_nav}
        self.generated = {page.uri for page in self.site.pages}
        return files

    def _refuse_secrets(self) -> None:
        assert self.site is not None
        if self.config.allow_secrets:
            return
        leaks = find_leaks(self.root, self.site.sources)
        if leaks:
            listed = "; ".join(str(leak) for leak in leaks[:10])
            more = f" and {len(leaks) - 10} more" if len(leaks) > 10 else ""
            raise PluginError(
                f"refusing to publish secrets from {self.root}: {listed}{more}; remove them "
                "(or pass --allow-secrets / set the plugin's allow_secrets: true)"
            )

    def on_page_markdown(self, markdown: str, page: Any, config: Any, files: Files) -> str:
        if page.edit_url:  # a file name of the docs_dir may hold a quote
            page.edit_url = attribute_url(page.edit_url)
        if page.file.src_uri in self.generated:
            if "title" in page.meta:  # Material writes a page's meta title unescaped
                page.meta["title"] = title_text(str(page.meta["title"]))
            # MkDocs has no event around rendering: a page that fails is rendered again with
            # an error block in place of each failing entry, rather than stopping the build
            page.render = functools.partial(fallback.render_or_isolate, page.render, page)
        return markdown

    def on_page_content(self, html_text: str, page: Any, config: Any, files: Files) -> str:
        if page.file.src_uri not in self.generated:
            return html_text
        if page.file.src_uri in self.titles:
            page.title = title_text(self.titles[page.file.src_uri])
        return exclude_navigation(sanitize(html_text, images=self.config.remote_images))

    def on_post_page(self, output: str, page: Any, config: Any) -> str:
        output = plain_title(output, page.title, page.meta.get("title"), config.site_name)
        return with_policy(self._worker(output), self.policy)

    def on_post_template(self, output: str, template_name: str, config: Any) -> str:
        if not template_name.endswith(".html"):
            return output
        return with_policy(self._worker(output), self.policy)

    def _worker(self, output: str) -> str:
        """A page whose search box asks memsite's worker (the sharded index), not lunr's."""
        if not self.config.search_shards:
            return output
        return MATERIAL_WORKER.sub(lambda m: f'{m.group(1)}{SEARCH_WORKER}"', output, count=1)

    @event_priority(-50)  # after Material's search writes its index, before offline inlines it
    def on_post_build(self, config: Any) -> None:
        successors = self.site.successors if self.site is not None else {}
        write_index(Path(config.site_dir), sharded=self.config.search_shards, successors=successors)

    def on_serve(self, server: Any, config: Any, builder: Any) -> Any:
        server.watch(str(self.root))
        return server


def _user_pages(files: Files, site: Site) -> list[str]:
    """Pages of the docs_dir that the plugin did not make, listed after its own."""
    generated = {page.uri for page in site.pages}
    return sorted(
        f.src_uri
        for f in files.documentation_pages()
        if f.src_uri not in generated and f.inclusion.is_in_nav()
    )
