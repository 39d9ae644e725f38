"""The front doors of ``memsite build`` and ``memsite serve``, and the docs-only export.

They use ``./mkdocs.yml`` when there is one, else a built-in configuration (written to a
temporary folder for the length of the run, since MkDocs reads its configuration from a
file and ``serve`` re-reads it on every rebuild).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import MemsiteError, NotFound
from ..store.tree import check_root, find_root

CONFIG = "mkdocs.yml"
# the ProperDocs the tests build with, providing MkDocs (tests/test_properdocs.py, .ci/run)
PROPERDOCS = "properdocs==1.6.7"


class BuildFailed(MemsiteError):
    """MkDocs refused to build the site (a secret, a broken link under --strict, ...)."""


def provide_mkdocs() -> str:
    """Make ``import mkdocs`` work and return the name its loggers go by: MkDocs' own, or
    ProperDocs' (issue 38), the maintained fork of MkDocs 1.6, when it is installed without
    MkDocs: its ``replacement`` module makes every ``mkdocs.*`` import load ``properdocs.*``,
    as its own command does, so the plugin and Material run on it unchanged."""
    import importlib
    import importlib.util

    if "mkdocs" not in sys.modules and importlib.util.find_spec("mkdocs") is None:
        if importlib.util.find_spec("properdocs") is None:
            raise BuildFailed("site not built: neither MkDocs nor ProperDocs is installed")
        importlib.import_module("properdocs.replacement")
    return importlib.import_module("mkdocs").__name__


def theme() -> dict[str, Any]:
    """Material, offline-friendly (no web fonts), with tabs and a light/dark toggle."""
    return {
        "name": "material",
        "font": False,
        "features": [
            "navigation.tabs",
            "navigation.top",
            "navigation.footer",
            "search.highlight",
            "search.suggest",
            "content.code.copy",
        ],
        "icon": {"logo": "material/brain"},
        "palette": [
            {
                "media": "(prefers-color-scheme: light)",
                "scheme": "default",
                "primary": "indigo",
                "accent": "indigo",
                "toggle": {"icon": "material/weather-night", "name": "Switch to dark mode"},
            },
            {
                "media": "(prefers-color-scheme: dark)",
                "scheme": "slate",
                "primary": "indigo",
                "accent": "indigo",
                "toggle": {"icon": "material/weather-sunny", "name": "Switch to light mode"},
            },
        ],
    }


MARKDOWN_EXTENSIONS: list[Any] = [
    "attr_list",
    "admonition",
    "tables",
    "md_in_html",
    "def_list",
    {"toc": {"permalink": True}},
    "pymdownx.details",
    "pymdownx.superfences",
    "pymdownx.tasklist",
]


def site_name(root: Path) -> str:
    """The site's name without a configuration: the memory of the git repository that holds the
    tree, by the repository's folder name (``shop memory``), else ``Memory`` (issue 39.6: every
    project's site was called Memory)."""
    from ..store.code import is_repository, repository_root

    repo = repository_root(root)
    name = " ".join(repo.name.split())
    return f"{name} memory" if is_repository(repo) and name else "Memory"


def default_config(root: Path, docs_dir: Path, site_dir: Path) -> dict[str, Any]:
    """The configuration used where there is no ``mkdocs.yml``."""
    return {
        "site_name": site_name(root),
        "docs_dir": str(docs_dir),
        "site_dir": str(site_dir),
        "theme": theme(),
        "plugins": ["search", "offline", {"memsite": {"root": str(root.resolve())}}],
        "markdown_extensions": MARKDOWN_EXTENSIONS,
    }


@contextlib.contextmanager
def _config_file(
    root: Path | None, site_dir: Path | None, config_file: Path | None
) -> Iterator[Path]:
    if config_file is not None:
        if not config_file.is_file():
            raise NotFound(f"{config_file}: no such MkDocs configuration")
        yield config_file
        return
    if Path(CONFIG).is_file():
        yield Path(CONFIG).resolve()
        return
    if root is None:
        # the tree is found from here up, as git finds .git (issue 10); a project's own
        # mkdocs.yml beside it is used, and the site goes beside it, as from the project's top
        root = find_root(Path("."))
        if (root.parent / CONFIG).is_file():
            yield (root.parent / CONFIG).resolve()
            return
    # beside the tree, wherever the command runs: --root names the tree, not the folder the
    # site goes to (issue 39.7)
    site_dir = site_dir or root.parent / "site"
    import yaml

    check_root(root)
    with tempfile.TemporaryDirectory(prefix="memsite-config-") as folder:
        docs = Path(folder, "docs")
        docs.mkdir()
        path = Path(folder, CONFIG)
        path.write_text(
            yaml.safe_dump(default_config(root, docs, (site_dir or Path("site")).resolve())),
            "utf-8",
        )
        yield path


@contextlib.contextmanager
def _root_override(root: Path | None) -> Iterator[None]:
    from .plugin import ROOT_VARIABLE

    if root is None:  # the configuration names the tree
        yield
        return
    check_root(root)
    before = os.environ.get(ROOT_VARIABLE)
    os.environ[ROOT_VARIABLE] = str(root.resolve())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ROOT_VARIABLE, None)
        else:
            os.environ[ROOT_VARIABLE] = before


def build(
    root: Path | None,
    *,
    site_dir: Path | None = None,
    strict: bool = False,
    allow_secrets: bool = False,
    config_file: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Build the site; returns the site folder. ``root`` overrides the configuration's tree
    (``None``: the one ``mkdocs.yml`` names, or the ``memory/`` found from here up).
    ``progress`` hears (pages written, pages) as the pages are written."""
    logger = provide_mkdocs()
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError, PluginError

    with _config_file(root, site_dir, config_file) as path, _root_override(root):
        overrides: dict[str, Any] = {"strict": strict}
        if site_dir is not None:
            overrides["site_dir"] = str(site_dir.resolve())
        # the problems of loading the configuration too: an invalid one aborts before the build
        with _problems(logger) as problems:
            try:
                config = load_config(config_file=str(path), **overrides)
                plugin = config.plugins.get("memsite")
                if plugin is None:
                    raise BuildFailed(f"{path}: add the memsite plugin under plugins:")
                plugin.config.allow_secrets = allow_secrets or plugin.config.allow_secrets
                refused = plugin.site_refusal(config)  # before MkDocs empties the folder
                if refused is not None:
                    raise BuildFailed(f"site not built: {refused}")
                if progress is not None:
                    config.plugins["memsite-progress"] = _page_progress(progress)
                mkdocs_build(config)
            except (PluginError, ConfigurationError) as err:
                raise BuildFailed(f"site not built: {err}") from None
            except Abort as err:
                reasons = "; ".join(problems) or str(err)
                raise BuildFailed(f"site not built: {reasons}") from None
        return Path(config.site_dir)


def _page_progress(progress: Callable[[int, int], None]) -> Any:
    """A plugin, added by :func:`build` rather than configured, that counts pages written."""
    from mkdocs.plugins import BasePlugin

    class PageProgress(BasePlugin):  # type: ignore[type-arg]
        total = done = 0

        def on_env(self, env: Any, config: Any, files: Any) -> Any:
            self.total, self.done = len(files.documentation_pages()), 0
            return env

        def on_post_page(self, output: str, page: Any, config: Any) -> str:
            self.done += 1
            progress(self.done, self.total)
            return output

        def on_post_build(self, config: Any) -> None:
            progress(self.total, self.total)

        def on_build_error(self, error: Exception) -> None:
            progress(self.total, self.total)

    return PageProgress()


@contextlib.contextmanager
def _problems(name: str) -> Iterator[list[str]]:
    """Collect MkDocs' warnings and errors, to name them when the build aborts."""
    import logging

    found: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(record.getMessage())

    handler = Collect(logging.WARNING)
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    try:
        yield found
    finally:
        logger.removeHandler(handler)


def serve(
    root: Path | None, *, dev_addr: str | None = None, config_file: Path | None = None
) -> None:
    """Serve the site with live reload; a change to any file of the tree rebuilds it (the
    plugin adds the tree to the watched paths)."""
    provide_mkdocs()
    from mkdocs.commands.serve import serve as mkdocs_serve

    with _config_file(root, None, config_file) as path, _root_override(root), _stop_on_term():
        options: dict[str, Any] = {"dev_addr": dev_addr} if dev_addr else {}
        mkdocs_serve(config_file=str(path), **options)


@contextlib.contextmanager
def _stop_on_term() -> Iterator[None]:
    """SIGTERM stops ``serve`` as Ctrl-C does, so the temporary configuration folder (and
    MkDocs' temporary site) are removed on the way out instead of left behind (issue 13)."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        before = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def export_docs(
    root: Path,
    out: Path,
    now: dt.datetime,
    *,
    exclude: list[str] | None = None,
    allow_secrets: bool = False,
) -> list[Path]:
    """Write the generated pages and assets as plain markdown under ``out/docs`` with an
    ``out/mkdocs.yml`` that needs no memsite plugin (for other MkDocs-compatible builders)."""
    import yaml

    from .pages import build_site
    from .plugin import ASSETS, SHIM, STYLESHEET
    from .safety import find_leaks

    check_root(root)
    site = build_site(root, now, exclude=exclude or ())
    leaks = [] if allow_secrets else find_leaks(root, site.sources)
    if leaks:
        listed = "; ".join(str(leak) for leak in leaks[:10])
        raise BuildFailed(f"refusing to export secrets from {root}: {listed}; remove them")
    docs = out / "docs"
    written = []
    for page in site.pages:
        path = docs / page.uri
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page.markdown, "utf-8")
        written.append(path)
    assets = docs / "assets" / "memsite"
    shutil.copytree(ASSETS, assets, dirs_exist_ok=True)
    written += [p for p in assets.rglob("*") if p.is_file()]
    config = default_config(root, Path("docs"), Path("site"))
    config["plugins"] = ["search", "offline"]
    config["extra_css"] = [STYLESHEET]
    config["extra"] = {"polyfills": [SHIM]}
    config["nav"] = site.nav
    config["not_in_nav"] = "\n".join(f"/{p.uri}" for p in site.pages if not p.in_nav)
    (out / CONFIG).write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), "utf-8")
    written.append(out / CONFIG)
    return written
