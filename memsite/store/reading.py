"""Every read of a file of the tree goes through here: never through a link out of the
tree, never waiting on a FIFO, never past a size limit, and text only when it is text.

``storage`` writes; both refuse the same names (a link out of the tree, a loop), and a file
every reader skips (not UTF-8, or NUL bytes: :func:`text_of`) is one no write appends to.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import MemsiteError, UnsafePath


def resolved(path: Path) -> Path:
    """``path.resolve()``, a symbolic link loop an ``OSError`` (ELOOP) as from Python 3.13 on,
    not the ``RuntimeError`` of 3.11 and 3.12: a loop committed to a tree is bad input, and
    every caller already says so for an ``OSError``."""
    try:
        return path.resolve()
    except RuntimeError as err:
        raise OSError(errno.ELOOP, "symbolic link loop", str(path)) from err


def real_path(path: Path | str) -> Path:
    """The real path of ``path`` where it is only compared, never opened: ``os.path.realpath``,
    which never raises (a link loop is left as it is, to be found missing or no tree where it
    is used), where ``Path.resolve`` on Python 3.11 raises ``RuntimeError``."""
    return Path(os.path.realpath(path))


class NotAFile(MemsiteError):
    """A name of the tree that memsite reads holds a FIFO, a device, a socket or a folder."""


class TooLarge(MemsiteError):
    """A file of the tree is over the size memsite reads of its kind."""


def read_inside(root: Path, target: Path, *, limit: int | None = None) -> bytes:
    """The bytes of a regular file of the tree, refusing (``UnsafePath``) one whose real path
    is outside ``root``: a symlink committed to git must not make memsite read, index, inject
    or publish a file of the machine it runs on (issue 15.4). Anything but a regular file is
    ``NotAFile`` and a file over ``limit`` bytes is ``TooLarge``, both refused before a byte
    is read; a missing file is ``FileNotFoundError``."""
    real_root = resolved(root)
    real = resolved(target)
    if real != real_root and real_root not in real.parents:
        raise UnsafePath(f"{target}: resolves outside the memory tree ({real}); not read")
    # O_NOFOLLOW: ``real`` has no link left, so one there now was swapped in after the check
    return _read_regular(real, target, limit, os.O_NOFOLLOW)


def read_regular(path: Path, *, limit: int | None = None, follow: bool = True) -> bytes:
    """The bytes of ``path`` (a link to a file is followed, unless not ``follow``) when it is
    a regular file: ``NotAFile`` for a FIFO, a device, a socket or a folder, ``TooLarge``
    past ``limit``, never waiting on a FIFO for a writer. For files found by a walk of a tree
    or a records folder that is already checked; :func:`read_inside` checks a name against
    the tree."""
    return _read_regular(path, path, limit, 0 if follow else os.O_NOFOLLOW)


def _read_regular(real: Path, target: Path, limit: int | None, extra: int) -> bytes:
    # O_NONBLOCK: opening a FIFO for reading waits for a writer, for ever (issue 22); with it
    # the open returns at once and fstat says what the name holds.
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | extra
    fd = os.open(real, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(
                f"{target}: {kind_of(info.st_mode)}, not a regular file; not read, replace it "
                "with a file"
            )
        if limit is not None and info.st_size > limit:
            raise TooLarge(
                f"{target}: {info.st_size:,} bytes, over its {limit:,}-byte limit; not read"
            )
        data = read_fd(fd, None if limit is None else limit + 1)
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:  # it grew after the fstat
        raise TooLarge(f"{target}: over its {limit:,}-byte limit; not read")
    return data


def kind_of(mode: int) -> str:
    """What a name holds that is not a regular file, by its ``st_mode`` ("a FIFO")."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "a device or socket"


def read_fd(fd: int, most: int | None = None) -> bytes:
    size = os.fstat(fd).st_size if most is None else min(os.fstat(fd).st_size, most)
    chunks = []
    offset = 0
    while offset < size:
        chunk = os.pread(fd, min(size - offset, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


class NotText(MemsiteError):
    """A file's bytes that every reader skips: ``why`` (not UTF-8, NUL bytes) at ``line``."""

    def __init__(self, line: int, why: str, encoding: bool) -> None:
        super().__init__(f"{line}: {why}")
        self.line, self.why, self.encoding = line, why, encoding


def text_of(raw: bytes) -> str:
    """``raw`` as text, or ``NotText``: bytes that are not UTF-8, or a NUL (binary?)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise NotText(line, f"not valid UTF-8 (byte 0x{raw[err.start]:02x})", True) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise NotText(line, "contains NUL bytes (binary?)", False)
    return text


def read_text(path: Path) -> str:
    """A file of the tree as text; raises ``UnicodeDecodeError`` for files that are not UTF-8
    and ``NotAFile`` for a FIFO (which would wait for a writer) or a device."""
    return read_regular(path).decode("utf-8")


def replaced_text(path: Path) -> str:
    """A file of the tree as text, bytes that are not UTF-8 replaced; ``NotAFile`` for a
    FIFO or a device."""
    return read_regular(path).decode("utf-8", errors="replace")
