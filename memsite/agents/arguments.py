"""The MCP tools' numeric arguments and the one line a refused argument becomes (issue 22).

The ranges are the library's (``store/inputs.py``) and go into each tool's input schema,
so a client sees them. An argument that fails its type or range (``NaN``, ``1e400``, ``1e308``
for a whole number, a budget of 0) is a tool error of one line naming the tool and its
parameter; the SDK's own report is pydantic's, four lines and a web address.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from ..store import inputs

Budget = Annotated[
    int,
    Field(
        ge=1,
        le=inputs.MAX_TOKENS,
        description=f"Most tokens the markdown may take (1 to {inputs.MAX_TOKENS:,}).",
    ),
]
Limit = Annotated[
    int,
    Field(ge=1, le=inputs.MAX_HITS, description=f"Most hits (1 to {inputs.MAX_HITS:,})."),
]


class Server(MCPServer):
    """The SDK's server, with a refused argument said in one line (``refusal``)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as err:
            if not isinstance(err.__cause__, ValidationError):
                raise
            raise ToolError(refusal(name, err.__cause__)) from None


def refusal(tool: str, err: ValidationError) -> str:
    """``search: limit: Input should be a finite number (got nan)``: each refused argument,
    by the tool's own parameter name."""
    said = []
    for problem in err.errors():
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        given = repr(problem.get("input"))
        given = given if len(given) <= 24 else f"{given[:20]}…"
        said.append(f"{where}: {problem['msg']} (got {given})")
    return f"{tool}: {'; '.join(said)}"


Full = Annotated[
    bool,
    Field(
        description="Also each hit's whole text, and the markdown again, in the structured"
        " content (several times the budget; default: the markdown once, hits as references)."
    ),
]
Since = Annotated[str | None, Field(description="Only from this date on (YYYY-MM-DD).")]
Until = Annotated[str | None, Field(description="Only up to this date (YYYY-MM-DD).")]
Tags = Annotated[list[str] | None, Field(description="Short labels, e.g. ['database'].")]
Supersedes = Annotated[
    str | None, Field(description="The id of the earlier entry of the same kind this replaces.")
]
Body = Annotated[str | None, Field(description="Longer markdown under the entry (optional).")]
Paths = Annotated[
    list[str] | None,
    Field(description="Files, folders or globs it governs, relative to the repository root."),
]
Commit = Annotated[str | None, Field(description="The commit it is about (a ref or a hash).")]
At = Annotated[
    str | None,
    Field(description="When it happened, ISO-8601 (default: now). Only to backfill history."),
]
Title = Annotated[
    str, Field(description="One line saying what, e.g. 'Store sessions in Postgres'.")
]
