"""What the model receives from ``memsite mcp``'s reading tools, in characters (issue 24).

    python bench/bench_mcp_payload.py [--full]

Copies the bundled sample memory (``memory/``) into a temporary project, starts ``memsite
mcp`` as a real subprocess and calls ``recall``, ``why``, ``search`` and ``prime`` with the
MCP SDK's stdio client, as Claude Code or Cursor do. For each result it counts every content
block a client may forward to the model: the characters of its text blocks and of its
structured content as compact JSON. The ratio is all of them over the budget's characters
(``budget`` × 4, memsite's four bytes per token); ``search`` has no budget of its own and is
measured against ``SEARCH_BUDGET``, what a search of ``limit`` hits is allowed to take.
``--full`` asks for each hit's whole text as well (the tools' ``full`` flag).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent
CHARS_PER_TOKEN = 4
SEARCH_BUDGET = 1500  # tokens: what a search of 10 hits may take, as recall's default budget

# (tool, arguments, the budget the result is measured against)
CALLS: list[tuple[str, dict[str, Any], int]] = [
    ("recall", {"prompt": "why did we stop keeping user sessions in mongo?", "budget": 1500}, 1500),
    ("recall", {"prompt": "how do we hash passwords?", "budget": 500}, 500),
    ("recall", {"prompt": "refresh token rotation and reuse", "budget": 4000}, 4000),
    ("why", {"path": "services/auth/passwords.py", "budget": 1500}, 1500),
    ("why", {"path": "services/auth/store/", "budget": 500}, 500),
    ("search", {"query": "session store postgres", "limit": 10}, SEARCH_BUDGET),
    ("search", {"query": "tokens", "limit": 25}, SEARCH_BUDGET * 25 // 10),
    ("prime", {"task": "finish the session migration", "budget": 2400}, 2400),
    ("prime", {"task": "finish the session migration", "budget": 40000}, 40000),
]


def sizes(result: Any) -> tuple[int, int]:
    """Characters of the text blocks, and of the structured content as compact JSON."""
    text = sum(len(block.text) for block in result.content if block.type == "text")
    structured = result.structured_content
    data = 0 if structured is None else len(json.dumps(structured, separators=(",", ":")))
    return text, data


def project() -> Path:
    """A project holding a copy of the sample memory (``why`` resolves paths against it)."""
    work = Path(tempfile.mkdtemp(prefix="memsite-bench-payload-"))
    shutil.copytree(REPO / "memory", work / "memory")
    return work


async def measure(work: Path, full: bool) -> list[tuple[str, int, int, int, float]]:
    env = {"MEMSITE_CACHE": str(work / ".cache")}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memsite", "--root", str(work / "memory"), "mcp"],
        env=env,
    )
    rows = []
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for tool, arguments, budget in CALLS:
                arguments = {**arguments, "full": True} if full else arguments
                result = await session.call_tool(tool, arguments)
                assert not result.is_error, result
                text, data = sizes(result)
                ratio = (text + data) / (budget * CHARS_PER_TOKEN)
                rows.append((tool, budget, text, data, ratio))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="ask for each hit's whole text too")
    args = parser.parse_args()
    work = project()
    try:
        rows = anyio.run(measure, work, args.full)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'tool':8} {'budget':>7} {'text':>8} {'structured':>11} {'ratio':>6}")
    for tool, budget, text, data, ratio in rows:
        print(f"{tool:8} {budget:7,} {text:8,} {data:11,} {ratio:6.2f}")


if __name__ == "__main__":
    main()
