"""How one MCP tool call runs (issues 10, 22, 25.5 and 34.9): alone (``Memory`` serves one
call at a time), in the worker process when the server has one, bounded by its timeout from
the moment the server received it (a call whose time ran out while it waited behind others is
answered at once, never started late), and with memsite's refusals made a one-line tool error
the model can read and act on, naming the tools' parameters (``supersedes``,
``allow_future=True``), never a command-line flag."""

from __future__ import annotations

import contextlib
import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from mcp.types import CallToolResult, TextContent

from ..errors import TOOLS, MemsiteError, spelled
from ..memory import Memory
from .worker import Overrun, Starting, Worker

T = TypeVar("T")


def error(message: str) -> CallToolResult:
    """A tool error result carrying one line."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


class Waited(Overrun):
    """The call's time ran out while it waited for the calls before it; it never ran."""


class Queue:
    """The calls of one server, answered one at a time, each in the worker (when there is
    one) and within its timeout counted from the moment the server received the call."""

    def __init__(self, worker: Worker | None) -> None:
        self.worker = worker
        self.lock = anyio.Lock()  # fair: calls are answered in the order they came

    async def call(
        self, name: str, kwargs: dict[str, Any], author: str | None, here: Callable[[], T]
    ) -> Any:
        """``name`` run in the worker, else ``here()`` on a thread; ``Overrun`` when no answer
        came within the timeout since now."""
        received = time.monotonic()
        if self.worker is None:
            async with self.lock:
                return await anyio.to_thread.run_sync(here)
        deadline = received + self.worker.timeout
        acquired = False
        with anyio.move_on_after(deadline - time.monotonic()):
            await self.lock.acquire()
            acquired = True
        if not acquired:
            raise Waited("its time ran out while it waited")
        try:
            there = functools.partial(self.worker.call, name, kwargs, author, deadline)
            return await anyio.to_thread.run_sync(there)
        finally:
            self.lock.release()

    def late(self, name: str, why: Overrun) -> str:
        """The one line that says ``name`` had no answer in time, and what became of it."""
        limit = f"{name}: no answer within {self.worker.timeout if self.worker else 0:g} s"
        if isinstance(why, Waited):
            return f"{limit}, waiting behind earlier calls, so it was not run; try again"
        if isinstance(why, Starting):
            return f"{limit}: memsite's worker process was still starting; try again"
        return (
            f"{limit}, so the call was stopped (memory holds what it held before); try a"
            " narrower call"
        )


def one_call(method: Callable[..., T]) -> Callable[..., T]:
    """A tool's method run here and now, memsite's refusals an error result the model can
    read and act on; the server runs it through ``queued``."""

    @functools.wraps(method)
    def call(self: Any, **kwargs: Any) -> Any:
        kwargs.pop("ctx", None)
        return run(self, method, kwargs)

    return call


def queued(tools: Any, name: str) -> Callable[..., Awaitable[Any]]:
    """Tool ``name`` of ``tools`` as the server calls it: in its queue, and in the worker
    process when there is one (the SDK runs calls at once; ``Memory`` serves one at a
    time)."""
    method = getattr(tools, name)

    @functools.wraps(method)
    async def call(**kwargs: Any) -> Any:
        there = {key: value for key, value in kwargs.items() if key != "ctx"}
        author = tools._author(kwargs.get("ctx")) if tools.queue.worker is not None else None
        try:
            return await tools.queue.call(name, there, author, lambda: method(**kwargs))
        except Overrun as why:
            return error(tools.queue.late(name, why))

    return call


def run(tools: Any, method: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """``method(tools, **kwargs)`` here and now, its refusals and failures one line."""
    tools.memory.notices.clear()
    if "ctx" in inspect.signature(method).parameters:
        kwargs = {**kwargs, "ctx": None}
    try:
        with spelled(TOOLS):
            return method(tools, **kwargs)
    except MemsiteError as err:
        return error(str(err))
    except OSError as err:  # the disk's refusal, in one line as on the command line
        where = f"{err.filename}: " if err.filename else ""
        return error(f"{where}{err.strerror or err}")
    except Exception as err:  # noqa: BLE001 - one line for the model, and the server goes on
        return error(f"{type(err).__name__}: {' '.join(str(err).split())}"[:500])


@contextlib.contextmanager
def allowing(memory: Memory, future: bool, past: bool) -> Iterator[Memory]:
    """``memory`` for one call that also takes an ``at`` ahead of the clock (``future``) or
    before 1970 (``past``); what the server was opened with holds again afterwards."""
    kept = memory.allow_future, memory.allow_past
    memory.allow_future, memory.allow_past = kept[0] or future, kept[1] or past
    try:
        yield memory
    finally:
        memory.allow_future, memory.allow_past = kept
