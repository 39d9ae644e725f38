"""MCP errors an agent can follow (issue 25.5): over the SDK's own stdio client, every refusal
is one line that names what the tool takes (``supersedes``, ``paths``, ``allow_future``),
never a command-line flag, and a wrong type says what the parameter must be."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from test_mcp import failed, talk  # noqa: E402

from memsite.store.tree import init_tree  # noqa: E402

FLAG = re.compile(r"(?<![\w-])--[a-z]")
URL = re.compile(r"https?://|www\.")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository holding memory/ and one committed file."""
    project = tmp_path / "project"
    init_tree(project / "memory")
    (project / "src").mkdir()
    (project / "src" / "cart.py").write_text("total = 0\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "start"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=project,
            check=True,
        )
    return project


def followable(message: str, *names: str) -> str:
    """``message`` is one line naming each of ``names`` (the tool's own parameters), with no
    ``--flag`` and no web address; returns it."""
    assert message.splitlines() == [message], message
    for name in names:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", message), (name, message)
    assert not FLAG.search(message), message
    assert not URL.search(message), message
    return message


WRITE = {"title": "Cache carts", "why": "Carts are read on every page"}
REFUSED = [
    ("decide", {**WRITE, "at": "2999-01-01"}, ["at", "allow_future=True"]),
    ("learn", {"title": "x", "category": "c", "at": "2999-01-01"}, ["at", "allow_future=True"]),
    ("log", {"action": "x", "at": "2999-01-01"}, ["at", "allow_future=True"]),
    ("decide", {**WRITE, "at": "0001-01-01"}, ["at", "allow_past=True"]),
    ("learn", {"title": "x", "category": "c", "at": "1969-12-31"}, ["at", "allow_past=True"]),
    ("log", {"action": "x", "at": "0001-01-01T00:00:00"}, ["at", "allow_past=True"]),
    ("decide", {**WRITE, "at": "2026/11/20"}, ["at"]),
    ("decide", {**WRITE, "supersedes": "2026-01-01-nothing"}, ["supersedes"]),
    ("learn", {"title": "x", "category": "c", "supersedes": "nope"}, ["supersedes"]),
    ("decide", {**WRITE, "paths": ["../outside.py"]}, ["paths"]),
    ("decide", {**WRITE, "paths": ["src/a.py,src/b.py"]}, ["paths"]),
    ("log", {"action": "x", "paths": ["src/[z-a].py"]}, ["paths"]),
    ("decide", {**WRITE, "commit": "no-such-ref"}, ["commit"]),
    ("decide", {**WRITE, "tags": ["a,b"]}, ["tags"]),
    ("decide", {**WRITE, "why": "  "}, ["why"]),
    ("decide", {**WRITE, "title": ""}, ["title"]),
    ("learn", {"title": "x", "category": ""}, ["category"]),
    ("why", {"path": "../outside.py"}, ["path"]),
    ("decide", {**WRITE, "allow_futur": True}, ["allow_futur", "allow_future"]),
    ("check", {"verbose": True}, ["verbose"]),
]


def test_every_refusal_names_the_tool_parameters_in_one_line(project: Path) -> None:
    decisions = project / "memory" / "cold" / "decisions.md"
    before = decisions.read_bytes()

    async def scenario(session: ClientSession) -> list[tuple[str, str]]:
        said = []
        for tool, arguments, _ in REFUSED:
            said.append((tool, failed(await session.call_tool(tool, arguments))))
        return said

    said = talk(project, scenario)
    assert [tool for tool, _ in said] == [tool for tool, _, _ in REFUSED]
    for (_, message), (_, _, names) in zip(said, REFUSED, strict=True):
        followable(message, *names)
    assert decisions.read_bytes() == before


def test_allow_future_and_allow_past_are_tool_parameters_that_work(project: Path) -> None:
    async def scenario(session: ClientSession) -> Any:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        for name in ("decide", "learn", "log"):
            properties = tools[name].input_schema["properties"]
            assert properties["allow_future"]["type"] == "boolean", name
            assert properties["allow_past"]["type"] == "boolean", name
        ahead = await session.call_tool("decide", {**WRITE, "at": "2999-01-01"})
        planned = await session.call_tool(
            "decide", {**WRITE, "at": "2999-01-01", "allow_future": True}
        )
        old = await session.call_tool(
            "log", {"action": "Moon landing", "at": "1969-07-20", "allow_past": True}
        )
        # allowing is for that one call: the next one is refused again
        again = await session.call_tool(
            "learn", {"title": "x", "category": "c", "at": "1969-07-20"}
        )
        return ahead, planned, old, again

    ahead, planned, old, again = talk(project, scenario)
    followable(failed(ahead), "allow_future=True")
    assert planned.structured_content["id"] == "2999-01-01-cache-carts"
    assert old.structured_content["id"].startswith("1969-07-20-moon-landing")
    followable(failed(again), "allow_past=True")
    assert "Cache carts" in (project / "memory" / "cold" / "decisions.md").read_text()


def test_a_redacted_secret_is_told_without_a_flag_the_agent_cannot_pass(project: Path) -> None:
    async def scenario(session: ClientSession) -> Any:
        return await session.call_tool(
            "log", {"action": "Rotated keys", "result": "old key AKIAIOSFODNN7EXAMPLE"}
        )

    done = talk(project, scenario)
    assert not done.is_error, done
    (notice,) = done.structured_content["notices"]
    followable(notice, "result")
    assert "allow_secrets" not in notice and "aws access key" in notice


def wrong(schema: dict[str, Any]) -> tuple[Any, str]:
    """A value of the wrong type for a parameter, and what the refusal must say it must be."""
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    first = options[0]
    if "enum" in first:
        return "no-such-kind", ", ".join(f'"{value}"' for value in first["enum"])
    kind = first["type"]
    if kind == "integer":
        return "lots", f"from {first['minimum']:,} to {first['maximum']:,}"
    return {
        "string": (5, "a string"),
        "boolean": ("maybe", "true or false"),
        "array": (5, "a list of strings"),
        "object": ({"k": 5}, "an object whose values are strings"),
    }[kind]


def valid(schema: dict[str, Any]) -> Any:
    return {"string": "x", "integer": 1, "boolean": False, "array": [], "object": {}}[
        schema["type"]
    ]


def test_a_wrong_type_for_any_parameter_of_any_tool_says_what_it_must_be(project: Path) -> None:
    async def scenario(session: ClientSession) -> list[tuple[str, str, str, str]]:
        said = []
        for tool in (await session.list_tools()).tools:
            schema = tool.input_schema
            required = {
                name: valid(schema["properties"][name]) for name in schema.get("required", [])
            }
            for name, prop in schema.get("properties", {}).items():
                value, must = wrong(prop)
                answer = await session.call_tool(tool.name, {**required, name: value})
                said.append((tool.name, name, must, failed(answer)))
                if prop.get("type") == "integer":  # pydantic reads true as 1: limit=true
                    answer = await session.call_tool(tool.name, {**required, name: True})
                    said.append((tool.name, name, must, failed(answer)))
            if required:  # a required parameter left out
                name = next(iter(required))
                left = {k: v for k, v in required.items() if k != name}
                said.append((tool.name, name, "", failed(await session.call_tool(tool.name, left))))
        return said

    said = talk(project, scenario)
    assert len(said) > 40
    for tool, name, must, message in said:
        assert message.startswith(f"{tool}: {name} "), message
        followable(message, name)
        assert must in message and "must be" in message, (must, message)
        assert "Input should" not in message and "pydantic" not in message, message


def test_a_cut_answer_names_the_budget_parameter_not_a_flag(project: Path) -> None:
    """A recall, why or prime cut to its budget says how to get it all in the tool's terms."""

    async def scenario(session: ClientSession) -> list[Any]:
        for n in range(6):
            await session.call_tool(
                "decide",
                {
                    "title": f"Price carts in integer cents, rule {n}",
                    "why": "Floats drift on discounts; cents keep cart totals exact. " * 8,
                    "paths": ["src/cart.py"],
                },
            )
        return [
            await session.call_tool(
                "recall", {"prompt": "integer cents cart totals", "budget": 60}
            ),
            await session.call_tool("why", {"path": "src/cart.py", "budget": 60}),
            await session.call_tool("prime", {"task": "cart totals in cents", "budget": 60}),
        ]

    for answer in talk(project, scenario):
        assert not answer.is_error, answer
        text = answer.content[0].text
        assert "would hold" in text, text
        assert "budget=" in text and not FLAG.search(text), text


def test_the_persona_resource_says_the_template_is_not_read_yet(project: Path) -> None:
    from mcp.shared.exceptions import MCPError

    async def scenario(session: ClientSession) -> str:
        try:
            await session.read_resource("memsite://persona")
        except MCPError as err:
            return str(err)
        return "read"

    said = talk(project, scenario)
    assert "still the template" in said and "no persona.md" not in said, said


def test_a_tool_that_needs_a_session_names_the_tool_that_starts_one(project: Path) -> None:
    async def scenario(session: ClientSession) -> list[str]:
        progress = await session.call_tool("progress", {"step": "writing the cart"})
        missing = await session.call_tool("get", {"id": "2026-01-01-nope"})
        return [failed(progress), failed(missing)]

    started, found = talk(project, scenario)
    assert "the session_start tool" in started and "memsite session" not in started, started
    assert "memsite search" not in found, found


def exchange(project: Path, *messages: str, timeout: float = 30.0) -> dict[int, Any]:
    """Send ``messages`` (raw JSON-RPC lines, as a client writes them) to ``memsite mcp`` and
    read the answers until each request has one or ``timeout`` seconds pass; the answers by
    id, and nothing on stderr but notices."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_CACHE"] = str(project / ".cache")
    server = subprocess.Popen(
        [sys.executable, "-m", "memsite", "mcp"],
        cwd=project / "src",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert server.stdin is not None and server.stdout is not None
    wanted = {json.loads(m)["id"] for m in messages if '"id"' in m}
    answers: dict[int, Any] = {}
    try:
        server.stdin.write("".join(f"{m}\n" for m in messages).encode())
        server.stdin.flush()
        deadline = time.monotonic() + timeout
        while set(answers) != wanted and time.monotonic() < deadline:
            if select.select([server.stdout], [], [], deadline - time.monotonic())[0]:
                line = server.stdout.readline()
                if not line:
                    break
                answer = json.loads(line)
                answers[answer.get("id")] = answer
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        assert server.stderr is not None
        errors = server.stderr.read().decode()
        server.stdout.close()
        server.stderr.close()
    assert "Traceback" not in errors, errors
    return answers


def request(id: int, method: str, params: dict[str, Any]) -> str:
    """A JSON-RPC request as Python's json writes it: a lone surrogate as its escape."""
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


def call(id: int, tool: str, arguments: dict[str, Any]) -> str:
    return request(id, "tools/call", {"name": tool, "arguments": arguments})


def test_a_lone_surrogate_escape_in_a_request_is_answered(project: Path) -> None:
    """Half of a cut emoji, written as JSON writes it ("a\\ud83db"), made the SDK's parser
    refuse the whole line, and the request was dropped with nothing said: the client waited
    for ever. It is read as U+FFFD, like a byte that is not UTF-8; a whole emoji's escaped
    pair and an escaped backslash are read as they were."""
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "agent\ud83d", "version": "1"},
    }
    answers = exchange(
        project,
        request(1, "initialize", hello),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call(2, "recall", {"prompt": "carts a\ud83db"}),
        call(3, "search", {"query": "carts \udcff"}),
        call(4, "get", {"id": "2026-01-01-x\ud83d"}),
        call(5, "decide", {**WRITE, "title": "Cache carts \ud83d\ude00 a\ud83db \\ud83d"}),
        call(6, "search", {"query": "Cache carts"}),
    )
    assert sorted(answers) == [1, 2, 3, 4, 5, 6], answers
    assert answers[1]["result"]["serverInfo"]["name"] == "memsite"
    for id in (2, 3, 5, 6):
        assert answers[id]["result"]["isError"] is False, answers[id]
    assert answers[4]["result"]["isError"] is True
    assert answers[4]["result"]["content"][0]["text"].startswith("no entry '2026-01-01-x\ufffd'")
    decided = answers[5]["result"]["structuredContent"]["id"]
    decisions = (project / "memory" / "cold" / "decisions.md").read_text()
    assert "Cache carts \U0001f600 a\ufffdb \\ud83d" in decisions, decided
    assert decided in json.dumps(answers[6])
