"""``memsite mcp``: one memory tree served to an agent over the Model Context Protocol (stdio).

A thin adapter like ``site/plugin.py``: the SDK checks each tool's typed arguments against
its signature, the tool makes one call into ``Memory``, and a ``MemsiteError`` becomes a tool
error result carrying memsite's one-line message (naming the tools' parameters, not the
command line's flags), so bad input never stops the server. One
``Memory`` lives as long as the server: the index and the embedding model load once, and
every call first brings the index up to date with what other processes wrote.
"""

from __future__ import annotations

import contextlib
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from .. import __version__
from ..memory import Memory
from .arguments import Server
from .calls import error, queued, run
from .resources import READERS, MemoryResources
from .tools import READING, WRITING, MemoryTools
from .worker import Opened, Worker, serve_calls

CALL_TIMEOUT = 60.0  # seconds a tool call may take before it is stopped (issue 22)

INSTRUCTIONS = """\
This is the project's memory: decisions and why they were made, learnings, activity and the \
live session, kept as markdown in the repository. Call prime once at the start of a session. \
Before answering about earlier work, call recall with the user's message; before changing a \
file, call why with its path. Record what you decide with decide (with the paths it \
governs), what you learned with learn, and what you did with log; keep the session \
current with session_start, progress, pending_add, pending_done and session_end. Every piece \
is dated and cited as path#anchor; get returns a whole entry. Entries are only ever appended."""

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# every write appends an entry or updates the live session; nothing is ever deleted
APPENDS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)

_TOOLS: dict[int, MemoryTools] = {}


def run_in_worker(memory: Memory, name: str, kwargs: dict[str, Any], author: str | None) -> Any:
    """One tool call, or one resource read, inside the worker process
    (``worker.serve_calls``)."""
    tools = _TOOLS.setdefault(id(memory), MemoryTools(memory))
    memory.author = author
    if name in READERS:
        return run(tools, READERS[name], kwargs)
    method = getattr(MemoryTools, name) if name in READING + WRITING else None
    if method is None:
        return error(f"no tool {name!r}")
    return run(tools, method.__wrapped__, kwargs)


def build_server(memory: Memory, worker: Worker | None = None) -> MCPServer:
    """The MCP server over ``memory``: its tools and its read-only resources. With a
    ``worker``, tools run in its process and each call is stopped past its timeout."""
    server = Server("memsite", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    tools = MemoryTools(memory, worker)
    for name in READING:
        server.add_tool(queued(tools, name), annotations=READ_ONLY)
    for name in WRITING:
        server.add_tool(queued(tools, name), annotations=APPENDS)
    resources = MemoryResources(memory, tools.queue)
    markdown = "text/markdown"
    server.resource("memsite://persona", name="persona", mime_type=markdown)(resources.persona)
    server.resource("memsite://session", name="session", mime_type=markdown)(resources.session)
    server.resource("memsite://entry/{id}", name="entry", mime_type=markdown)(resources.entry)
    return server


def serve(memory: Memory, call_timeout: float = CALL_TIMEOUT) -> None:
    """Serve ``memory`` over standard input and output until the client disconnects; each tool
    call runs in a worker process and is answered within ``call_timeout`` seconds."""
    cache = None if memory.cache_dir is None else str(memory.cache_dir)
    opened = Opened(
        str(memory.root), cache, memory.allow_secrets, memory.allow_future, memory.allow_past
    )
    worker = Worker("memsite.agents.mcp_server", opened, call_timeout)
    try:
        with contextlib.suppress(OSError):  # else the first call starts it, or says why not
            worker.start()  # it gets ready while the client says hello
        build_server(memory, worker).run("stdio")
    finally:
        worker.stop()


if __name__ == "__main__":
    serve_calls(run_in_worker)
