"""MCP's time limit, round 4 (issue 34.9), over the SDK's own stdio client: a call's
``--call-timeout`` runs from the moment the server receives it, waiting behind other calls
included; resource reads are bounded the same way; and a server killed in the middle of a call
takes its worker process with it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from test_mcp import failed, talk  # noqa: E402

from memsite import Memory  # noqa: E402
from memsite.store.tree import init_tree  # noqa: E402

LIMIT = "2"  # --call-timeout, seconds
ANSWERED_WITHIN = 5.0  # seconds, from the moment the calls were sent
DECISION = {"title": "Use Postgres", "why": "Durability", "paths": ["src/"]}
# why searches by words alone: the server's first calls never wait for the embedding model,
# which a loaded machine may take more than the 2 s to load
WHY = {"path": "src/app.py"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    init_tree(tmp_path / "project" / "memory")
    (tmp_path / "project" / "src").mkdir()
    return tmp_path / "project"


def indexed(project: Path) -> str:
    """The decision ``DECISION`` written and the index built here, before the server starts:
    its worker's first call then only opens them (a loaded machine may take more than the
    2 s to build an index); the decision's id."""
    with Memory(project / "memory", cache_dir=project / ".cache") as memory:
        decided = memory.decide(**DECISION)
        memory.index()
    return str(decided)


async def read_text(session: ClientSession, uri: str) -> str:
    """The text of a resource."""
    (content,) = (await session.read_resource(uri)).contents
    return content.text  # type: ignore[union-attr]


async def ready(session: ClientSession) -> None:
    """Until the worker answers ``why``: it starts with the server and again after a kill,
    and a call that comes while it is still starting (a loaded machine may take more than
    the 2 s) is answered that it is."""
    for _ in range(5):
        said = (await session.call_tool("why", WHY)).content[0].text
        if "Use Postgres" in said:
            return
    raise AssertionError(said)


def lock_the_index(project: Path) -> int:
    """Hold the index's lock the way an indexer does (``cache.SearchIndex._locked``: an
    exclusive ``flock`` on ``<cache>/index/<tree>.lock``); the descriptor to close."""
    (lock,) = (project / ".cache" / "index").glob("*.lock")
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def while_locked(
    project: Path,
    scenario: Callable[[ClientSession], Awaitable[None]],
    then: Callable[[ClientSession], Awaitable[None]],
    timeout: str = LIMIT,
) -> None:
    """``scenario`` against a server with ``--call-timeout timeout`` while another process
    holds the index locked and the tree has changed (so a search waits for the lock), then
    ``then`` once the lock is released."""
    hold: dict[str, int] = {}

    async def run(session: ClientSession) -> None:
        await ready(session)
        hold["fd"] = lock_the_index(project)
        await session.call_tool("learn", {"title": "Pin the clock", "category": "testing"})
        await scenario(session)
        os.close(hold.pop("fd"))
        await then(session)

    try:
        talk(project, run, args=["--call-timeout", timeout])
    finally:
        if "fd" in hold:
            os.close(hold["fd"])


def workers_of(project: Path) -> list[int]:
    """The pids of the live worker processes serving ``project`` (their environment names its
    cache)."""
    marker = f"MEMSITE_CACHE={project / '.cache'}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        ours = b"memsite.agents.mcp_server" in command and marker in environ.split(b"\0")
        if ours and state != "Z":  # a zombie has ended; only its exit status is left
            found.append(int(entry.name))
    return found


def test_queued_calls_and_a_resource_read_answer_within_the_limit(project: Path) -> None:
    """With the index locked and --call-timeout 2, ten searches sent at once and a resource
    read all answer within 5 s: the calls that waited behind the first are answered with the
    time-limit error the moment their time is up (before, each waited for the previous one
    and then had 2 s of its own: they answered at 2, 4, ... 20.5 s, the resource at 20.5 s)."""
    decided = indexed(project)

    async def scenario(session: ClientSession) -> None:
        answered: dict[str, tuple[str, float]] = {}
        sent = time.monotonic()

        async def search(n: int) -> None:
            result = await session.call_tool("search", {"query": f"clock {n}"})
            answered[f"search {n}"] = (failed(result), time.monotonic() - sent)

        async def read() -> None:
            try:
                said = await read_text(session, f"memsite://entry/{decided}")
            except MCPError as err:
                said = str(err)
            answered["resource"] = (said, time.monotonic() - sent)

        async with anyio.create_task_group() as group:
            for n in range(10):
                group.start_soon(search, n)
            group.start_soon(read)
        slowest = max(took for _, took in answered.values())
        assert slowest < ANSWERED_WITHIN, sorted(answered.items(), key=lambda kv: kv[1][1])
        for name, (said, _) in answered.items():
            if name.startswith("search"):
                assert said.startswith("search: no answer within 2 s"), said
        said, _ = answered["resource"]
        assert "Use Postgres" in said or "no answer within 2 s" in said, said

    while_locked(project, scenario, ready)  # the server goes on


def test_a_resource_read_counts_its_wait_like_a_call(project: Path) -> None:
    """A resource read's time counts from the moment it is asked, as a call's does: behind a
    call that runs to the limit it answers at the limit, in one line that says so (before,
    resources were read in the server without a limit of their own, after every call before
    them: this one waited out the search and was then read)."""
    indexed(project)

    async def scenario(session: ClientSession) -> None:
        answered: dict[str, Any] = {}
        sent = time.monotonic()

        async def search() -> None:
            answered["search"] = await session.call_tool("search", {"query": "clock"})

        async def read() -> None:
            # behind the search, and well inside the time the worker takes to start again
            # after the search's kill (importing the server alone takes about 0.5 s): sent
            # 0.5 s behind, a quick restart let the read answer within its own 2 s (flaky)
            await anyio.sleep(0.1)
            with pytest.raises(MCPError) as refused:
                await session.read_resource("memsite://session")
            answered["resource"] = (str(refused.value), time.monotonic() - sent)

        async with anyio.create_task_group() as group:
            group.start_soon(search)
            group.start_soon(read)
        said, took = answered["resource"]
        assert took < ANSWERED_WITHIN and "session: no answer within 2 s" in said, (said, took)
        assert "search: no answer within 2 s" in failed(answered["search"])

    async def then(session: ClientSession) -> None:
        for _ in range(5):  # the worker killed at the limit starts again
            with contextlib.suppress(MCPError):
                assert await read_text(session, "memsite://session") == "No active session.\n"
                return
        raise AssertionError("the session was never read again")

    while_locked(project, scenario, then)


def test_a_killed_server_leaves_no_worker(project: Path) -> None:
    """SIGKILL to the server in the middle of a call: its worker (which was waiting on the
    locked index, and would have gone on for as long as the lock was held) is gone within
    5 s."""
    indexed(project)
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        (worker,) = workers_of(project)

        async def search() -> None:
            with contextlib.suppress(MCPError):  # its server is killed before it answers
                await session.call_tool("search", {"query": "clock"})

        async with anyio.create_task_group() as group:
            group.start_soon(search)
            await anyio.sleep(0.5)  # the worker is now waiting for the index
            stat = (Path("/proc") / str(worker) / "stat").read_text()
            os.kill(int(stat.rsplit(")", 1)[1].split()[1]), signal.SIGKILL)  # its parent
            killed = time.monotonic()
            while workers_of(project) and time.monotonic() - killed < 5:
                await anyio.sleep(0.1)
            seen["left"] = workers_of(project)
            group.cancel_scope.cancel()  # the call will never be answered: its server is gone

    async def then(session: ClientSession) -> None:
        pass

    while_locked(project, scenario, then, timeout="600")
    assert seen["left"] == [], "the worker outlived its server"


def test_a_worker_started_again_by_a_call_outlives_the_calls_thread(project: Path) -> None:
    """The worker started again after a kill (by a call, on one of the SDK's threads, which end
    after 10 idle seconds) is still the one answering 15 s later: Linux sends the
    parent-death signal when the *thread* that started a process ends, so the server starts
    its worker from a thread that lives as long as the worker."""
    indexed(project)
    seen: dict[str, Any] = {}

    async def scenario(session: ClientSession) -> None:
        assert "search: no answer within 2 s" in failed(
            await session.call_tool("search", {"query": "clock"})
        )

    async def then(session: ClientSession) -> None:
        await ready(session)
        (seen["before"],) = workers_of(project)
        await anyio.sleep(15)
        await ready(session)  # a new call: the SDK ends the threads idle for over 10 s
        await anyio.sleep(1)
        await ready(session)
        seen["after"] = workers_of(project)

    while_locked(project, scenario, then)
    assert seen["after"] == [seen["before"]]
