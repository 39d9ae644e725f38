"""Site build speed: memsite's site of a generated year vs a plain MkDocs + Material build.

    python bench/bench_site.py [OUT] [--entries 20000] [--days 365]
    python bench/bench_site.py [OUT] --entries 55000 --days 1095     (three years)
    python bench/bench_site.py [OUT] --notes 1000


Generates the tree with bench/corpus.py (once), then times, each in a fresh process and
taking turns (``--rounds`` of: plain, memsite cold, plain, memsite warm), so that the load of
a shared machine falls on both sides alike:
  plain              `mkdocs build` of the tree's own markdown files with the same theme,
                     plugins (search, offline) and markdown extensions, no memsite plugin
  memsite cold       `memsite build --strict` (the built-in config: Material, search, offline,
                     related links on) with no `.memsite/` cache, as on a fresh clone
  memsite warm       the same with the cache the cold build left
and prints each round's times and the ratio of each memsite build to the mean of the round's
two plain builds (with the load average), the page counts and the search index sizes.
``--related-off`` also times a build with related links off.

With ``--engine zensical`` (issue 38) the memsite builds are ``memsite build --engine
zensical`` (cold: no ``.memsite/``, so no Zensical cache either; warm: the cache the cold build
left), and after the rounds the export Zensical built is also built by plain ``mkdocs build``
with its own configuration (the same pages exactly) and by ``zensical build`` without its
cache (with its own link validation on, as before memsite checked the links itself, and off)
and with it. ``zensical`` is the one beside this Python, else the first on ``PATH``.

With ``--notes N`` it builds a tree of N hand-written notes (20 folders, ~1 KB each) instead,
once with every note in the nav (as before issue 15.11) and once with the plugin's default
``notes_in_nav``, and prints each build's time, peak memory and the size of its pages.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


CPU: list[float] = []  # CPU seconds (user + system) of each run() command, in order


def run(command: list[str], cwd: Path) -> float:
    """Wall seconds of one command in a fresh process (its CPU seconds go to ``CPU``: on a
    machine shared with other jobs they move less than wall time does)."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"{command[0]} failed")
    CPU.append(usage.ru_utime + usage.ru_stime)
    return time.perf_counter() - start


def plain_project(tree: Path, folder: Path) -> None:
    """The same markdown files as plain docs, built with memsite's theme, plugins and markdown
    extensions, less the memsite plugin: the ratio then measures what the plugin costs."""
    import yaml

    from memsite.site.builder import MARKDOWN_EXTENSIONS, theme

    docs = folder / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    for path in tree.rglob("*.md"):
        target = docs / path.relative_to(tree)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    config = {
        "site_name": "plain",
        "theme": theme(),
        # the same MkDocs configuration memsite builds with, less the memsite plugin itself
        "plugins": ["search", "offline"],
        "markdown_extensions": MARKDOWN_EXTENSIONS,
        # hand-written notes link to files that are not pages here; count them, don't fail
        "validation": {"links": {"not_found": "info", "unrecognized_links": "info"}},
    }
    (folder / "mkdocs.yml").write_text(yaml.safe_dump(config), "utf-8")


def run_measured(command: list[str], cwd: Path) -> tuple[float, float]:
    """Seconds and peak resident memory (MB) of one command in a fresh process."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    start = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=log)
        _, status, usage = os.wait4(child.pid, 0)
        if os.waitstatus_to_exitcode(status):
            log.seek(0)
            sys.exit(log.read().decode(errors="replace"))
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def notes_case(out: Path, count: int) -> None:
    """``count`` notes, built with every note in the nav and with the default bound."""
    import yaml

    from memsite.site.indexes import NOTES_IN_NAV
    from memsite.store.tree import init_tree

    tree = out / f"notes-{count}" / "memory"
    if not tree.exists():
        init_tree(tree)
        words = ["session", "token", "rotation", "cookie", "policy", "rollout", "alarm", "backfill"]
        for number in range(count):
            folder = tree / "notes" / f"area-{number % 20:02}"
            folder.mkdir(parents=True, exist_ok=True)
            text = " ".join(words[(number + i) % len(words)] for i in range(120))
            (folder / f"note-{number:05}.md").write_text(
                f"# Note {number}\n\nDate: 2026-{number % 12 + 1:02}-{number % 28 + 1:02}\n\n"
                f"## Context\n\n{text}\n\n## Steps\n\n- check\n- fix\n",
                "utf-8",
            )
    work = tree.parent
    print(f"tree: {count} notes in 20 folders")
    for label, in_nav in (("every note in the nav", count), ("notes_in_nav default", None)):
        options: dict[str, object] = {"root": str(tree), "related": False}
        if in_nav is not None:
            options["notes_in_nav"] = in_nav
        config = {
            "site_name": "notes",
            "theme": {"name": "material", "font": False},
            "plugins": ["search", "offline", {"memsite": options}],
            "docs_dir": "docs",
            "site_dir": "site",
        }
        (work / "docs").mkdir(exist_ok=True)
        (work / "mkdocs.yml").write_text(yaml.safe_dump(config), "utf-8")
        seconds, memory = run_measured([str(BIN / "mkdocs"), "build", "--strict"], work)
        pages = [path for path in (work / "site").rglob("*.html")]
        size = sum(path.stat().st_size for path in pages) / 1e6
        shown = in_nav if in_nav is not None else NOTES_IN_NAV
        print(
            f"{label:24s} ({shown:>5} in nav) {seconds:6.1f} s  peak {memory:4.0f} MB  "
            f"{len(pages)} pages, {size:5.0f} MB of HTML"
        )


def same_pages(cache: Path) -> None:
    """The export Zensical built, built again by plain MkDocs (its own configuration: Material,
    search, offline) and by Zensical without and with its cache: one engine against the other
    on exactly the same pages."""
    import yaml

    work = next(path for path in cache.iterdir() if path.name != "mkdocs-export")
    export = work.parent / "mkdocs-export"
    shutil.rmtree(export, ignore_errors=True)
    shutil.copytree(work, export, ignore=shutil.ignore_patterns(".cache", "site"))
    # as memsite handed it over before its link check replaced Zensical's own validation
    # (``validation: false`` is Zensical's; MkDocs wants a table)
    config = yaml.safe_load((work / "mkdocs.yml").read_text("utf-8"))
    config.pop("validation", None)
    for written in (work / "validated.yml", export / "mkdocs.yml"):
        written.write_text(yaml.safe_dump(config, allow_unicode=True), "utf-8")
    binary = str(BIN / "zensical") if (BIN / "zensical").is_file() else shutil.which("zensical")
    zensical = [str(binary), "build", "--strict", "-f"]
    mkdocs_s = run([str(BIN / "mkdocs"), "build", "--strict"], export)
    validated = run([*zensical, "validated.yml", "--clean"], work)
    cold = run([*zensical, "mkdocs.yml", "--clean"], work)
    warm = run([*zensical, "mkdocs.yml"], work)
    cpu = CPU[-4:]
    print(
        f"the same exported pages: plain mkdocs {mkdocs_s:.1f} s ({cpu[0]:.1f} CPU s), "
        f"zensical without its cache, its own link validation on {validated:.1f} s "
        f"({cpu[1]:.1f} CPU s, {validated / mkdocs_s:.2f}x), off (as memsite builds) "
        f"{cold:.1f} s ({cpu[2]:.1f} CPU s, {cold / mkdocs_s:.2f}x), with its cache "
        f"{warm:.1f} s ({cpu[3]:.1f} CPU s, {warm / mkdocs_s:.2f}x)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(HERE / "out" / "site"))
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--days", type=int, default=365, help="days of history (three years: 1095)")
    parser.add_argument("--notes", type=int, default=0, help="time a tree of this many notes")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the four builds")
    parser.add_argument("--related-off", action="store_true", help="also time related: false")
    parser.add_argument("--engine", choices=["mkdocs", "zensical"], default="mkdocs")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    if args.notes:
        notes_case(out, args.notes)
        return
    tree = out / "memory"
    if not tree.exists():
        out.mkdir(parents=True, exist_ok=True)
        print(f"generating {args.entries} entries into {tree} ...", flush=True)
        subprocess.run(
            [
                *(sys.executable, str(HERE / "corpus.py"), str(tree)),
                *("--entries", str(args.entries), "--days", str(args.days)),
            ],
            check=True,
        )
    memsite_dir = out / "memsite"
    memsite_dir.mkdir(exist_ok=True)
    plain_dir = out / "plain"
    plain_dir.mkdir(exist_ok=True)
    plain_project(tree, plain_dir)

    def memsite(related: bool) -> float:
        import yaml

        from memsite.site.builder import default_config

        config = default_config(tree, memsite_dir / "docs", memsite_dir / "site")
        config["plugins"][-1]["memsite"]["related"] = related
        (memsite_dir / "docs").mkdir(exist_ok=True)
        (memsite_dir / "mkdocs.yml").write_text(yaml.safe_dump(config), "utf-8")
        command = [str(BIN / "memsite"), "--root", str(tree), "build", "--strict"]
        if args.engine == "zensical":
            return run([*command, "--engine", "zensical", "--site-dir", "site"], memsite_dir)
        return run([*command, "-f", "mkdocs.yml"], memsite_dir)

    def plain() -> float:
        return run([str(BIN / "mkdocs"), "build", "--site-dir", "site"], plain_dir)

    def cold() -> float:
        shutil.rmtree(out / ".memsite", ignore_errors=True)  # a fresh clone: no cache
        return memsite(True)

    files = sum(1 for _ in tree.rglob("*.md"))
    print(
        f"tree: {files} markdown files, {args.entries} entries; {args.rounds} rounds of "
        f"plain, memsite cold, plain, memsite warm (related on, engine {args.engine})"
    )
    ratios: dict[str, list[float]] = {"cold": [], "warm": [], "cold cpu": [], "warm cpu": []}
    for number in range(1, args.rounds + 1):
        load = os.getloadavg()[0]
        times = [plain(), cold(), plain(), memsite(True)]
        cpu = CPU[-4:]
        plain_s, plain_cpu = (times[0] + times[2]) / 2, (cpu[0] + cpu[2]) / 2
        ratios["cold"].append(times[1] / plain_s)
        ratios["warm"].append(times[3] / plain_s)
        ratios["cold cpu"].append(cpu[1] / plain_cpu)
        ratios["warm cpu"].append(cpu[3] / plain_cpu)
        print(
            f"round {number} (load {load:.1f} -> {os.getloadavg()[0]:.1f}): "
            f"plain {times[0]:.1f} s, cold {times[1]:.1f} s, plain {times[2]:.1f} s, "
            f"warm {times[3]:.1f} s: cold {ratios['cold'][-1]:.2f}x, "
            f"warm {ratios['warm'][-1]:.2f}x of the mean plain; CPU seconds "
            + ", ".join(f"{c:.1f}" for c in cpu)
            + f": cold {ratios['cold cpu'][-1]:.2f}x, warm {ratios['warm cpu'][-1]:.2f}x",
            flush=True,
        )
    print(
        "; ".join(
            f"{name} {min(values):.2f}-{max(values):.2f}x plain" for name, values in ratios.items()
        )
    )
    if args.related_off:
        off = memsite(False)
        print(f"memsite, related off: {off:.1f} s, {off / plain():.2f}x the plain build after it")
    if args.engine == "zensical":
        same_pages(out / ".memsite" / "zensical")
    memsite_pages = sum(1 for _ in (memsite_dir / "site").rglob("*.html"))
    plain_pages = sum(1 for _ in (plain_dir / "site").rglob("*.html"))
    print(f"pages: memsite {memsite_pages}, plain {plain_pages}")
    # memsite's is the sharded index under search/ (search_index.json keeps the config only);
    # Zensical's is search.json
    searched = memsite_dir / "site" / ("search.json" if args.engine == "zensical" else "search")
    index = sum(p.stat().st_size for p in [searched, *searched.rglob("*")] if p.is_file())
    plain_index = plain_dir / "site" / "search" / "search_index.json"
    print(
        f"search index: memsite {index / 1e6:.1f} MB (all of search/), "
        f"plain {plain_index.stat().st_size / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
