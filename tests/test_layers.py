"""Imports point one way: the write path stays light, only the index touches Whoosh, only the
site touches MkDocs and Jinja, and nothing but the CLI modules imports the CLI or click."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memsite"
HEAVY = ("whoosh", "mkdocs", "jinja2", "nh3", "markdown", "filelock", "mcp", "pydantic")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path) -> set[str]:
    """Every module an import statement anywhere in ``path`` may load (relative ones resolved)."""
    module = module_name(path)
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


MODULES = {module_name(p): imported_names(p) for p in sorted(PACKAGE.rglob("*.py"))}


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
    monkeypatch.setitem(MODULES, module, MODULES[module] | {"memsite.search.index"})
    assert wing_offenders("store") == [f"{module} imports memsite.search.index"]


def test_only_the_index_modules_import_whoosh() -> None:
    assert offenders(lambda m: m.startswith("memsite.search.index"), "whoosh") == []


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


@pytest.mark.parametrize("args", WRITES, ids=[" ".join(a[:2]) for a in WRITES])
def test_write_commands_load_no_index_site_or_lock_library(
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
