"""The walk of the ``[records]`` paths (issues 26 and 34), within a budget, and what it found.

A folder gives its numbered ``.md`` files (``README.md``, ``index.md`` and ``template.md``
are not records); a glob gives every ``.md`` it matches, its wildcards matching no name that
starts with a dot. The walk stays in the repository that holds the tree: a glob holds no
``..`` after its first wildcard, a ``**`` follows no symbolic link, a link to a folder or a
file is followed only into the repository (never into the tree, whose files are notes
already), and no folder of another file system (``/proc``, a mount) is entered. A folder or
file that vanishes while it is walked is left out, never an error.

Its budget: at most ``MAX_FILES`` records and ``MAX_NAMES`` names looked at, over all the
table's paths; past either the walk stops there and ``check`` says so (a warning).
:mod:`.listing` remembers what it found.
"""

from __future__ import annotations

import os
import posixpath
import stat
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .. import code, config
from ..code import globs
from ..format import Problem
from ..inputs import escaped, is_utf8

TABLE = config.Table("records", {"paths": config.Texts(most=50, longest=400)})
# the devset's corpora hold 44 to 69 records each (docs/benchmarks.md); a glob past these is
# the repository, not its records (issue 34: 100,000 files)
MAX_FILES = 5_000
MAX_NAMES = 50_000
NOT_RECORDS = frozenset({"readme", "index", "template", "adr-template", "_template"})


@dataclass(frozen=True)
class Listing:
    """One walk of the ``[records]`` paths: the files found (relative to the tree, each with
    its path to read), those reached through a symbolic link (``linked``), its problems, and
    what it depended on (``folders``: each folder looked in with its ``mtime_ns``;
    ``stamp``: the repository and ``memsite.toml``)."""

    files: tuple[tuple[str, str], ...]
    linked: frozenset[str]
    problems: tuple[Problem, ...]
    folders: tuple[tuple[str, int], ...]
    stamp: tuple[object, ...]
    walked_ns: int


class Walk:
    """One walk of the table's paths, within its budget."""

    def __init__(self, root: Path, stamp: tuple[object, ...]) -> None:
        self.root = root
        self.stamp = stamp
        self.started = time.time_ns()
        self.repo = code.repository_root(root).resolve()
        self.real_root = root.resolve()
        self.device = _identity(self.repo)[0]
        self.tree = _identity(self.real_root)
        self.files: dict[str, str] = {}
        self.linked: set[str] = set()
        self.problems: list[Problem] = []
        self.folders: dict[str, int] = {}
        self.names = 0
        self.item = ""
        self.cut = False

    def listing(self) -> Listing:
        try:
            items = config.read(self.root, TABLE).get("paths", ())
        except config.BadConfig as err:
            message = f"{str(err).split(': ', 1)[-1]}; records not read"
            self.problems.append(Problem(config.CONFIG, 1, message))
            items = ()
        for item in items if isinstance(items, tuple) else ():
            if self.cut:
                break
            self.item = item
            self._walk_item(item)
        return Listing(
            tuple(sorted(self.files.items())),
            frozenset(self.linked),
            tuple(self.problems),
            tuple(self.folders.items()),
            self.stamp,
            self.started,
        )

    def _problem(self, message: str, severity: str = "error") -> None:
        where = f"[records] paths {self.item!r}"
        self.problems.append(Problem(config.CONFIG, 1, f"{where}{message}", severity))

    def _walk_item(self, item: str) -> None:
        text = item.strip().replace("\\", "/")
        if not text or text.startswith("/"):
            self._problem(": give a path relative to the tree")
            return
        parts = PurePosixPath(text).parts
        split = next((i for i, part in enumerate(parts) if set(part) & code.GLOB_CHARACTERS), None)
        if split is not None and ".." in parts[split:]:
            self._problem(
                ": '..' after a wildcard could lead out of the repository; name the folder "
                "before the first wildcard (../docs/*/adr/*.md); not read"
            )
            return
        literal = parts[:split]
        base = self.root.joinpath(*literal)
        rel = Path(os.path.relpath(os.path.abspath(base), self.root)).as_posix()
        self._note_nearest(base)
        real = Path(os.path.realpath(base))  # a loop of links is no error here
        if real != self.repo and self.repo not in real.parents:
            self._problem(" is outside the repository; not read")
            return
        if real == self.real_root or self.real_root in real.parents:
            self._problem(
                " is inside the memory tree, whose files are notes already; point it at the "
                "folder outside memory/ (or move the records there)"
            )
            return
        if split is not None:
            self._glob(str(base), rel, _folded(parts[split:]), _through_link(base))
            return
        kind = _kind(str(real))
        if kind in ("file", "other"):
            self._file(str(base), rel, "link")  # checked as a link is: it may be one
        elif kind != "dir":
            self._problem(": no such folder; not read")
        else:
            linked = _through_link(base)
            for name, path, kind in self._entries(str(base)):
                stem = name[:-3]
                if (
                    kind != "dir"
                    and name.endswith(".md")
                    and stem.lower() not in NOT_RECORDS
                    and any(c.isdigit() for c in stem)
                ):
                    self._file(path, posixpath.join(rel, name), kind, linked)

    def _note_nearest(self, base: Path) -> None:
        """Remember the nearest folder at or above ``base`` that exists: a folder named but
        missing is found once it is made."""
        for folder in (base, *base.parents):
            try:
                info = os.stat(folder)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                self.folders.setdefault(str(folder), info.st_mtime_ns)
                return

    def _entries(self, folder: str) -> list[tuple[str, str, str]]:
        """``(name, path, kind)`` of each name in ``folder`` not starting with a dot, sorted;
        ``kind`` is ``dir``, ``file``, ``link`` or ``other``. A folder gone is empty."""
        if self.cut:
            return []
        try:
            info = os.stat(folder)
            with os.scandir(folder) as listed:
                entries = sorted(listed, key=lambda entry: entry.name)
        except OSError:
            return []
        self.folders.setdefault(folder, info.st_mtime_ns)
        out = []
        for entry in entries:
            self.names += 1
            if self.names > MAX_NAMES:
                self._stop(
                    f" looked at {MAX_NAMES:,} names without finishing: only the "
                    f"{len(self.files):,} records found by then are read"
                )
                break
            if entry.name.startswith("."):
                continue
            if not is_utf8(entry.name):
                # bytes that are not UTF-8 (decoded with surrogateescape): no index, site or
                # terminal can hold the name (the sweep after issue 36)
                self._problem(
                    f": {escaped(entry.path)}: file name is not UTF-8; skipped", "warning"
                )
                continue
            try:
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                else:
                    kind = "file" if entry.is_file(follow_symlinks=False) else "other"
            except OSError:
                continue  # gone since it was listed
            out.append((entry.name, entry.path, kind))
        return out

    def _stop(self, why: str) -> None:
        self.cut = True
        self._problem(f"{why}; narrow it to the records' folders", "warning")

    def _glob(
        self,
        folder: str,
        rel: str,
        pattern: tuple[str, ...],
        linked: bool,
        listed: list[tuple[str, str, str]] | None = None,
    ) -> None:
        """The matches of ``pattern`` in ``folder`` (``linked``: reached through a link;
        ``listed``: its names, when the caller listed them already)."""
        head, rest = pattern[0], pattern[1:]
        if head == "**":
            listed = self._entries(folder) if listed is None else listed
            if rest:
                self._glob(folder, rel, rest, linked, listed)
            for name, path, kind in listed:
                if kind == "dir" and self._enter(path, kind):
                    self._glob(path, posixpath.join(rel, name), pattern, linked)
            return
        if not set(head) & code.GLOB_CHARACTERS:
            path = os.path.join(folder, head)
            kind = _kind(path)
            if not rest and head.endswith(".md") and kind in ("file", "link", "other"):
                self._file(path, posixpath.join(rel, head), kind, linked)
            elif rest and kind in ("dir", "link") and self._enter(path, kind):
                self._glob(path, posixpath.join(rel, head), rest, linked or kind == "link")
            return
        matcher = globs.compile(head)
        for name, path, kind in self._entries(folder) if listed is None else listed:
            if not matcher.matches(name):
                continue
            if not rest:
                if name.endswith(".md") and kind != "dir":
                    self._file(path, posixpath.join(rel, name), kind, linked)
            elif kind in ("dir", "link") and self._enter(path, kind):
                self._glob(path, posixpath.join(rel, name), rest, linked or kind == "link")

    def _enter(self, path: str, kind: str) -> bool:
        """Whether the walk may go into the folder ``path``: a folder of the repository's
        file system that is not the tree (a link: to a folder of the repository outside the
        tree); below a folder of the repository, only a link can lead out of it."""
        if self.cut:
            return False
        try:
            info = os.stat(path)
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode) or info.st_dev != self.device:
            return False
        if (info.st_dev, info.st_ino) == self.tree:
            return False
        if kind != "link":
            return True
        real = Path(os.path.realpath(path))
        inside = real == self.repo or self.repo in real.parents
        return inside and self.real_root not in real.parents

    def _file(self, path: str, rel: str, kind: str, linked: bool = False) -> None:
        if rel in self.files or self.cut:
            return
        if kind == "link":
            real = Path(os.path.realpath(path))
            if real != self.repo and self.repo not in real.parents:
                self.problems.append(
                    Problem(rel, 1, "symbolic link points outside the repository; not read")
                )
                return
            if self.real_root in real.parents:
                self.problems.append(
                    Problem(rel, 1, "symbolic link into the memory tree; not read as a record")
                )
                return
        if len(self.files) >= MAX_FILES:
            self._stop(
                f" matches more than {MAX_FILES:,} files: the first {MAX_FILES:,} found are read"
            )
            return
        self.files[rel] = path
        if linked or kind == "link":
            self.linked.add(rel)


def _folded(pattern: tuple[str, ...]) -> tuple[str, ...]:
    """``pattern`` with each run of ``**`` made one: ``**/**`` matches what ``**`` does, and
    walked as written it would list each folder once per way of splitting its path."""
    out: list[str] = []
    for part in pattern:
        if part != "**" or not out or out[-1] != "**":
            out.append(part)
    return tuple(out)


def _identity(path: Path) -> tuple[int, int]:
    """``(st_dev, st_ino)`` of ``path``; ``(-1, -1)`` when it is gone (nothing matches it)."""
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_dev, info.st_ino)


def _through_link(path: Path) -> bool:
    """Whether a symbolic link is on the way to ``path``."""
    return os.path.realpath(path) != os.path.abspath(path)


def _kind(path: str) -> str:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return ""
    if stat.S_ISLNK(mode):
        return "link"
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"
