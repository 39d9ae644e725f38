"""The layout of a memory tree on disk: where things live, walking it, creating it."""

from __future__ import annotations

import datetime as dt
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BadValue, NotFound, UnsafePath
from . import reading, storage
from .format import DECISIONS, LEARNINGS, PERSONA, Parsed, Problem, parse_entries
from .inputs import escaped, is_utf8

CONTEXT = "hot/context.json"
GITIGNORE = """\
# hot/ is the live session of one agent: volatile working state, archived into warm/ when
# the session ends. Remove this line to share live sessions through git.
hot/
# A writer killed mid-append can leave its temporary file behind; the entry never landed.
.*.tmp
"""
GITATTRIBUTES = """\
# Entries are only ever appended: two branches that both add entries merge by keeping both.
warm/*.md merge=union
warm/archive/**/*.md merge=union
cold/*.md merge=union
"""
PERSONA_TEMPLATE = """\
# Persona

Who this agent is. Edit it by hand: once it says more than this template, it is injected at
the start of every session (and never mixed into memory); until then nothing is.

## Identity

## Voice

## Standing preferences
"""
# What ``init`` wrote before issue 25: a tree made then is as fresh as one made now.
_EARLIER_TEMPLATES = (
    "# Persona\n\nWho this agent is. This file is injected at the start of every session and "
    "is never mixed\ninto memory. Edit it by hand.\n\n## Identity\n\n## Voice\n\n"
    "## Standing preferences\n",
)


def day_log(root: Path, day: dt.date) -> Path:
    """The warm log of ``day``: the archived one if ``prune`` already moved it."""
    archived = root / "warm" / "archive" / f"{day.year:04d}" / f"{day.isoformat()}.md"
    return archived if archived.exists() else root / "warm" / f"{day.isoformat()}.md"


# What makes a folder a memory tree: any one of these. A tree of only notes/ (an imported set
# of decision records) is a tree; a home folder or / is not, and walking it would index the
# whole disk (issue 15.15).
TREE_PARTS = (PERSONA, "hot", "warm", "cold", "notes")


def is_tree(folder: Path) -> bool:
    """Whether ``folder`` holds any of :data:`TREE_PARTS`."""
    return folder.is_dir() and any((folder / part).exists() for part in TREE_PARTS)


def check_root(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise NotFound(f"{root}: is a file, not a memory tree (give --root a folder)")
    if not root.is_dir():
        raise NotFound(f"{root}: no memory tree here (run 'memsite init {root}' or pass --root)")
    if not is_tree(root):
        # the project folder given for its tree: `init` there would make a second tree
        # beside the first (issue 25.3)
        held = nested_tree(root)
        if held is not None:
            raise NotFound(f"{root} holds a memory tree at {held}: pass --root {held}")
        raise NotFound(
            f"{root}: not a memory tree (it holds none of persona.md, hot/, warm/, cold/, "
            f"notes/); run 'memsite init {root}' or pass --root"
        )


MEMORY = "memory"


def nested_tree(folder: Path) -> Path | None:
    """``folder/memory`` when ``folder`` is not a tree itself but holds one there, else None."""
    inner = folder / MEMORY
    return inner if not is_tree(folder) and is_tree(inner) else None


def find_root(start: Path) -> Path:
    """The memory tree a command run in ``start`` works on, found the way git finds ``.git``:
    ``start/memory``, then ``../memory`` and so on up to the filesystem root, stopping at the
    first folder that holds ``.git`` (the top of a project) when it has no ``memory/``.

    The result is ``start / "memory"`` when the tree is right there, else an absolute path. A
    ``memory/`` folder that is not a tree (a source package of that name) is passed over.
    """
    here = start.absolute()
    tried = []
    for folder in (here, *here.parents):
        candidate = folder / MEMORY
        tried.append(str(candidate))
        if is_tree(candidate):
            return start / MEMORY if folder == here else candidate
        if (folder / ".git").exists():
            tried.append(f"and stopped at {folder}, the top of a git repository")
            break
    raise NotFound(
        f"no memory tree found: looked for {', '.join(tried)}; run 'memsite init' to create "
        "./memory, or pass --root DIR (or set $MEMSITE_ROOT)"
    )


def read_persona(root: Path) -> str | None:
    """The text of ``persona.md`` to inject and publish, or None when there is none, when its
    real path is outside the tree (such a file is never read; ``check`` reports it), or when
    it is still :data:`PERSONA_TEMPLATE`: headings with nothing under them are not worth a
    session's tokens (issue 25.8)."""
    text = _persona_text(root)
    return None if text is None or _is_template(text) else text


def persona_is_template(root: Path) -> bool:
    """Whether ``persona.md`` is still the template ``init`` wrote (nothing is injected)."""
    text = _persona_text(root)
    return text is not None and _is_template(text)


def _persona_text(root: Path) -> str | None:
    try:
        raw = reading.read_inside(root, root / PERSONA)
    except (OSError, UnsafePath):
        return None
    return raw.decode("utf-8", errors="replace")


def _is_template(text: str) -> bool:
    # spacing and line endings an editor may change do not make it edited
    words = text.lstrip("\ufeff").split()
    return any(words == template.split() for template in (PERSONA_TEMPLATE, *_EARLIER_TEMPLATES))


def markdown_files(root: Path) -> tuple[list[str], list[Problem]]:
    """Every ``.md`` of the tree as a root-relative POSIX path, sorted; links out are skipped."""
    found: list[str] = []
    problems: list[Problem] = []
    real_root = reading.resolved(root)
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        keep = []
        for name in sorted(dirs):
            if name.startswith("."):
                continue
            sub = here / name
            leads = _unnamed(name) or _link_out(real_root, sub)
            if leads:
                problems.append(
                    Problem(escaped(_rel(root, sub)), 1, f"{leads}; skipped", "warning")
                )
                continue
            keep.append(name)
        dirs[:] = keep
        for name in files:
            if not name.endswith(".md") or name.startswith("."):
                continue
            path = here / name
            rel = _rel(root, path)
            leads = _unnamed(name) or _link_out(real_root, path)
            if leads:
                problems.append(Problem(escaped(rel), 1, f"{leads}; skipped", "warning"))
                continue
            odd = _not_a_file(path)
            if odd:  # reading a FIFO would wait for a writer for ever
                problems.append(Problem(rel, 1, f"{odd}, not a regular file; skipped", "warning"))
                continue
            found.append(rel)
    found.sort()
    return found, problems


def _not_a_file(path: Path) -> str:
    """What ``path`` holds when it is not a regular file ("a FIFO"), else ""."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return ""  # gone, or a dangling link: its reader says so
    return "" if stat.S_ISREG(mode) else reading.kind_of(mode)


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _unnamed(name: str) -> str:
    """Why a name of the tree is not read: one that is not UTF-8 (``inputs.is_utf8``)."""
    return "" if is_utf8(name) else "file name is not UTF-8"


def _link_out(real_root: Path, path: Path) -> str:
    """Why a symbolic link of the tree is not followed ("symbolic link points outside the
    tree", "symbolic link loop"), or "" for anything else."""
    if not path.is_symlink():
        return ""
    try:
        real = reading.resolved(path)
    except OSError:
        return "symbolic link loop"
    if real == real_root or real_root in real.parents:
        return ""
    return "symbolic link points outside the tree"


@dataclass
class TreeRead:
    """Everything read from the tree in one pass: its entries (the decision records of its
    ``[records]`` folders among them, issue 26), problems, the texts of its own files, and
    apart from those the texts of the records (read in place, never published as files)."""

    parsed: Parsed = field(default_factory=Parsed)
    texts: dict[str, str] = field(default_factory=dict)
    records: dict[str, str] = field(default_factory=dict)


def read_file(root: Path, rel: str) -> tuple[Parsed, str | None]:
    """Parse one file; a file that cannot be read becomes a problem, never an exception."""
    path = root / rel
    try:
        raw = reading.read_regular(path)  # a FIFO would wait for a writer for ever
    except OSError as err:
        return Parsed(problems=[Problem(rel, 1, f"cannot read: {err.strerror}")]), None
    except reading.NotAFile:
        return Parsed(problems=[Problem(rel, 1, "not a regular file; skipped")]), None
    try:
        text = reading.text_of(raw)
    except reading.NotText as err:  # what no write appends to either (storage.append)
        advice = ", re-save it as UTF-8" if err.encoding else ""
        return Parsed(problems=[Problem(rel, err.line, f"{err.why}; file skipped{advice}")]), None
    fallback = dt.date.fromtimestamp(path.stat().st_mtime)
    parsed = parse_entries(text, rel, fallback_date=fallback)
    parsed.problems[:0] = _layout_warnings(rel, raw)
    return parsed, text


LARGE_FILE = 10 * 1024 * 1024


def _layout_warnings(rel: str, raw: bytes) -> list[Problem]:
    """Things that parse fine but that a person should know about."""
    warnings = []
    if raw.startswith(b"\xef\xbb\xbf"):
        warnings.append(
            Problem(
                rel, 1, "starts with a byte-order mark (read fine; editors may disagree)", "warning"
            )
        )
    crlf = raw.count(b"\r\n")
    if crlf and crlf != raw.count(b"\n"):
        first_lf = next(i for i, line in enumerate(raw.split(b"\n")) if not line.endswith(b"\r"))
        warnings.append(
            Problem(rel, first_lf + 1, "mixed line endings (CRLF and LF); read fine", "warning")
        )
    if len(raw) > LARGE_FILE:
        warnings.append(
            Problem(
                rel,
                1,
                f"file is {len(raw) / 2**20:.0f} MiB; very large files slow every command",
                "warning",
            )
        )
    return warnings


def read_tree(root: Path) -> TreeRead:
    paths, problems = markdown_files(root)
    result = TreeRead()
    result.parsed.problems.extend(problems)
    for rel in paths:
        if rel == PERSONA:
            continue
        parsed, text = read_file(root, rel)
        result.parsed.entries.extend(parsed.entries)
        result.parsed.problems.extend(parsed.problems)
        if text is not None:
            result.texts[rel] = text
    # the records' parsers load only when the tree is read whole, never for a write (issue 35)
    from .records import ids_of, read_records

    cold = [e for e in result.parsed.entries if e.path in (DECISIONS, LEARNINGS)]
    found = read_records(root, ids_of(cold))  # a record never takes a decision's id
    result.parsed.entries.extend(found.entries)
    result.parsed.problems.extend(found.problems)
    result.records.update(found.texts)
    return result


def init_tree(root: Path) -> tuple[list[str], list[str]]:
    """Create the skeleton; never overwrite. Returns (created, kept) relative paths."""
    if root.exists() and not root.is_dir():
        raise NotFound(f"{root}: is a file, not a folder")
    held = nested_tree(root)
    if held is not None:  # a second tree beside the project's own (issue 25.3)
        raise BadValue(
            f"{root} holds a memory tree at {held}: run 'memsite init {held}' "
            "(init DIR makes DIR itself the tree)"
        )
    root.mkdir(parents=True, exist_ok=True)
    files = {
        PERSONA: PERSONA_TEMPLATE,
        DECISIONS: "# Decisions\n",
        LEARNINGS: "# Learnings\n",
        ".gitignore": GITIGNORE,
        ".gitattributes": GITATTRIBUTES,
    }
    created, kept = [], []
    for folder in ("hot", "warm", "cold"):
        (root / folder).mkdir(exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        try:
            with open(path, "x", encoding="utf-8") as handle:
                handle.write(text)
            created.append(rel)
        except FileExistsError:
            kept.append(rel)
    # keep empty tiers in git
    for folder in ("hot", "warm"):
        if not any((root / folder).iterdir()):
            (root / folder / ".gitkeep").touch()
    storage.inside(root, root)
    return created, kept
