"""The MCP server's read-only resources (issue 10): the persona, the live session and one
entry by id, each read in one call into ``Memory`` under the lock the tools hold."""

from __future__ import annotations

import threading
from collections.abc import Callable

from mcp.server.mcpserver.exceptions import ResourceError

from ..errors import MemsiteError
from ..memory import Memory
from ..store import tree
from ..store.session import hot


class MemoryResources:
    """``memsite://persona``, ``memsite://session`` and ``memsite://entry/{id}``."""

    def __init__(self, memory: Memory, lock: threading.Lock) -> None:
        self.memory = memory
        self.lock = lock

    def _read(self, read: Callable[[], str]) -> str:
        with self.lock:
            try:
                return read()
            except MemsiteError as err:
                raise ResourceError(str(err)) from None

    def persona(self) -> str:
        """Who the agent is (persona.md), injected at every session start."""

        def read() -> str:
            tree.check_root(self.memory.root)
            text = tree.read_persona(self.memory.root)
            if text is None and tree.persona_is_template(self.memory.root):
                raise ResourceError(
                    f"{self.memory.root}: persona.md is still the template init wrote: "
                    "nothing to read until a person edits it"
                )
            if text is None:
                raise ResourceError(f"{self.memory.root}: no persona.md (write one by hand)")
            return text

        return self._read(read)

    def session(self) -> str:
        """The live session: task, current step, files, decisions, pending actions."""

        def read() -> str:
            context = self.memory.session()
            return hot.render(context) if context else "No active session.\n"

        return self._read(read)

    def entry(self, id: str) -> str:
        """One entry of memory by id, as written."""
        return self._read(lambda: self.memory.get(id).markdown)
