"""How one MCP tool call runs (issues 10, 22 and 25.5): alone (``Memory`` serves one call at
a time), in the worker process when the server has one, bounded by its timeout, and with
memsite's refusals made a one-line tool error the model can read and act on, naming the
tools' parameters (``supersedes``, ``allow_future=True``), never a command-line flag."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from mcp.types import CallToolResult, TextContent

from ..errors import TOOLS, MemsiteError, spelled
from ..memory import Memory
from .worker import Overrun

T = TypeVar("T")


def error(message: str) -> CallToolResult:
    """A tool error result carrying one line."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def one_call(method: Callable[..., T]) -> Callable[..., T]:
    """Run a tool alone (the SDK runs tools on worker threads; ``Memory`` serves one call at a
    time), in the worker process when there is one, and turn memsite's refusals into an
    error result the model can read and act on."""

    @functools.wraps(method)
    def call(self: Any, **kwargs: Any) -> Any:
        ctx = kwargs.pop("ctx", None)
        with self.lock:
            if self.worker is None:
                return run(self, method, kwargs)
            author = self._author(ctx)
            try:
                return self.worker.call(method.__name__, kwargs, author)
            except Overrun:
                return error(
                    f"{method.__name__}: no answer within {self.worker.timeout:g} s, so the call"
                    " was stopped (memory holds what it held before); try a narrower call"
                )

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
