"""The process that runs the MCP server's tool calls, so that every call has a bound (issue 22).

A call that runs away (a pathological input, a tree too large for the bound) holds whatever
thread runs it, and pure-Python or C work that holds the GIL cannot be interrupted from
another thread. So the server runs each tool in a child process that keeps one ``Memory``
(the index and the embedding model load once, as before) and waits for its answer at most
``timeout`` seconds: past that, the child is killed, the call is a tool error, and the next
call starts a fresh child. Writes go through the store's locked appends and atomic replaces,
which a kill never leaves half written.

The parent and the child speak length-prefixed pickles over the child's own pipes (its
standard output is pointed at standard error, so nothing a library prints can corrupt the
stream). Both ends are this package, run by the same user: nothing else ever writes to them.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

_HEADER = struct.Struct(">Q")


@dataclass(frozen=True)
class Opened:
    """How the child opens its ``Memory``: the arguments of ``Memory(root, ...)``."""

    root: str
    cache_dir: str | None = None
    allow_secrets: bool = False
    allow_future: bool = False
    allow_past: bool = False


class Overrun(Exception):
    """The child gave no answer within the bound, or died; it has been stopped."""


def _send(stream: BinaryIO, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise Overrun("no answer in time")
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise Overrun("the worker ended")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _receive(fd: int, deadline: float | None = None) -> Any:
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exactly(fd, size, deadline))  # noqa: S301 - our own child


@dataclass
class Worker:
    """The child process of one server; started at the first call, restarted after a kill."""

    module: str  # run as ``python -m module``: it calls ``serve_calls``
    opened: Opened
    timeout: float
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def call(self, name: str, kwargs: dict[str, Any], author: str | None) -> Any:
        """The result of tool ``name`` in the child, or ``Overrun`` after ``timeout`` s."""
        process = self._started()
        assert process.stdin is not None and process.stdout is not None
        try:
            _send(process.stdin, (name, kwargs, author))
            return _receive(process.stdout.fileno(), time.monotonic() + self.timeout)
        except (Overrun, OSError, EOFError, pickle.UnpicklingError) as err:
            self.stop()
            raise Overrun(str(err)) from None

    def stop(self) -> None:
        """Kill the child (it may be in the middle of anything) and forget it."""
        process, self.process = self.process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if process.poll() is None:
            process.kill()
        process.wait()

    def _started(self) -> subprocess.Popen[bytes]:
        if self.process is not None and self.process.poll() is None:
            return self.process
        self.stop()
        process = subprocess.Popen(
            [sys.executable, "-m", self.module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert process.stdin is not None
        _send(process.stdin, self.opened)
        self.process = process
        return process


def serve_calls(run: Callable[[Any, str, dict[str, Any], str | None], Any]) -> None:
    """The child's loop: open the memory named on stdin, then answer each call with
    ``run(memory, name, kwargs, author)`` until the parent closes the pipe."""
    from ..memory import Memory

    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not reach the pipe
    # the parent's Ctrl-C is the parent's: the child ends when its pipe closes
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        opened: Opened = _receive(requests.fileno())
    except Overrun:
        return
    memory = Memory(
        opened.root,
        cache_dir=opened.cache_dir,
        allow_secrets=opened.allow_secrets,
        allow_future=opened.allow_future,
        allow_past=opened.allow_past,
        notify=lambda message: print(f"memsite: {message}", file=sys.stderr, flush=True),
    )
    with memory:
        while True:
            try:
                name, kwargs, author = _receive(requests.fileno())
            except Overrun:
                return
            _send(answers, run(memory, name, kwargs, author))
