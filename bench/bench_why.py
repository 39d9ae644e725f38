"""What recall before an edit costs (issue 14): ``memsite hook`` answering ``PreToolUse``.

    python bench/bench_why.py [--runs 20] [--entries 20000]

Builds a year-sized tree with ``bench/corpus.py`` and gives every one of its ~500 decisions
``Paths`` (a folder of one of 40 services, every fifth also a file of it), then prints a
markdown table of fresh-process timings, interleaved, median and p90 of ``--runs`` runs:

- ``python -c "import click"``, the floor of any command;
- ``memsite hook`` for an ``Edit`` of a file nothing governs (the common case);
- ``memsite hook`` for an ``Edit`` of a governed file the session was already given;
- ``memsite hook`` for an ``Edit`` of a governed file the session was not given yet (the
  context is then cleared again, so each run pays the full answer), the index kept warm;
- ``Memory.why`` in process (median of many).

Numbers depend on the machine; compare ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402

from memsite import Memory  # noqa: E402

SERVICES = 40


def with_paths(root: Path) -> int:
    """Give every decision a ``Paths`` field; returns how many."""
    path = root / "cold" / "decisions.md"
    text = path.read_text("utf-8")
    count = 0

    def add(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        service = f"services/svc{count % SERVICES:02d}"
        paths = f"{service}/" + (f", {service}/handlers.py" if count % 5 == 0 else "")
        return f"{match.group(0)}- **Paths:** {paths}\n"

    text = re.sub(r"(?m)^- \*\*Why:\*\*.*\n", add, text)
    path.write_text(text, "utf-8")
    return count


def event(repo: Path, rel: str) -> bytes:
    payload = {
        "session_id": "bench",
        "transcript_path": "/nonexistent",
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": str(repo / rel), "old_string": "a", "new_string": "b"},
    }
    return json.dumps(payload).encode()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--entries", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memsite-why-") as folder:
        repo = Path(folder)
        (repo / ".git").mkdir()  # the repository root, for paths; no git runs
        root = repo / "memory"
        corpus.build(root, args.entries, 365, seed=1)
        named = with_paths(root)
        memory = Memory(root, author="bench")
        memory.index()
        memory.start_session("bench")
        memory.close()
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
        env["MEMSITE_ROOT"] = str(root)
        memsite = str(Path(sys.executable).with_name("memsite"))
        context = root / "hot" / "context.json"
        fresh = context.read_text("utf-8")
        governed = "services/svc05/handlers.py"
        cases = {
            'python -c "import click"': ([sys.executable, "-c", "import click"], None, False),
            "hook: Edit of a file nothing governs": (
                [memsite, "hook"], event(repo, "README.md"), False),
            "hook: Edit of a governed file, already given": (
                [memsite, "hook"], event(repo, governed), False),
            "hook: Edit of a governed file, first time (answers with why)": (
                [memsite, "hook"], event(repo, governed), True),
        }  # fmt: skip
        subprocess.run([memsite, "hook"], input=event(repo, governed), env=env, check=True,
                       capture_output=True)  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (command, stdin, reset) in cases.items():
                if reset:
                    context.write_text(fresh, "utf-8")
                start = time.perf_counter()
                done = subprocess.run(command, input=stdin, env=env, capture_output=True)
                times[name].append(time.perf_counter() - start)
                assert done.returncode == 0, done.stderr
                if reset and b"additionalContext" not in done.stdout:
                    print(f"no answer after {times[name][-1]:.2f} s: {done.stderr.decode()}")
        memory = Memory(root, author="bench")
        memory.why(governed)
        inner = []
        for _ in range(args.runs):
            start = time.perf_counter()
            memory.why(governed)
            inner.append(time.perf_counter() - start)
        memory.close()
    floor = statistics.median(times['python -c "import click"'])
    print(f"{named} decisions with paths, {args.entries} entries, {args.runs} runs\n")
    print("| what | median | p90 | vs `import click` |\n|---|---:|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1]
        print(f"| {name} | {median * 1000:.1f} ms | {p90 * 1000:.1f} ms | {median / floor:.2f}x |")
    median = statistics.median(inner)
    print(f"| `Memory.why` in process | {median * 1000:.1f} ms | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
