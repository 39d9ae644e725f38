"""``memsite mcp`` as an agent's client sees it: a real subprocess spoken to with the MCP SDK's
own stdio client (issue 10)."""

from __future__ import annotations

import datetime as dt
import inspect
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402  (comes with the mcp extra)
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.types import Implementation  # noqa: E402

from memsite import Memory  # noqa: E402
from memsite.store.check import check_tree  # noqa: E402
from memsite.store.tree import init_tree  # noqa: E402

READING = {"prime", "recall", "why", "search", "get", "related", "check"}
WRITING = {
    "session_start",
    "progress",
    "pending_add",
    "pending_done",
    "decide",
    "learn",
    "log",
    "session_end",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose memory/ the server finds from a folder below it."""
    init_tree(tmp_path / "project" / "memory")
    (tmp_path / "project" / "memory" / "persona.md").write_text("# Persona\n\nTerse reviewer.\n")
    (tmp_path / "project" / "src").mkdir()
    return tmp_path / "project"


def talk(
    project: Path,
    scenario: Callable[[ClientSession], Awaitable[Any]],
    *,
    env: dict[str, str] | None = None,
    args: list[str] | None = None,
) -> Any:
    """Start ``memsite mcp`` in ``project/src`` and run ``scenario`` against it."""
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memsite", "mcp", *(args or [])],
        cwd=project / "src",
        env={"MEMSITE_CACHE": str(project / ".cache"), **(env or {})},
    )
    log = project / "server.log"

    async def run() -> Any:
        with log.open("a") as errlog:
            async with stdio_client(server, errlog=errlog) as (read, write):
                client = Implementation(name="claude-test", version="1.0")
                async with ClientSession(read, write, client_info=client) as session:
                    await session.initialize()
                    return await scenario(session)

    result = anyio.run(run)
    assert "Traceback" not in log.read_text()
    return result


def failed(result: Any) -> str:
    """The one-line message of a tool error result."""
    assert result.is_error, result
    (content,) = result.content
    return content.text


def first_heading(found: Any) -> str:
    """The heading of a search's first hit, as its markdown shows it (issue 24: the
    structured content holds references, not words)."""
    line = next(line for line in found.content[0].text.splitlines() if line.startswith("### "))
    return line.rstrip()


def test_an_agent_lists_decides_recalls_reads_and_survives_bad_input(project: Path) -> None:
    decisions = project / "memory" / "cold" / "decisions.md"

    async def scenario(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == READING | WRITING
        for name in READING:
            assert tools[name].annotations.read_only_hint is True, name
        for name in WRITING:
            hints = tools[name].annotations
            assert (hints.read_only_hint, hints.destructive_hint) == (False, False), name
        assert all(tool.description and tool.output_schema for tool in tools.values())
        resources = {str(r.uri) for r in (await session.list_resources()).resources}
        assert resources == {"memsite://persona", "memsite://session"}
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memsite://entry/{id}"]

        done = await session.call_tool(
            "decide",
            {
                "title": "Store sessions in Postgres",
                "why": "Mongo lost writes under load",
                "tags": ["database"],
            },
        )
        assert not done.is_error, done
        entry_id = done.structured_content["id"]
        assert entry_id.endswith("-store-sessions-in-postgres")

        recalled = await session.call_tool("recall", {"prompt": "why did we leave mongo?"})
        assert not recalled.is_error, recalled
        assert recalled.structured_content["hits"][0]["id"] == entry_id
        (block,) = recalled.content  # the markdown, once (issue 24)
        assert "Mongo lost writes under load" in block.text

        persona = await session.read_resource("memsite://persona")
        assert persona.contents[0].text == "# Persona\n\nTerse reviewer.\n"
        entry = await session.read_resource(f"memsite://entry/{entry_id}")
        assert entry.contents[0].text.startswith("## ")

        before = decisions.read_bytes()
        assert failed(await session.call_tool("decide", {"title": " ", "why": "x"})) == (
            "title is empty"
        )
        assert "no decision with that id" in failed(
            await session.call_tool("decide", {"title": "B", "why": "x", "supersedes": "nope"})
        )
        big = "x" * (2 * 1024 * 1024)
        assert failed(
            await session.call_tool("decide", {"title": "Big", "why": "x", "body": big})
        ) == ("body is 2,097,152 bytes; the limit is 1,048,576 bytes (1 MiB)")
        assert failed(await session.call_tool("decide", {"title": 3, "why": 1})) == (
            "decide: title must be a string (got 3); why must be a string (got 1)"
        )
        assert "no entry 'nope'" in failed(await session.call_tool("get", {"id": "nope"}))
        with pytest.raises(MCPError, match="no entry 'nope'"):
            await session.read_resource("memsite://entry/nope")
        assert decisions.read_bytes() == before  # nothing half-written

        got = await session.call_tool("get", {"id": f"cold/decisions.md#{entry_id}"})
        assert got.structured_content["status"] == "current"
        assert got.structured_content["fields"]["author"] == "claude-test"  # the handshake's name
        checked = await session.call_tool("check", {})
        assert checked.structured_content["errors"] == 0

    talk(project, scenario)
    text = decisions.read_text("utf-8")
    assert text.count("\n## ") == 1
    assert "## " in text and "Store sessions in Postgres" in text
    assert "- **Why:** Mongo lost writes under load" in text
    assert "- **Author:** claude-test" in text
    assert check_tree(project / "memory") == []


@pytest.mark.skipif(
    "allow_future" not in inspect.signature(Memory).parameters,
    reason="the future-date rule (issue 13) has not landed",
)
def test_a_date_in_the_future_is_a_tool_error(project: Path) -> None:
    later = (dt.datetime.now() + dt.timedelta(days=30)).replace(microsecond=0).isoformat()

    async def scenario(session: ClientSession) -> str:
        return failed(await session.call_tool("log", {"action": "from the future", "at": later}))

    assert "future" in talk(project, scenario)
    assert list((project / "memory" / "warm").glob("*.md")) == []


def test_writes_are_redacted_and_signed_by_memsite_author(project: Path) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

    async def scenario(session: ClientSession) -> Any:
        await session.call_tool("session_start", {"task": "rotate the tokens"})
        await session.call_tool("progress", {"step": "revoking", "files": ["auth/tokens.py"]})
        pending = await session.call_tool("pending_add", {"text": "tell the team"})
        assert pending.structured_content["pending"] == ["tell the team"]
        session_text = await session.read_resource("memsite://session")
        assert "rotate the tokens" in session_text.contents[0].text
        return await session.call_tool(
            "learn",
            {"title": "Leaked", "category": "security", "why": f"token {secret} was in a log"},
        )

    learned = talk(project, scenario, env={"MEMSITE_AUTHOR": "maria"})
    (notice,) = learned.structured_content["notices"]
    assert notice.startswith("redacted 1 secret(s) in why (")
    text = (project / "memory" / "cold" / "learnings.md").read_text("utf-8")
    assert secret not in text and "- **Author:** maria" in text


def test_the_server_and_the_cli_write_at_once_and_nothing_is_lost(project: Path) -> None:
    """Two writers on one day log: the server's appends and a loop of ``memsite log``
    processes; the server also sees what the CLI wrote at its next call."""
    root = project / "memory"
    loop = (
        "import subprocess, sys\n"
        "for i in range(15):\n"
        f"    subprocess.run([sys.executable, '-m', 'memsite', '--root', {str(root)!r},"
        " 'log', f'cli write {i}'], check=True, capture_output=True)\n"
    )

    async def scenario(session: ClientSession) -> None:
        writer = subprocess.Popen([sys.executable, "-c", loop], env=_clean_env())
        try:
            for i in range(40):
                result = await session.call_tool("log", {"action": f"mcp write {i}"})
                assert not result.is_error, result
        finally:
            assert await anyio.to_thread.run_sync(writer.wait) == 0
        found = await session.call_tool(
            "search", {"query": '"cli write 14"', "kind": "activity", "limit": 1}
        )
        assert first_heading(found).endswith("cli write 14")

    talk(project, scenario)
    titles = sorted(entry.title for entry in Memory(root).entries("activity"))
    expected = sorted([f"cli write {i}" for i in range(15)] + [f"mcp write {i}" for i in range(40)])
    assert titles == expected
    assert [p for p in check_tree(root) if p.severity == "error"] == []


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}


def test_without_the_extra_mcp_says_which_extra_to_install(project: Path) -> None:
    """The base install has no ``mcp`` package: one line, exit 1, no traceback."""
    hide = "import sys; sys.modules['mcp'] = None; from memsite.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", hide, "mcp"],
        cwd=project,
        capture_output=True,
        text=True,
        env=_clean_env(),
    )
    assert (done.returncode, done.stdout) == (1, "")
    # no package index has memsite (issue 25.1): the fix names the extra on memsite itself
    assert done.stderr == (
        "Error: memsite mcp needs the MCP SDK, memsite's mcp extra: reinstall memsite with it, "
        'e.g. pip install -e "/path/to/memsite[mcp]" (docs/agents.md#install-into-your-project)\n'
    )


def test_outside_any_project_mcp_says_where_it_looked(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memsite", "mcp"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_clean_env(),
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(
        f"Error: no memory tree found: looked for {tmp_path / 'memory'}, "
    )
    assert done.stderr.count("\n") == 1


def test_the_write_tools_take_the_paths_and_commit_an_entry_governs(project: Path) -> None:
    """Issue 14: ``decide``, ``learn`` and ``log`` carry ``paths`` and ``commit``."""

    async def scenario(session: ClientSession) -> None:
        for tool, arguments in (
            ("decide", {"title": "Tokens live 15 minutes", "why": "leaks"}),
            ("learn", {"title": "Token tests need a clock", "category": "testing"}),
            ("log", {"action": "edited the tokens"}),
        ):
            done = await session.call_tool(
                tool, {**arguments, "paths": ["./auth/../auth/tokens.py", "auth/"], "commit": "v1"}
            )
            assert not done.is_error, done
        refused = await session.call_tool(
            "decide", {"title": "Out", "why": "w", "paths": ["../elsewhere.py"]}
        )
        assert "outside the repository" in failed(refused)
        found = await session.call_tool("why", {"path": "auth/tokens.py"})
        items = found.structured_content["items"]
        assert [(i["kind"], i["match"]) for i in items] == [
            ("decision", "file"),
            ("learning", "file"),
            ("activity", "mentions"),
        ]

    talk(project, scenario)
    entries = Memory(project / "memory").entries()
    named = [e for e in entries if e.paths]
    assert sorted(e.title for e in named) == [
        "Token tests need a clock",
        "Tokens live 15 minutes",
        "edited the tokens",
    ]
    assert all(e.paths == ["auth/tokens.py", "auth/"] and e.commit == "v1" for e in named)


def test_a_call_that_overruns_is_stopped_and_the_server_stays_usable(project: Path) -> None:
    """Issue 22: a call past --call-timeout is a tool error within the bound (here: a search
    that waits on an index another process holds locked), and the next calls are answered."""
    import fcntl
    import time

    hold: dict[str, int] = {}

    async def scenario(session: ClientSession) -> None:
        done = await session.call_tool("decide", {"title": "Use Postgres", "why": "Durability"})
        assert not done.is_error, done
        assert not (await session.call_tool("search", {"query": "postgres"})).is_error
        (lock,) = (project / ".cache").rglob("*.lock")
        hold["fd"] = os.open(lock, os.O_RDWR)
        fcntl.flock(hold["fd"], fcntl.LOCK_EX)  # another process is updating the index
        await session.call_tool("learn", {"title": "Pin the clock", "category": "testing"})
        start = time.monotonic()
        stuck = await session.call_tool("search", {"query": "clock"})
        took = time.monotonic() - start
        assert "search: no answer within 2 s, so the call was stopped" in failed(stuck)
        assert took < 5, took
        start = time.monotonic()
        got = await session.call_tool("get", {"id": done.structured_content["id"]})
        assert not got.is_error and got.structured_content["title"] == "Use Postgres"
        assert time.monotonic() - start < 5
        fcntl.flock(hold["fd"], fcntl.LOCK_UN)
        found = await session.call_tool("search", {"query": "clock"})
        assert not found.is_error, found
        assert first_heading(found).endswith("Pin the clock")

    try:
        talk(project, scenario, args=["--call-timeout", "2"])
    finally:
        if "fd" in hold:
            os.close(hold["fd"])


def received(result: Any) -> int:
    """Every character a client may forward to the model: its text blocks and its structured
    content as JSON (issue 24)."""
    text = sum(len(block.text) for block in result.content)
    return text + len(json.dumps(result.structured_content, separators=(",", ":")))


def test_the_reading_tools_send_the_model_no_more_than_their_budget(tmp_path: Path) -> None:
    """Issue 24: recall, why, search and prime reach the model as their markdown once and
    references to their hits, within 1.15 times their budget's characters, and still say
    which entries they are, where, and whether they hold; ``full`` gives each hit's text."""
    project = tmp_path / "project"
    shutil.copytree(Path(__file__).resolve().parent.parent / "memory", project / "memory")
    (project / "src").mkdir()
    calls = [
        ("recall", {"prompt": "why did we stop keeping user sessions in mongo?"}, 1500),
        ("recall", {"prompt": "how do we hash passwords?", "budget": 500}, 500),
        ("why", {"path": "services/auth/passwords.py"}, 1500),
        ("search", {"query": "session store postgres", "limit": 10}, 1500),
        ("prime", {"task": "finish the session migration", "budget": 2400}, 2400),
    ]

    async def scenario(session: ClientSession) -> dict[str, Any]:
        results = {}
        for tool, arguments, budget in calls:
            result = await session.call_tool(tool, arguments)
            assert not result.is_error, result
            assert received(result) <= 1.15 * budget * 4, (tool, budget, received(result))
            results[f"{tool} {budget}"] = result
        results["full"] = await session.call_tool(
            "recall", {"prompt": "why did we stop keeping user sessions in mongo?", "full": True}
        )
        return results

    results = talk(project, scenario)
    recalled = results["recall 1500"].structured_content
    assert recalled["budget"] == 1500 and recalled["hits"] and "markdown" not in recalled
    (block,) = results["recall 1500"].content
    for hit in recalled["hits"]:
        assert set(hit) == {"id", "path", "anchor", "kind", "date", "status", "superseded_by"}
        assert f"Source: {hit['path']}#{hit['anchor']}" in block.text
    assert "2026-11-05-move-the-session-store-from-mongodb-to-postgres" in {
        hit["id"] for hit in recalled["hits"]
    }
    items = results["why 1500"].structured_content["items"]
    assert items[0]["path"] == "cold/decisions.md" and items[0]["match"] == "file"
    assert {item["status"] for item in items if item["kind"] == "decision"} >= {"current"}
    found = results["search 1500"]
    assert found.content[0].text.startswith("## Search results (10 hits)\n")
    hits = found.structured_content["hits"]
    assert len(hits) == 10 and all(
        f"{h['path']}#{h['anchor']}" in found.content[0].text for h in hits
    )
    primed = results["prime 2400"].structured_content
    assert [s["name"] for s in primed["sections"]][:2] == ["persona", "hot"]
    full = results["full"].structured_content
    assert full["markdown"] == results["full"].content[0].text
    assert all(hit["text"] and hit["snippet"] for hit in full["hits"])


def test_a_pattern_built_to_backtrack_leaves_the_server_answering(project: Path) -> None:
    """Issue 22: a stored glob built to backtrack (12 `**a`), then `why` of a path that makes
    a backtracking matcher try every split, then `search`: each answered within 3 s."""
    import time

    glob = "src/" + "**a" * 12 + "**b"

    async def scenario(session: ClientSession) -> None:
        done = await session.call_tool(
            "decide", {"title": "Keep the scanner", "why": "Audit", "paths": [glob]}
        )
        assert not done.is_error, done
        for name, arguments in (
            ("why", {"path": "src/" + "a" * 40}),
            ("search", {"query": "scanner"}),
        ):
            start = time.monotonic()
            answer = await session.call_tool(name, arguments)
            assert not answer.is_error, answer
            assert time.monotonic() - start < 3, name

    talk(project, scenario)
