"""Where a cold Zensical build of memsite's export spends its Python time (issue 38).

    ZENSICAL_PYTHON bench/bench_zensical_profile.py WORK

WORK is the folder ``memsite build --engine zensical`` leaves in the cache
(``.memsite/zensical/<tree>/``: ``mkdocs.yml`` and ``docs/``); run it with the Python that
has Zensical (``.ci/zensical-venv/bin/python``). In one process, and per top folder of the
pages, it times the two things Zensical does in Python for every page: rendering its markdown
(Zensical's own ``render``: Python-Markdown with the export's extensions) and scanning it for
links (``zensical.collectors.references``, what its link validation reads, which memsite
turns off and replaces with ``site/publish/links.py``). The rest of a build (startup, theme,
templates, search index, writing) is what ``zensical build`` costs beyond these two.
"""

from __future__ import annotations

import collections
import os
import sys
import time
from pathlib import Path


def main() -> None:
    work = Path(sys.argv[1]).resolve()
    os.chdir(work)
    from zensical.collectors import references
    from zensical.config import parse_config
    from zensical.markdown.render import render

    parse_config(str(work / "mkdocs.yml"))
    pages = sorted((work / "docs").rglob("*.md"))
    rendered: collections.Counter[str] = collections.Counter()
    scanned: collections.Counter[str] = collections.Counter()
    sizes: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    for path in pages:
        page = path.relative_to(work / "docs").as_posix()
        group = page.split("/")[0] if "/" in page else "(top)"
        text = path.read_text("utf-8")
        start = time.process_time()
        render(text, page, page.removesuffix(".md") + ".html")
        rendered[group] += time.process_time() - start
        start = time.process_time()
        for _ in references(text.encode("utf-8")):
            pass
        scanned[group] += time.process_time() - start
        sizes[group] += len(text.encode("utf-8"))
        counts[group] += 1
    print(f"{'pages':12s} {'count':>5s} {'MB':>6s} {'render CPU s':>13s} {'links CPU s':>12s}")
    for group, seconds in rendered.most_common():
        print(
            f"{group:12s} {counts[group]:5d} {sizes[group] / 1e6:6.2f} {seconds:13.2f} "
            f"{scanned[group]:12.2f}"
        )
    print(
        f"{'all':12s} {sum(counts.values()):5d} {sum(sizes.values()) / 1e6:6.2f} "
        f"{sum(rendered.values()):13.2f} {sum(scanned.values()):12.2f}"
    )


if __name__ == "__main__":
    main()
