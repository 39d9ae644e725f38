"""The process that runs the MCP server's tool calls, so that every call has a bound (issue 22).

A call that runs away (a pathological input, a tree too large for the bound) holds whatever
thread runs it, and pure-Python or C work that holds the GIL cannot be interrupted from
another thread. So the server runs each tool in a child process that keeps one ``Memory``
(the index and the embedding model load once, as before) and waits for its answer at most
``timeout`` seconds: past that, the child is killed, the call is a tool error, and the next
call starts a fresh child. Writes go through the store's locked appends and atomic replaces,
which a kill never leaves half written.

The child starts with its server, before the first call, and says when it is ready: a call
that comes while it is still starting waits for it within its own bound, and the child is
never killed for a call it was not yet running (issue 34.9). It ends with its server, whatever
it is doing: the kernel's parent-death signal on Linux (``PR_SET_PDEATHSIG``), and a thread
that watches the parent's pid everywhere, so a server killed in the middle of a call leaves
no worker behind.

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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

_HEADER = struct.Struct(">Q")
READY = "ready"  # what the child says once its memory is open
WATCH = 0.2  # seconds between the child's looks at its parent
PR_SET_PDEATHSIG = 1  # prctl(2)


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


class Starting(Overrun):
    """The child was still starting when the call's time was up; it goes on starting."""


def _send(stream: BinaryIO, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exactly(
    fd: int, size: int, deadline: float | None, late: type[Overrun] = Overrun
) -> bytes:
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise late("no answer in time")
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise Overrun("the worker ended")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _receive(fd: int, deadline: float | None = None, late: type[Overrun] = Overrun) -> Any:
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size, deadline, late))
    return pickle.loads(_read_exactly(fd, size, deadline))  # noqa: S301 - our own child


@dataclass
class Worker:
    """The child process of one server; started with it, restarted after a kill."""

    module: str  # run as ``python -m module``: it calls ``serve_calls``
    opened: Opened
    timeout: float
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    ready: bool = field(default=False, repr=False)

    def call(
        self, name: str, kwargs: dict[str, Any], author: str | None, deadline: float | None = None
    ) -> Any:
        """The result of tool ``name`` in the child, or ``Overrun`` at ``deadline`` (a
        ``time.monotonic()``; ``timeout`` s from now by default)."""
        deadline = time.monotonic() + self.timeout if deadline is None else deadline
        try:
            process = self.start()
            assert process.stdin is not None and process.stdout is not None
            if not self.ready:
                if _receive(process.stdout.fileno(), deadline, Starting) != READY:
                    raise Overrun("the worker did not start")
                self.ready = True
            _send(process.stdin, (name, kwargs, author))
            return _receive(process.stdout.fileno(), deadline)
        except Starting:
            raise
        except (Overrun, OSError, EOFError, pickle.UnpicklingError) as err:
            self.stop()
            with contextlib.suppress(OSError):
                self.start()  # the next call finds a worker ready, or nearly
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

    def start(self) -> subprocess.Popen[bytes]:
        """The running child, started now if there is none."""
        if self.process is not None and self.process.poll() is None:
            return self.process
        self.stop()
        process = _spawn([sys.executable, "-m", self.module, str(os.getpid())])
        assert process.stdin is not None
        self.process, self.ready = process, False
        _send(process.stdin, self.opened)
        return process


def _spawn(command: list[str]) -> subprocess.Popen[bytes]:
    """``command`` started from a thread that lives as long as the child: Linux sends the
    parent-death signal when the *thread* that started a child ends, and the server's calls
    run on threads that come and go."""
    spawned: list[subprocess.Popen[bytes] | BaseException] = []
    started = threading.Event()

    def keep() -> None:
        try:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            spawned.append(process)
        except BaseException as err:  # noqa: BLE001 - raised in the caller's thread
            spawned.append(err)
            return
        finally:
            started.set()
        process.wait()

    threading.Thread(target=keep, name="memsite-worker-keeper", daemon=True).start()
    started.wait()
    if isinstance(spawned[0], BaseException):
        raise spawned[0]
    return spawned[0]


def _leave_with(parent: int) -> None:
    """End this process as soon as ``parent`` (its server) ends, whatever it is doing."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    def watch() -> None:
        # also catches a parent that ended before the signal was asked for, and works where
        # there is no such signal; a parent that ends makes the child another's (init's, a
        # subreaper's): its pid never comes back
        while os.getppid() == parent:
            time.sleep(WATCH)
        os._exit(0)

    threading.Thread(target=watch, name="memsite-parent-watch", daemon=True).start()


def serve_calls(run: Callable[[Any, str, dict[str, Any], str | None], Any]) -> None:
    """The child's loop: open the memory named on stdin, then answer each call with
    ``run(memory, name, kwargs, author)`` until the parent closes the pipe."""
    from ..memory import Memory

    _leave_with(int(sys.argv[1]) if len(sys.argv) > 1 else os.getppid())
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
        _send(answers, READY)
        while True:
            try:
                name, kwargs, author = _receive(requests.fileno())
            except Overrun:
                return
            _send(answers, run(memory, name, kwargs, author))
