"""Imports point one way: the write path stays light, only the index touches Whoosh, only the
site touches MkDocs and Jinja, and nothing but the CLI modules imports the CLI or click."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memsite"
HEAVY = ("whoosh", "mkdocs", "jinja2", "nh3", "markdown", "filelock", "mcp", "pydantic")


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, package_root: Path = PACKAGE) -> set[str]:
    """Every module an import statement anywhere in ``path`` may load (relative ones resolved)."""
    module = module_name(path, package_root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                parent = ".".join(base + ([node.module] if node.module else []))
            else:
                parent = node.module or ""
            names.add(parent)
            names.update(f"{parent}.{alias.name}" for alias in node.names)
    return names


def read_modules(package: Path) -> dict[str, set[str]]:
    """Each module of the package at ``package`` with the names its imports may load."""
    return {
        module_name(p, package): imported_names(p, package) for p in sorted(package.rglob("*.py"))
    }


MODULES = read_modules(PACKAGE)


def import_graph(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    """The memsite modules each module imports, type-only and function-level imports included.

    ``from pkg import mod`` is an edge to ``pkg.mod``, not to ``pkg``: a package's
    ``__init__`` that Python runs on the way is not the module asked for, except for a module
    of ``pkg`` itself, whose ``from . import mod`` runs the ``__init__`` that may import it."""
    graph = {}
    for module, names in modules.items():
        targets = {name for name in names if name in modules and name != module}
        graph[module] = {
            t
            for t in targets
            if module.startswith(t + ".") or not any(o.startswith(t + ".") for o in targets)
        }
    return graph


def import_circles(modules: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or round a longer loop
    (the strongly connected components of the import graph with more than one module)."""
    graph = import_graph(modules)
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return sorted(circles)


MAX_MODULES = 16  # modules a folder holds directly, its __init__ aside (issue 21)


def crowded_folders(package: Path) -> dict[str, int]:
    """Folders of the package holding more than ``MAX_MODULES`` modules directly."""
    folders = [package, *(p.parent for p in package.rglob("__init__.py"))]
    counts = {
        str(folder.relative_to(package.parent)): sum(
            1 for f in folder.glob("*.py") if f.name != "__init__.py"
        )
        for folder in set(folders)
    }
    return {folder: n for folder, n in counts.items() if n > MAX_MODULES}


def offenders(allowed, *prefixes: str) -> list[str]:
    """``module imports name`` for each import of ``prefixes`` outside ``allowed`` modules."""
    found = []
    for module, names in MODULES.items():
        if allowed(module):
            continue
        for name in sorted(names):
            if any(name == p or name.startswith(p + ".") for p in prefixes):
                found.append(f"{module} imports {name}")
    return found


WINGS = ("store", "search", "site", "agents", "cli")


def wing(module: str) -> str:
    """The wing a module belongs to (``store``, ``search``, ``site``, ``cli``), or its own
    name for the modules at the top of the package (``memory``, ``errors``, ...)."""
    parts = module.split(".")
    if parts[0] != "memsite" or len(parts) == 1:
        return module
    return "memsite" if parts[1] == "__version__" else parts[1]


def is_cli(module: str) -> bool:
    return module == "memsite.__main__" or wing(module) == "cli"


# What each wing may import of memsite: the store is the bottom, the CLI the top.
MAY_IMPORT = {
    "store": {"errors", "store"},
    "search": {"errors", "store", "search"},
    "site": {"errors", "store", "search", "site"},
    "memory": {"errors", "store", "search", "memory"},
    # the protocol adapters (the MCP server) sit beside the CLI, over Memory (issue 10)
    "agents": {"errors", "store", "search", "memory", "agents", "memsite"},
    "cli": {"errors", "store", "search", "site", "memory", "agents", "cli", "memsite"},
}


def wing_offenders(module_wing: str) -> list[str]:
    """``module imports name`` for each memsite import of a ``module_wing`` module that the
    wing's rules do not allow."""
    allowed = MAY_IMPORT[module_wing]
    found = []
    for module, names in MODULES.items():
        if wing(module) != module_wing:
            continue
        for name in sorted(names):
            if name.split(".")[0] != "memsite" or name == "memsite":
                if name == "memsite" and "memsite" not in allowed:
                    found.append(f"{module} imports {name}")
                continue
            target = wing(name)
            if target not in allowed and target.partition(".")[0] not in allowed:
                found.append(f"{module} imports {name}")
    return found


def test_the_package_was_found() -> None:
    assert {
        "memsite.memory",
        "memsite.cli",
        "memsite.store.format",
        "memsite.store.storage",
        "memsite.search.ranking",
        "memsite.site.plugin",
        "memsite.agents.mcp_server",
    } <= set(MODULES)
    for name in WINGS:
        assert (PACKAGE / name / "__init__.py").is_file()


@pytest.mark.parametrize("module_wing", sorted(MAY_IMPORT))
def test_imports_point_down_the_wings(module_wing: str) -> None:
    assert wing_offenders(module_wing) == []


def test_a_broken_direction_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule really looks: a store module that imported the index would be reported."""
    module = "memsite.store.format"
    monkeypatch.setitem(MODULES, module, MODULES[module] | {"memsite.search.index.cache"})
    assert wing_offenders("store") == [f"{module} imports memsite.search.index.cache"]


# Inside search/, the rooms that find (the index, meaning) sit below the rooms that shape
# what an agent is handed (payloads) and measure it (evaluation), and hand them plain data
# (issue 35): the index never decides recall's floor or cuts a passage.
BELOW = {
    "memsite.search.index": ("memsite.search.payloads", "memsite.search.evaluation"),
    "memsite.search.meaning": (
        "memsite.search.payloads",
        "memsite.search.evaluation",
        "memsite.search.index",
    ),
}


def room_offenders(modules: dict[str, set[str]]) -> list[str]:
    """``module imports name`` for each import of a room of search/ that reaches up into a
    room :data:`BELOW` says sits above it, type-only and function-level imports included."""
    found = []
    for module, names in sorted(modules.items()):
        for room, above in BELOW.items():
            if module != room and not module.startswith(room + "."):
                continue
            for name in sorted(names):
                if any(name == up or name.startswith(up + ".") for up in above):
                    found.append(f"{module} imports {name}")
    return found


def test_the_index_sits_below_what_an_agent_is_handed() -> None:
    assert room_offenders(MODULES) == []


def test_an_index_reaching_up_again_in_a_scratch_copy_is_caught(tmp_path: Path) -> None:
    """The rule really looks: a copy of the package whose query-time search imports recall's
    floor again, inside a function, is reported, and so is a module of meaning that imports
    the index."""
    copy = tmp_path / "memsite"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert room_offenders(read_modules(copy)) == []
    search = copy / "search" / "index" / "search.py"
    search.write_text(
        search.read_text("utf-8") + "\n\ndef late():\n    from ..payloads import floor\n", "utf-8"
    )
    cosines = copy / "search" / "meaning" / "cosines.py"
    cosines.write_text(cosines.read_text("utf-8") + "\nfrom ..index import place\n", "utf-8")
    assert room_offenders(read_modules(copy)) == [
        "memsite.search.index.search imports memsite.search.payloads",
        "memsite.search.index.search imports memsite.search.payloads.floor",
        "memsite.search.meaning.cosines imports memsite.search.index",
        "memsite.search.meaning.cosines imports memsite.search.index.place",
    ]


def test_no_two_modules_import_each_other() -> None:
    """STYLE.md: no import circle, not even for types (issue 21)."""
    assert import_circles(MODULES) == []


def test_a_circle_put_back_in_a_scratch_copy_is_caught(tmp_path: Path) -> None:
    """The rule really looks: a copy of the package where ranking imports supersession again,
    for types only, has its circle (and a longer one through a third module) reported."""
    copy = tmp_path / "memsite"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert import_circles(read_modules(copy)) == []
    ranking = copy / "search" / "ranking.py"
    ranking.write_text(
        ranking.read_text("utf-8").replace(
            "from .chunks import Chunk\n",
            "from .chunks import Chunk\n\nif TYPE_CHECKING:\n    from .supersession import Supersession\n",
        ),
        "utf-8",
    )
    assert import_circles(read_modules(copy)) == [
        ["memsite.search.ranking", "memsite.search.supersession"]
    ]
    chunks = copy / "store" / "model.py"
    chunks.write_text(chunks.read_text("utf-8") + "\n\ndef late():\n    from . import journal\n")
    circles = import_circles(read_modules(copy))
    assert any(
        "memsite.store.model" in group and "memsite.store.journal" in group for group in circles
    )
    # a module that imports its own package, whose __init__ imports it back
    # in a fresh copy: the circle put back above reaches ``store.code`` through the tree's
    # decision records (issue 26), which would hide this one inside it
    fresh = tmp_path / "fresh" / "memsite"
    shutil.copytree(PACKAGE, fresh, ignore=shutil.ignore_patterns("__pycache__"))
    governs = fresh / "store" / "code" / "governs.py"
    governs.write_text(governs.read_text("utf-8") + "\nfrom . import globs\n", "utf-8")
    assert import_circles(read_modules(fresh)) == [
        ["memsite.store.code", "memsite.store.code.governs"]
    ]


def test_no_folder_holds_more_than_sixteen_modules(tmp_path: Path) -> None:
    """STYLE.md: a family of modules is a folder (issue 21); a scratch copy with a crowded
    folder is caught."""
    assert crowded_folders(PACKAGE) == {}
    copy = tmp_path / "memsite"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    present = sum(1 for f in (copy / "store").glob("*.py") if f.name != "__init__.py")
    for n in range(MAX_MODULES + 1 - present):
        (copy / "store" / f"extra_{n}.py").write_text("", "utf-8")
    assert crowded_folders(copy) == {"memsite/store": MAX_MODULES + 1}


def test_no_module_name_carries_a_family_prefix() -> None:
    """Modules sharing a name prefix (``index_state``, ``index_codec``) are a missing folder."""
    families: dict[tuple[str, str], list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        stem = path.stem
        if "_" in stem.strip("_"):
            families.setdefault((str(path.parent), stem.split("_")[0]), []).append(stem)
    siblings = {
        key: names
        for key, names in families.items()
        if len(names) > 1 or (Path(key[0]) / f"{key[1]}.py").exists()
    }
    assert siblings == {}


def test_only_the_index_modules_import_whoosh() -> None:
    assert offenders(lambda m: m.startswith("memsite.search.index."), "whoosh") == []


def test_only_the_site_modules_import_mkdocs_jinja_nh3_or_markdown() -> None:
    assert offenders(lambda m: wing(m) == "site", "mkdocs", "jinja2", "nh3", "markdown") == []


def test_nothing_but_the_cli_modules_imports_the_cli() -> None:
    assert offenders(is_cli, "memsite.cli") == []


def test_only_the_agents_modules_import_the_mcp_sdk() -> None:
    assert offenders(lambda m: wing(m) == "agents", "mcp", "pydantic") == []


def test_nothing_but_the_cli_imports_the_agents_modules() -> None:
    assert offenders(lambda m: is_cli(m) or wing(m) == "agents", "memsite.agents") == []


def test_the_library_never_imports_click() -> None:
    assert offenders(is_cli, "click") == []


def test_relative_imports_are_resolved() -> None:
    sample = PACKAGE / "store" / "format.py"
    names = imported_names(sample)
    assert "memsite.store.markup" in names and "memsite.store.model.Entry" in names


def test_no_module_outgrows_one_idea() -> None:
    """STYLE.md: split a module before it passes ~400 lines."""
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text("utf-8").splitlines())) > 420
    }
    assert long == {}


# -- what a write command really loads ---------------------------------------------------

AT_EXIT = """\
import atexit, sys
out = sys.argv.pop(1)
def dump():
    with open(out, "w") as handle:
        handle.write("\\n".join(sorted(sys.modules)))
atexit.register(dump)
sys.argv[0] = "memsite"
from memsite.cli import main
main()
"""

WRITES = [
    ("log", "ran tests", "--detail", "suite=unit", "--result", "ok"),
    ("decide", "Use Postgres", "--why", "durability", "--tag", "db"),
    ("learn", "Pin the clock", "--category", "testing"),
    ("progress", "step two", "--file", "src/a.py"),
    ("pending", "add", "write docs"),
    ("session", "end", "--summary", "done"),
    ("checkpoint", "--used", "170000", "--window", "200000"),
]


# What a write may load of the read side: ``decide`` and ``learn`` notice what the new entry
# may replace or repeats, in plain Python (issue 27): the notices and which entry holds;
# nothing else (issue 35), not even the ranking of hits. The read side is
# search/, the site, the agents' protocols and the commands that read; and no Whoosh or numpy.
NOTICES = {"memsite.search", "memsite.search.notices", "memsite.search.supersession"}
READ_SIDE = (
    "memsite.search",
    "memsite.site",
    "memsite.agents",
    "memsite.cli.recall",
    "memsite.cli.site",
    "memsite.cli.agents",
    "numpy",
)


# ...and of the store, what a write that names no code and takes no checkpoint never needs:
# the records' parsers (without a settings file to name their folders), the glob matcher and
# git, the checkpoints and their summarizer's subprocess (issue 35).
STORE_EXTRAS = (
    "memsite.store.records",
    "memsite.store.code",
    "memsite.store.git",
    "memsite.store.session.checkpoints",
    "memsite.store.session.summaries",
    "subprocess",
)


@pytest.mark.parametrize("args", WRITES, ids=[" ".join(a[:2]) for a in WRITES])
def test_write_commands_load_nothing_of_the_read_side(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    root = tmp_path / "memory"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    start = [sys.executable, "-m", "memsite", "--root", str(root)]
    subprocess.run([*start, "init"], check=True, capture_output=True, env=env)
    subprocess.run([*start, "session", "start", "task"], check=True, capture_output=True, env=env)
    listing = tmp_path / "modules.txt"
    done = subprocess.run(
        [sys.executable, "-c", AT_EXIT, str(listing), "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    loaded = listing.read_text().split()
    assert "memsite.memory" in loaded
    heavy = [m for m in loaded if m.split(".")[0] in HEAVY]
    assert heavy == []
    allowed = NOTICES if args[0] in ("decide", "learn") else set()
    read = [
        m
        for m in loaded
        if any(m == side or m.startswith(side + ".") for side in READ_SIDE) and m not in allowed
    ]
    assert read == []
    if args[0] not in ("progress", "checkpoint"):  # a --file names code; a checkpoint is one
        extras = [m for m in loaded if any(m == e or m.startswith(e + ".") for e in STORE_EXTRAS)]
        assert extras == []


def test_the_architecture_doc_names_every_module_in_its_wing() -> None:
    """docs/architecture.md's table lists each wing's modules and sub-packages (issue 21)."""
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text("utf-8")
    rows = {
        line.split("|")[1].strip().strip("`"): line
        for line in doc.splitlines()
        if line.startswith("| `")
    }
    missing = []
    for name in WINGS:
        row = rows[name]
        for path in sorted((PACKAGE / name).rglob("*.py")):
            rel = path.relative_to(PACKAGE / name)
            if path.name == "__init__.py":
                if rel.parent.parts and f"`{rel.parent.as_posix()}/`" not in row:
                    missing.append(f"{name}/{rel.parent.as_posix()}/")
            elif f"`{path.stem}`" not in row:
                missing.append(f"{name}/{rel.as_posix()}")
    assert missing == []
