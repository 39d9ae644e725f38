"""The code an entry governs (issue 14): paths relative to the repository root and a commit.

A path is a file (``auth/tokens.py``), a folder (``auth/``) or a glob (``auth/**``,
``*.sql``), always relative to the root of the repository that holds the memory tree: the
nearest folder above the tree with a ``.git`` (found on disk, without running git), else the
folder that holds the tree. Paths are normalised (``./a/../b`` is ``b``) and one outside the
repository is refused. They are stored as the ``Paths`` field, comma-separated, so a path
holds no comma (as a tag holds none). A commit is resolved to its full hash with git, and only
when one is given and the repository is a git repository. A glob is matched by ``globs``;
one that cannot be compiled is refused at write and skipped by every reader (issue 22).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...errors import COMMIT, PATHS, BadValue, InvalidInput, Param
from ..model import Entry
from ..reading import real_path
from .globs import compile as compile_glob
from .globs import problem as glob_problem

GLOB_CHARACTERS = frozenset("*?[")
_HASH = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def repository_root(tree: Path) -> Path:
    """The root of the repository that holds the memory tree ``tree``."""
    start = real_path(tree)  # a tree that is a link loop: no tree, where the command checks
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start.parent


def is_repository(repo: Path) -> bool:
    return (repo / ".git").exists()


def normalise(path: str, repo: Path, name: str | Param = PATHS) -> str:
    """``path`` as stored: relative to ``repo``, with ``.`` and ``..`` folded, ``/`` between
    parts, and a trailing ``/`` kept when given (a folder). ``InvalidInput`` for a path outside
    the repository, the repository itself, or one holding a comma."""
    text = path.strip().replace("\\", "/")
    if not text:
        raise BadValue(f"{name} is empty")
    if "," in text:
        raise InvalidInput(f"{name} {path!r} contains a comma; give each path {PATHS.own}")
    folder = text.endswith("/")
    if text.startswith("/"):
        absolute = PurePosixPath(posixpath.normpath(text))
        base = PurePosixPath(real_path(repo))
        if absolute != base and base not in absolute.parents:
            raise InvalidInput(f"{name} {path!r} is outside the repository {repo}")
        text = absolute.relative_to(base).as_posix()
    clean = posixpath.normpath(text)
    if clean == ".." or clean.startswith("../"):
        raise InvalidInput(f"{name} {path!r} is outside the repository {repo}")
    if clean == ".":
        raise InvalidInput(f"{name} {path!r} is the whole repository; name a file, folder or glob")
    return clean + "/" if folder else clean


def from_folder(path: str, repo: Path, here: Path) -> str:
    """``path`` as typed in the folder ``here`` (issue 25.2): a relative path is relative to
    ``here``, as in git, so one typed inside ``repo`` is returned relative to ``repo``
    (``./cart.py`` typed in ``src/`` is ``src/cart.py``; a glob likewise). An absolute path,
    and any path typed at the root or outside ``repo``, is returned as given; one that leads
    out of ``repo`` is returned absolute, for ``normalise`` to refuse."""
    text = path.strip().replace("\\", "/")
    base, folder = real_path(repo), real_path(here)
    if not text or text.startswith("/") or base not in folder.parents:
        return path
    joined = posixpath.normpath(f"{folder.relative_to(base).as_posix()}/{text}")
    if joined == ".." or joined.startswith("../"):
        return posixpath.normpath(f"{folder.as_posix()}/{text}")
    return joined + "/" if text.endswith("/") and joined != "." else joined


def present(path: str, repo: Path) -> bool:
    """Whether the working tree of ``repo`` holds the normalised ``path``; a glob counts as
    present when the folder before its first wildcard exists. A path the system cannot even
    look up (a name too long) is not present."""
    try:
        return (repo / _literal_stem(path)).exists()
    except OSError:
        return False


def _literal_stem(path: str) -> str:
    """``path`` without its trailing ``/``, cut to the folder before its first wildcard."""
    stem = path.rstrip("/")
    if is_glob(stem):
        stem = stem[: min(stem.index(c) for c in GLOB_CHARACTERS if c in stem)]
        stem = stem.rpartition("/")[0]
    return stem


def resolve_commit(repo: Path, ref: str) -> str:
    """The full hash of ``ref`` when ``repo`` is a git repository; else ``ref`` as given."""
    if not is_repository(repo):
        return ref
    from .. import git

    try:
        found = git.run(
            repo, "rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"
        )
        return found.decode().strip()
    except InvalidInput:
        raise BadValue(f"{COMMIT} {ref!r} is not a commit of the repository {repo}") from None


def fields(
    tree: Path, paths: Iterable[str], commit: str | None, *, loose: Iterable[str] = ()
) -> tuple[dict[str, str], list[str]]:
    """The ``paths`` and ``commit`` fields of an entry of the tree at ``tree``, from paths and
    a commit already checked as one-line text; ``loose`` paths (the live session's files) that
    cannot be stored are skipped and returned, not refused."""
    repo = repository_root(tree)
    found = [_stored(path, repo) for path in paths]
    skipped = []
    for path in loose:
        try:
            found.append(_stored(path, repo))
        except InvalidInput:
            skipped.append(path)
    out = {"paths": ", ".join(dict.fromkeys(found))} if found else {}
    if commit is not None:
        out["commit"] = resolve_commit(repo, commit)
    return out, skipped


def _stored(path: str, repo: Path) -> str:
    """``path`` normalised, and refused when it is a glob that cannot be compiled."""
    clean = normalise(path, repo)
    why = pattern_problem(clean)
    if why is not None:
        raise InvalidInput(f"{PATHS} {path!r} {why}")
    return clean


def is_glob(pattern: str) -> bool:
    return any(char in GLOB_CHARACTERS for char in pattern)


def pattern_problem(pattern: str) -> str | None:
    """Why the stored ``pattern`` can govern nothing (a glob that cannot be compiled: ``has
    …; fix``), or None."""
    stem = pattern.rstrip("/")
    return glob_problem(stem) if is_glob(stem) else None


@dataclass(frozen=True)
class Match:
    """How a stored path governs a path: ``how`` is ``file``, ``folder`` or ``glob``;
    ``rank`` orders them, the most specific first."""

    pattern: str
    how: str
    rank: tuple[int, int]


def match(pattern: str, path: str) -> Match | None:
    """Whether the stored ``pattern`` governs ``path`` (both normalised): the same path, a
    folder above it (the nearer the better), or a glob that matches it."""
    stem, target = pattern.rstrip("/"), path.rstrip("/")
    if is_glob(stem):
        try:
            glob = compile_glob(stem)
        except InvalidInput:
            return None  # written by hand or merged: check reports it, it governs nothing
        if glob.matches(target):
            literal = sum(1 for char in stem if char not in GLOB_CHARACTERS)
            return Match(pattern, "glob", (2, -literal))
        return None
    if stem == target:
        return Match(pattern, "file", (0, 0))
    if target.startswith(stem + "/"):
        return Match(pattern, "folder", (1, target.count("/") - stem.count("/")))
    return None


def best_match(patterns: Iterable[str], path: str) -> Match | None:
    found = [m for m in (match(p, path) for p in patterns) if m is not None]
    return min(found, key=lambda m: m.rank) if found else None


def is_hash(commit: str) -> bool:
    return bool(_HASH.match(commit))


def commit_url(repo_url: str | None, commit: str) -> str | None:
    """The web page of ``commit`` in the repository at ``repo_url`` (MkDocs' ``repo_url``),
    or None when there is no URL or the commit is not a hash."""
    if not repo_url or not is_hash(commit):
        return None
    base = repo_url.rstrip("/").removesuffix(".git")
    if "bitbucket" in base:
        return f"{base}/commits/{commit}"
    if "gitlab" in base:
        return f"{base}/-/commit/{commit}"
    return f"{base}/commit/{commit}"


def missing_paths(tree: Path, entries: Iterable[Entry]) -> list[tuple[Entry, str]]:
    """The paths of current decisions that the repository's working tree no longer holds,
    with their decision, for ``memsite check`` (a warning: the decision may need a
    successor). Only in a git repository (elsewhere there is no working tree to compare
    with), and a decision whose commit the repository does not know is skipped: it is about
    the code of another repository (the bundled sample's are). A glob counts as present when
    the folder before its first wildcard exists."""
    repo = repository_root(tree)
    decisions = [e for e in entries if e.kind == "decision"]
    replaced = {(e.supersedes or "").strip() for e in decisions}
    named = [e for e in decisions if e.paths and e.id not in replaced]
    if not named or not is_repository(repo):
        return []
    known = _known_commits(repo, {e.commit for e in named if e.commit})
    out = []
    for entry in named:
        if entry.commit and entry.commit not in known:
            continue
        for path in entry.paths:
            if pattern_problem(path) is not None:
                continue  # check reports it as an error of its own
            stem = _literal_stem(path)
            if stem and not (repo / stem).exists():
                out.append((entry, path))
    return out


def _known_commits(repo: Path, commits: set[str]) -> set[str]:
    """Which of ``commits`` name a commit of ``repo`` (one git call for all of them)."""
    if not commits:
        return set()
    import subprocess

    asked = sorted(commits)
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "--batch-check"],
            input="".join(f"{c}^{{commit}}\n" for c in asked),
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return set()
    answers = done.stdout.splitlines()
    return {c for c, line in zip(asked, answers, strict=False) if not line.endswith(" missing")}
