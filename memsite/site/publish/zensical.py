"""``memsite build --engine zensical`` (issue 38): the whole site built by Zensical, the
successor Material's authors are writing, from the pages the MkDocs plugin renders.

Zensical reads ``mkdocs.yml`` and draws Material's look, but runs no MkDocs plugin: it builds
the ``--docs-only`` export (the same escaped pages, the secret gate before anything is
written) with the export's configuration. Given a list of markdown extensions, Zensical adds
only ``toc``, ``tables`` and ``pymdownx.superfences`` to it, which memsite's list already
holds: none of its defaults that would fetch or paste something (``pymdownx.snippets``,
``magiclink``, ``emoji``) nor the ``macros`` shim, which only a ``macros`` plugin enables.
Every page then gets the Content-Security-Policy of the MkDocs build (:mod:`..safety`).
Zensical's own link validation is off: memsite checks the same links after the build, in a
fraction of its time, with the same warnings (:mod:`.links`).

Zensical keeps a cache beside its configuration; the export and the cache live in the
tree's cache folder (``.memsite/zensical/``), so a second build renders only the pages whose
markdown changed. The site is written to a fresh folder there and then replaces ``site_dir``.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ...search.index.place import default_cache_dir, index_key
from ...store import config
from ..builder import CONFIG, BuildFailed, export_docs
from ..safety import content_policy, with_policy
from . import links
from .folders import site_refusal

# the version the tests build with (the `zensical` extra of pyproject.toml, .ci/run): 0.0.73
# is the newest that installs here: 0.0.74 to 0.1.4 (the newest on 2026-12-04) each require an
# exact zensical-ui, the theme moved out of Zensical, of which the package index holds no
# version (docs/benchmarks.md, "Zensical 0.1.4")
ZENSICAL = "zensical==0.0.73"
ENGINES = ("mkdocs", "zensical")
DEFAULT_ENGINE = "mkdocs"  # until Zensical 1.0 (docs/site.md)
SITE = config.Table("site", {"engine": config.Choice(ENGINES)})
DEFAULT_TITLE = "Memory"
_SHOWN = 12  # the most problems a failure names


def engine(root: Path, given: str | None) -> str:
    """The engine a build uses: ``given`` (``--engine``), else ``[site] engine`` of the tree's
    ``memsite.toml``, else MkDocs."""
    if given is not None:
        return given
    return str(config.read(root, SITE).get("engine", DEFAULT_ENGINE))


def command() -> str:
    """The ``zensical`` command: the one installed beside this Python (``memsite[zensical]``),
    else the first on ``PATH``."""
    beside = Path(sys.executable).parent / "zensical"
    found = str(beside) if beside.is_file() else shutil.which("zensical")
    if found is None:
        raise BuildFailed(
            "site not built: Zensical is not installed; pip install 'memsite[zensical]' "
            "(or put a zensical command on PATH), or build with --engine mkdocs"
        )
    return found


def zensical_config(exported: dict[str, Any], title: str, site_dir: str) -> dict[str, Any]:
    """The export's configuration as Zensical builds it: the same theme, pages, navigation
    and markdown extensions; Zensical's own search and offline mode (pages that work from
    ``file://``)."""
    out = dict(exported)
    out["site_name"] = plain_name(title)
    out["docs_dir"] = "docs"
    out["site_dir"] = site_dir
    out["plugins"] = ["search", "offline"]
    # its link validation reads every byte of every page in Python (a third of a cold build
    # at a year): memsite checks the same links after the build (:mod:`.links`)
    out["validation"] = False
    return out


def plain_name(title: str) -> str:
    """The site's name as Zensical can print it: its templates write it raw into ``<title>``,
    the header and ``aria-label="…"`` (and escaped elsewhere), so no character of it may open
    a tag or end an attribute: ``<`` and ``>`` become ‹ and ›, as the export does in titles,
    and ``"`` becomes ”; an ``&`` stays (raw, it opens no markup; escaped, it shows as
    written)."""
    plain = " ".join(title.split())
    return plain.replace("<", "\u2039").replace(">", "\u203a").replace('"', "\u201d")


def build_zensical(
    root: Path,
    site_dir: Path,
    now: dt.datetime,
    *,
    strict: bool = False,
    allow_secrets: bool = False,
    title: str | None = None,
    cache_dir: Path | None = None,
) -> list[str]:
    """Build the site of ``root`` with Zensical into ``site_dir``; returns Zensical's warnings
    (with ``strict``, a warning fails the build: ``BuildFailed`` names it)."""
    import yaml

    binary = command()
    work = (cache_dir or default_cache_dir(root)) / "zensical" / index_key(root)
    _refuse_overlap(site_dir, root, work)
    for stale in (work / "docs", work / "site"):
        shutil.rmtree(stale, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    export_docs(root, work, now, allow_secrets=allow_secrets)
    path = work / CONFIG
    exported = yaml.safe_load(path.read_text("utf-8"))
    settings = zensical_config(exported, title or DEFAULT_TITLE, "site")
    path.write_text(yaml.safe_dump(settings, allow_unicode=True, sort_keys=False), "utf-8")
    done = subprocess.run(
        [binary, "build", "--config-file", str(path), *(["--strict"] if strict else [])],
        cwd=work,
        capture_output=True,
        text=True,
        errors="replace",
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    said = done.stdout + done.stderr
    warnings = problems(said)
    built = work / "site"
    if done.returncode != 0 or not (built / "index.html").is_file():
        last = [line.strip() for line in _ANSI.sub("", said).splitlines() if line.strip()][-1:]
        shown = "; ".join(warnings[:_SHOWN] or last) or f"exit status {done.returncode}"
        raise BuildFailed(f"site not built: zensical: {shown}")
    warnings += links.check(work / "docs", built)
    if strict and warnings:
        raise BuildFailed(f"site not built: zensical: {'; '.join(warnings[:_SHOWN])}")
    policy = content_policy()
    for page in built.rglob("*.html"):
        page.write_text(with_policy(page.read_text("utf-8"), policy), "utf-8")
    if site_dir.is_dir():
        shutil.rmtree(site_dir)
    elif site_dir.exists():
        raise BuildFailed(f"site not built: {site_dir} is a file, not a folder: move it away")
    shutil.copytree(built, site_dir)
    return warnings


def _refuse_overlap(site_dir: Path, root: Path, work: Path) -> None:
    """The site replaces ``site_dir`` whole: refuse what ``folders.site_refusal`` refuses
    (``--site-dir .`` in the project would delete the project and the memory)."""
    refused = site_refusal(site_dir, root, work)
    if refused is not None:
        raise BuildFailed(f"site not built: {refused}")


def problems(output: str) -> list[str]:
    """Zensical's warnings and errors, one line each (``page.md:3:15: page does not exist``):
    it draws each as a box whose first line names the problem and whose second the place."""
    found: list[str] = []
    lines = _ANSI.sub("", output).splitlines()
    for number, line in enumerate(lines):
        kind = _PROBLEM.match(line)
        if kind is None:
            continue
        place = _PLACE.search(lines[number + 1]) if number + 1 < len(lines) else None
        where = f"{place.group(1)}: " if place else ""
        found.append(f"{where}{kind.group(2).strip()}")
    return found


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PROBLEM = re.compile(r"^\s*(Warning|Error):\s*(.*)$")
_PLACE = re.compile(r"\[\s*(\S+:\d+(?::\d+)?)\s*\]")
