"""The code an entry governs: its paths and commit, normalised, matched and resolved
(:mod:`.governs`), with the one glob matcher every reader uses (:mod:`.globs`)."""

from .governs import (
    GLOB_CHARACTERS,
    Match,
    best_match,
    commit_url,
    fields,
    from_folder,
    is_glob,
    is_hash,
    is_repository,
    match,
    missing_paths,
    normalise,
    pattern_problem,
    present,
    repository_root,
    resolve_commit,
)

__all__ = [
    "GLOB_CHARACTERS",
    "Match",
    "best_match",
    "commit_url",
    "fields",
    "from_folder",
    "is_glob",
    "is_hash",
    "is_repository",
    "match",
    "missing_paths",
    "normalise",
    "pattern_problem",
    "present",
    "repository_root",
    "resolve_commit",
]
