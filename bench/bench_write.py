"""What a write costs: ``memsite log`` end to end, the API in-process, concurrent appends.

    python bench/bench_write.py [--runs 30] [--entries 20000] [--workers 8] [--per-worker 200]

Builds a year-sized tree with ``bench/corpus.py`` (so appends land in realistic files: a
~50-entry day log, a 500-entry decisions file), then prints a markdown table:

- ``python -c pass``, ``python -c "import click"`` and ``memsite log`` (console script and
  ``python -m memsite``) as fresh processes, median and p90 of ``--runs`` runs, interleaved;
- one ``Memory.log`` / ``Memory.decide`` call in-process (median of many);
- appends per second with ``--workers`` processes appending to the same day log at once;
- which heavy modules a ``memsite log`` process had loaded when it exited (must be none).

Numbers depend on the machine; compare ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402

from memsite import Memory  # noqa: E402

HEAVY = ("whoosh", "mkdocs", "jinja2", "nh3", "markdown", "filelock")
DAY = corpus.END  # the corpus's last day: its day log already holds ~50 entries


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def processes(root: Path, runs: int, pycache: Path) -> dict[str, list[float]]:
    """Fresh-process timings. Bytecode is cached (in ``pycache``) as on an installed package;
    one extra row shows memsite compiled from source on every run, which is what a shell
    with PYTHONDONTWRITEBYTECODE=1 and an editable install pays."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSITE_", "PYTHON"))}
    base["MEMSITE_ROOT"] = str(root)
    cached = {**base, "PYTHONPYCACHEPREFIX": str(pycache)}
    uncached = {**base, "PYTHONDONTWRITEBYTECODE": "1"}
    script = Path(sys.executable).with_name("memsite")
    at = f"{DAY.isoformat()}T18:30:00"
    log = ["log", "ran tests", "--detail", "suite=unit", "--result", "ok", "--at", at]
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], cached),
        'python -c "import click"': ([sys.executable, "-c", "import click"], cached),
        "memsite log": ([str(script), *log], cached),
        "python -m memsite log": ([sys.executable, "-m", "memsite", *log], cached),
        "memsite log, no bytecode cache": ([str(script), *log], uncached),
    }
    if not script.exists():
        for name in ("memsite log", "memsite log, no bytecode cache"):
            commands[name] = ([sys.executable, "-m", "memsite", *log], commands[name][1])
    times: dict[str, list[float]] = {name: [] for name in commands}
    for command, env in commands.values():  # write the bytecode cache, warm the page cache
        timed(command, env)
    for _ in range(runs):
        for name, (command, env) in commands.items():
            times[name].append(timed(command, env))
    return times


def in_process(root: Path, calls: int) -> dict[str, list[float]]:
    memory = Memory(root, author="bench")
    times: dict[str, list[float]] = {"Memory.log": [], "Memory.decide": []}
    at = dt.datetime.combine(DAY, dt.time(19, 0))
    for n in range(calls):
        start = time.perf_counter()
        memory.log("ran tests", details={"suite": "unit"}, result="ok", at=at)
        times["Memory.log"].append(time.perf_counter() - start)
        start = time.perf_counter()
        memory.decide(f"Bench decision {n}", why="measure the write path", tags=["bench"], at=at)
        times["Memory.decide"].append(time.perf_counter() - start)
    return times


WORKER = """
import os, sys, time
from memsite import Memory
root, count, go, at = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
memory = Memory(root, author=f"worker-{os.getpid()}")
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.0005)
for i in range(count):
    memory.log("step", details={"n": str(i)}, result="ok", at=at)
"""


def concurrent(root: Path, workers: int, per_worker: int, go: Path) -> float:
    """Appends per second, all workers appending to one day log at the same time."""
    at = f"{DAY.isoformat()}T20:00:00"
    started = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root), str(per_worker), str(go), at],
            stdout=subprocess.PIPE,
        )
        for _ in range(workers)
    ]
    for worker in started:  # interpreters are up and memsite imported: time only the writes
        assert worker.stdout is not None and worker.stdout.readline() == b"ready\n"
    start = time.perf_counter()
    go.touch()
    for worker in started:
        worker.wait()
        assert worker.returncode == 0
    return workers * per_worker / (time.perf_counter() - start)


AT_EXIT = """\
import atexit, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write("\\n".join(sorted(sys.modules))))
sys.argv[0] = "memsite"
from memsite.cli import main
main()
"""


def loaded_modules(root: Path, scratch: Path) -> list[str]:
    listing = scratch / "modules.txt"
    subprocess.run(
        [sys.executable, "-c", AT_EXIT, str(listing), "--root", str(root), "log", "x"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return listing.read_text().split()


def row(name: str, values: list[float], base: float | None = None) -> str:
    median = statistics.median(values)
    p90 = statistics.quantiles(values, n=10)[-1] if len(values) >= 2 else median
    ratio = f"{median / base:.2f}x" if base else ""
    return f"| {name} | {median * 1000:.1f} ms | {p90 * 1000:.1f} ms | {ratio} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--per-worker", type=int, default=200)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="memsite-bench-"))
    try:
        root = scratch / "memory"
        corpus.build(root, args.entries, 365, seed=1)
        times = processes(root, args.runs, scratch / "pycache")
        api = in_process(root, args.calls)
        rate = concurrent(root, args.workers, args.per_worker, scratch / "go")
        heavy = [m for m in loaded_modules(root, scratch) if m.split(".")[0] in HEAVY]
        total = len(Memory(root).entries())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    click_median = statistics.median(times['python -c "import click"'])
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, tree of {args.entries:,} entries"
    )
    print()
    print("| what | median | p90 | vs `import click` |")
    print("|---|---|---|---|")
    for name, values in times.items():
        print(row(f"`{name}`", values, click_median))
    for name, values in api.items():
        print(row(f"`{name}` in-process", values))
    print()
    print(
        f"{args.workers} processes x {args.per_worker} `Memory.log` calls into one day log: "
        f"{rate:,.0f} appends/s; the tree then held {total:,} entries."
    )
    print(f"Heavy modules loaded by `memsite log`: {', '.join(heavy) or 'none'}.")
    return 1 if heavy else 0


if __name__ == "__main__":
    raise SystemExit(main())
