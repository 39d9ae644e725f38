"""The MCP server's read-only resources (issue 10): the persona, the live session and one
entry by id. Each is read like a tool call (issue 34.9): in the worker process, in the calls'
queue, within the same time limit from the moment the server received the read."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import CallToolResult, TextContent

from ..errors import NotFound
from ..memory import Memory
from ..store import tree
from ..store.session import hot
from .calls import Queue, run
from .worker import Overrun


def persona(tools: Any) -> str:
    """Who the agent is (persona.md), injected at every session start."""
    root = tools.memory.root
    tree.check_root(root)
    text = tree.read_persona(root)
    if text is None and tree.persona_is_template(root):
        raise NotFound(
            f"{root}: persona.md is still the template init wrote: "
            "nothing to read until a person edits it"
        )
    if text is None:
        raise NotFound(f"{root}: no persona.md (write one by hand)")
    return text


def session(tools: Any) -> str:
    """The live session: task, current step, files, decisions, pending actions."""
    context = tools.memory.session()
    return hot.render(context) if context else "No active session.\n"


def entry(tools: Any, id: str) -> str:
    """One entry of memory by id, as written."""
    return str(tools.memory.get(id).markdown)


# what the worker reads for each resource, called as ``calls.run`` calls a tool
READERS = {"memsite://persona": persona, "memsite://session": session, "memsite://entry": entry}


class MemoryResources:
    """``memsite://persona``, ``memsite://session`` and ``memsite://entry/{id}``."""

    def __init__(self, memory: Memory, queue: Queue) -> None:
        self.memory = memory
        self.queue = queue

    async def _read(self, uri: str, **kwargs: str) -> str:
        name = uri.removeprefix("memsite://")
        try:
            said = await self.queue.call(uri, kwargs, None, lambda: run(self, READERS[uri], kwargs))
        except Overrun as why:
            raise ResourceError(self.queue.late(name, why)) from None
        if isinstance(said, CallToolResult):  # a refusal, in one line
            (line,) = [block.text for block in said.content if isinstance(block, TextContent)]
            raise ResourceError(line)
        return str(said)

    async def persona(self) -> str:
        """Who the agent is (persona.md), injected at every session start."""
        return await self._read("memsite://persona")

    async def session(self) -> str:
        """The live session: task, current step, files, decisions, pending actions."""
        return await self._read("memsite://session")

    async def entry(self, id: str) -> str:
        """One entry of memory by id, as written."""
        return await self._read("memsite://entry", id=id)
