"""Every write to the tree goes through here: locked appends and atomic replaces.

Appends take an exclusive ``flock`` on the file itself (a killed holder frees it at once),
re-check that the path still names the locked file (``prune`` may have moved it), then write
the old content plus the entry to a temporary file beside it, ``fsync`` it and rename it over
the file. Appending in place is not enough: Linux stops a ``write`` of more than a page at a
page boundary when SIGKILL arrives, which left half entries in the kill tests. Replaces write
a temporary file in the same folder too, so a reader always sees the old file or the new one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import CHECK_TREE, UnsafePath, WriteFailed
from .reading import NotText, read_fd, resolved, text_of


def inside(root: Path, target: Path) -> Path:
    """``target`` resolved, refusing anything (symlinks, ``..``) that leads out of ``root``."""
    real_root = resolved(root)
    real = resolved(target)
    if real != real_root and real_root not in real.parents:
        raise UnsafePath(f"{target}: resolves outside the memory tree ({real}); refusing to write")
    return real


def _describe(err: OSError) -> str:
    if err.errno == errno.ENOSPC:
        return "no space left on device"
    if err.errno == errno.EFBIG:
        return "file size limit exceeded"
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "permission denied (read-only tree?)"
    return err.strerror or str(err)


@contextlib.contextmanager
def _locked_fd(path: Path, *, create: bool = True) -> Iterator[int]:
    flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    while True:
        fd = os.open(path, flags, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
            except FileNotFoundError:
                same = False
            if same:
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the file was moved or replaced while we waited: lock the new one
    try:
        yield fd
    finally:
        os.close(fd)


class NotRestored(WriteFailed):
    """The second half of a write that spans two files failed, and the first file could not
    be put back as it was."""


def append(
    root: Path,
    path: Path,
    compose: Callable[[str], str],
    then: Callable[[], None] | None = None,
) -> str:
    """Append what ``compose(current_text)`` returns to ``path``, under the file's lock.

    ``compose`` sees the file as it is under the lock (so ids can be chosen without races)
    and returns the text to add. Returns that text. Nothing is left behind on failure.

    ``then``, the second half of a write that spans two files (a decision's pointer in the
    day log, a step in the hot context), runs under this file's lock once the entry is on
    disk. If it raises, the file is put back byte for byte before its error is passed on
    (``NotRestored`` if even that fails), so either both halves are written or neither: a
    retry after an error never writes a second copy (issue 15.9).
    """
    inside(root, path.parent)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            raise UnsafePath(f"{path}: is a symbolic link; memsite never writes through one")
        existed = path.exists()
        with _locked_fd(path) as fd:
            raw = read_fd(fd)
            # a file this append created is removed again on failure, not left empty
            created = not existed and not raw
            try:
                current = _appendable(path, raw)
                addition = compose(current)
                data = addition.encode("utf-8")
                if raw.strip():
                    sep = (
                        b"" if raw.endswith(b"\n\n") else b"\n" if raw.endswith(b"\n") else b"\n\n"
                    )
                    data = sep + data
                elif raw and not raw.endswith(b"\n"):
                    data = b"\n" + data
                mode = os.fstat(fd).st_mode
                _rewrite(path, raw + data, mode)
                if then is not None:
                    _then_or_restore(path, None if created else raw, mode, then)
            except BaseException:
                if created:
                    with contextlib.suppress(OSError):
                        os.unlink(path)
                raise
            return addition
    except OSError as err:
        raise WriteFailed(
            f"{path}: could not write ({_describe(err)}); the file is unchanged"
        ) from None


def _appendable(path: Path, raw: bytes) -> str:
    """The text of ``raw``, the bytes of ``path``; ``WriteFailed`` when every reader skips
    the file (``reading.text_of``), so an entry appended there would be lost to search,
    recall and ``get`` (the sweep after issue 36)."""
    try:
        return text_of(raw)
    except NotText as err:
        raise WriteFailed(
            f"{path}:{err.line}: {err.why}, so every reader skips it; nothing was written: "
            f"re-save it as UTF-8 text ({CHECK_TREE} lists its problems), then write again"
        ) from None


def _then_or_restore(path: Path, raw: bytes | None, mode: int, then: Callable[[], None]) -> None:
    """Run ``then``; if it raises, put ``path`` back to ``raw`` (None: remove it)."""
    try:
        then()
    except BaseException as err:
        failure: BaseException = err
        if isinstance(err, OSError):  # not this file's error: say whose it is
            where = f"{err.filename}: " if err.filename else ""
            failure = WriteFailed(f"{where}could not write ({_describe(err)})")
        try:
            if raw is None:
                os.unlink(path)
            else:
                _rewrite(path, raw, mode)
        except OSError as undo:
            raise NotRestored(
                f"{failure}; and {path} could not be put back as it was ({_describe(undo)}), "
                "so it keeps the new entry"
            ) from None
        raise failure from None


def _rewrite(path: Path, data: bytes, mode: int) -> None:
    """Put ``data`` at ``path`` atomically; the caller holds the file's lock, so a fixed
    temporary name cannot collide (a killed writer's leftover is simply overwritten)."""
    tmp = path.with_name(f".{path.name}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o600)
    try:
        try:
            os.fchmod(fd, mode & 0o7777)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_dir(path.parent)


def replace(root: Path, path: Path, data: str) -> None:
    """Atomically replace ``path`` with ``data``. The file keeps its mode (a rewrite made
    every file 0600, issue 34.7); a new one gets 0644 less the umask, like an append's."""
    inside(root, path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(6).hex()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = None
        _write_new(tmp, data.encode("utf-8"), mode)
        os.replace(tmp, path)
        _sync_dir(path.parent)
    except OSError as err:
        raise WriteFailed(
            f"{path}: could not write ({_describe(err)}); the file is unchanged"
        ) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def create(root: Path, path: Path, data: str) -> None:
    """Write a new file, whole or not at all, never over one that exists (``FileExistsError``).

    The text goes to a temporary file beside it first, which is then hard-linked to ``path``:
    a link never replaces a file, so two writers of the same new note cannot overwrite each
    other. Where the file system has no hard links, the file is created exclusively in place.
    """
    import time

    inside(root, path.parent)
    raw = data.encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{time.time_ns()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_new(tmp, raw)
        try:
            os.link(tmp, path, follow_symlinks=False)
        except FileExistsError:
            raise
        except OSError:  # no hard links here (some network and FUSE file systems)
            _write_new(path, raw)
        _sync_dir(path.parent)
    except FileExistsError:
        raise
    except OSError as err:
        raise WriteFailed(
            f"{path}: could not write ({_describe(err)}); nothing was written"
        ) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _write_new(path: Path, raw: bytes, mode: int | None = None) -> None:
    """Create ``path`` (``FileExistsError`` if anything is there, a link included) with ``raw``,
    its mode ``mode`` (None: 0644 less the umask)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


def remove(root: Path, path: Path) -> None:
    inside(root, path.parent)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    _sync_dir(path.parent)


def move(root: Path, source: Path, target: Path) -> None:
    """Move a file within the tree, holding its lock so no append lands in between."""
    inside(root, target.parent)
    if target.exists():
        raise WriteFailed(f"{target}: already exists; not moving {source} over it")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # never create the source (another prune may have moved it) nor rename over a target
        # that appeared while we waited for the lock
        with _locked_fd(source, create=False):
            if target.exists():
                raise WriteFailed(f"{target}: already exists; not moving {source} over it")
            os.rename(source, target)
            _sync_dir(target.parent)
            _sync_dir(source.parent)
    except OSError as err:
        raise WriteFailed(
            f"{source}: could not move it to {target} ({_describe(err)}); it was left in place"
        ) from None


@contextlib.contextmanager
def lock(folder: Path, *, shared: bool = False) -> Iterator[None]:
    """An exclusive (or shared) lock on a folder, for state that is replaced or moved rather
    than appended.

    Locking the folder itself leaves no lock file behind in the tree.
    """
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _sync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
