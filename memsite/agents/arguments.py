"""The MCP tools' arguments: their types and ranges, and the one line a refused argument
becomes (issues 22 and 25.5).

The ranges are the library's (``store/inputs.py``) and go into each tool's input schema,
so a client sees them. An argument that fails its type or range (``NaN``, ``1e400``, ``1e308``
for a whole number, a budget of 0, ``budget="lots"``, ``paths=5``) or that the tool does not
take is a tool error of one line naming the tool, the parameter and what it must be, said
from the tool's own schema; the SDK's own report is pydantic's, several lines and a web
address.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from pydantic import BeforeValidator, Field, ValidationError

from ..store import inputs
from .stdio import standard_input


def _not_a_bool(value: Any) -> Any:
    """``true`` is not a count: pydantic would read it as 1 (``limit=true``: one hit)."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a whole number")
    return value


Budget = Annotated[
    int,
    Field(
        ge=1,
        le=inputs.MAX_TOKENS,
        description=f"Most tokens the markdown may take (1 to {inputs.MAX_TOKENS:,}).",
    ),
    BeforeValidator(_not_a_bool),
]
Limit = Annotated[
    int,
    Field(ge=1, le=inputs.MAX_HITS, description=f"Most hits (1 to {inputs.MAX_HITS:,})."),
    BeforeValidator(_not_a_bool),
]


class Server(MCPServer):
    """The SDK's server, with a refused argument said in one line (``refusal``), reading
    standard input mended (``stdio.mended``: a lone surrogate's escape no longer makes the
    transport drop a request unanswered)."""

    async def run_stdio_async(self) -> None:
        with standard_input() as stdin:
            async with stdio_server(stdin=stdin) as (read_stream, write_stream):
                lowlevel = self._lowlevel_server
                await lowlevel.run(
                    read_stream, write_stream, lowlevel.create_initialization_options()
                )

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        tool = self._tool_manager.get_tool(name)
        schema: dict[str, Any] = tool.parameters if tool is not None else {}
        # a misspelt allow_future would otherwise be dropped without a word
        unknown = sorted(set(arguments) - set(schema.get("properties", {})))
        if tool is not None and unknown:
            raise ToolError(unknown_refusal(name, unknown, schema))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as err:
            if not isinstance(err.__cause__, ValidationError):
                raise
            raise ToolError(refusal(name, err.__cause__, schema, arguments)) from None


def refusal(
    tool: str, err: ValidationError, schema: dict[str, Any], arguments: dict[str, Any]
) -> str:
    """``recall: budget must be a whole number from 1 to 10,000,000 (got "lots")``: each
    refused argument by the tool's own parameter name, and what its schema says it must be."""
    properties = schema.get("properties", {})
    said: dict[str, str] = {}
    for problem in err.errors():
        name = str(problem["loc"][0]) if problem["loc"] else "arguments"
        if name in said:
            continue
        must = expected(properties.get(name, {}))
        if problem["type"] == "missing":
            said[name] = f"{name} is missing: it must be {must}"
        else:
            said[name] = f"{name} must be {must} (got {shown(arguments.get(name))})"
    return f"{tool}: {'; '.join(said.values())}"


def unknown_refusal(tool: str, unknown: list[str], schema: dict[str, Any]) -> str:
    """``decide: no parameter "alow_future"; it takes title, why, ...``."""
    names = ", ".join(schema.get("properties", {})) or "no arguments"
    given = ", ".join(json.dumps(name) for name in unknown)
    return f"{tool}: no parameter {given}; it takes {names}"


def expected(schema: dict[str, Any]) -> str:
    """What a value of ``schema`` (one parameter of a tool's input schema) must be."""
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(value) for value in schema["enum"])
    options = [option for option in schema.get("anyOf", ()) if option.get("type") != "null"]
    if options:
        return " or ".join(expected(option) for option in options)
    kind = schema.get("type")
    if kind == "integer":
        low = schema.get("minimum")
        return "a whole number" if low is None else inputs.whole(low, schema.get("maximum"))
    if kind == "array":
        items = expected(schema.get("items", {}))
        return f"a list of {items.removeprefix('a ')}s" if items.startswith("a ") else "a list"
    if kind == "object":
        values = expected(schema.get("additionalProperties", {}))
        return f"an object whose values are {values.removeprefix('a ')}s"
    return {"string": "a string", "number": "a number", "boolean": "true or false"}.get(
        str(kind), "what the tool's input schema says"
    )


def shown(value: object) -> str:
    """A value as JSON, short enough for one line."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 24 else f"{text[:20]}…"


AllowFuture = Annotated[
    bool, Field(description="Accept an `at` more than a day ahead of the clock.")
]
AllowPast = Annotated[bool, Field(description="Accept an `at` before 1970-01-01.")]
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
    Field(
        description="When it happened, ISO-8601 (default: now). Only to backfill history: more"
        " than a day ahead needs allow_future, before 1970 allow_past."
    ),
]
Title = Annotated[
    str, Field(description="One line saying what, e.g. 'Store sessions in Postgres'.")
]
