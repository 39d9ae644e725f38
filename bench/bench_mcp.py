"""``recall`` over MCP at a year of memory (issue 10): what an agent waits for on each turn.

    python bench/bench_mcp.py [--entries 20000] [--queries 200] [--work DIR]

Generates the year with ``bench/corpus.py`` (the same tree as ``bench_search.py``), indexes
it once, then starts ``memsite mcp`` as a real subprocess and talks to it with the MCP SDK's
stdio client, as Claude Code or Cursor do. The first call loads the index (and the semantic
model, when the extra is installed) and is timed on its own; then each generated question is
one ``recall`` tool call, timed at the client from request to result (JSON-RPC over pipes,
argument validation, the call into ``Memory``, the output schema check on both sides). Right
after each, the same question goes through ``Memory.recall`` in this process, so that both
figures see the same load; the difference, and a ping's round trip, are the protocol's share.
Both rank as installed: with the semantic extra, by words and meaning.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memsite import Memory

REPO = Path(__file__).resolve().parent.parent


def generate(work: Path, entries: int) -> tuple[Path, list[str]]:
    corpus = work / "corpus"
    questions = work / "corpus-queries.jsonl"
    if not (corpus / "cold" / "decisions.md").exists():
        subprocess.run(
            [sys.executable, str(REPO / "bench" / "corpus.py"), str(corpus)]
            + ["--entries", str(entries), "--queries", str(questions)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    lines = questions.read_text("utf-8").splitlines()
    return corpus, [json.loads(line)["q"] for line in lines if line.strip()]


async def over_mcp(root: Path, cache: Path, questions: list[str]) -> dict[str, float]:
    """Each question through the server and through a ``Memory`` in this process, one after
    the other, so that both see the same load on the machine."""
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memsite", "--root", str(root), "mcp"],
        # the server runs the code this benchmark imports (a checkout on PYTHONPATH too)
        env={"MEMSITE_CACHE": str(cache)}
        | ({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    )
    local = Memory(root, cache_dir=cache)
    local.recall(questions[0])
    figures: dict[str, float] = {}
    started = time.perf_counter()
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            figures["server start and handshake (ms)"] = ms(started)
            started = time.perf_counter()
            await session.call_tool("recall", {"prompt": questions[0]})
            figures["first recall: index and model load (ms)"] = ms(started)
            pings = []
            for _ in range(100):
                started = time.perf_counter()
                await session.send_ping()
                pings.append(ms(started))
            remote, here = [], []
            for question in questions:
                started = time.perf_counter()
                result = await session.call_tool("recall", {"prompt": question})
                remote.append(ms(started))
                assert not result.is_error, result
                started = time.perf_counter()
                local.recall(question)
                here.append(ms(started))
    local.close()
    figures["ping round trip, median (ms)"] = statistics.median(pings)
    figures["recall over MCP, median per call (ms)"] = statistics.median(remote)
    figures["recall over MCP, 90th percentile (ms)"] = percentile(remote, 0.9)
    figures["recall in process, median (ms)"] = statistics.median(here)
    figures["recall in process, 90th percentile (ms)"] = percentile(here, 0.9)
    return figures


def ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200, help="generated questions used")
    parser.add_argument("--work", type=Path, help="work folder (default: a temporary one)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="memsite-bench-mcp-"))
    work.mkdir(parents=True, exist_ok=True)
    root, questions = generate(work, args.entries)
    questions = questions[: args.queries]
    cache = work / "cache"
    built = Memory(root, cache_dir=cache).index(rebuild=True)
    print(f"work folder: {work}; {built.chunks:,} chunks indexed in {built.seconds:.1f} s")
    print(f"load average {os.getloadavg()[0]:.1f}; {len(questions)} questions")
    figures = anyio.run(over_mcp, root, cache, questions)
    for name, value in figures.items():
        print(f"  {name:45} {value:10.1f}")
    (work / "results-mcp.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
