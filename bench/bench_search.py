"""Search and recall benchmark: quality (heading chunks vs fixed windows) and speed at a year.

    python bench/bench_search.py [--entries 20000] [--days 365] [--queries 300] [--work DIR]
        [--common-words] [--runs 5] [--no-quality]

Quality: recall@5, MRR@10 and the characters returned in the top 5, for memsite's heading
chunks and for fixed 2,000-character windows indexed the same way (same schema, analyzer and
ranking; a window is its own record, returned whole: the top hits' 5,000-character cut
applies to heading chunks only), over the bundled sample memory with
``bench/queries-sample.jsonl`` and over a generated corpus with the questions
``bench/corpus.py`` writes for it. A hit finds an answer when its lines overlap the answer's.

Everything here is the lexical (Whoosh) ranking: ``lexical=True`` / ``--lexical``, so the
figures hold with or without the semantic extra. Speed, on the generated corpus (``--entries``, default a year of one busy agent): full index
build, incremental update after one new entry, in-process ``search`` and ``recall`` median,
and end-to-end command latency (a fresh ``memsite`` process per query); beside them the whole
process of a write, ``memsite log`` and ``memsite decide``, against ``python -c "import
click"`` (issue 35).

``--common-words`` generates the corpus with everyday words in most activities
(``bench/common_words.py``: "connection", "timeout", "cache", ... each in thousands of
chunks) and times ``search`` over questions made of them, lexical and (with the semantic
extra) hybrid, median and p95 over ``--runs`` passes (issue 16, point 4). ``--days 1095
--entries 55000`` is three years.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import common_words
import corpus as generated

from memsite import Memory
from memsite.search.chunks import Chunk, chunk_file
from memsite.search.evaluation.metrics import Labelled, evaluate, read_queries
from memsite.search.index.cache import SearchIndex
from memsite.search.meaning import available as semantic_available
from memsite.search.payloads import hits as handed
from memsite.search.payloads.hits import build_hits
from memsite.search.query import parse_query
from memsite.store.format import classify

REPO = Path(__file__).resolve().parent.parent
WINDOW = 2_000


def window_chunks(path: str, text: str, *, fallback_date: dt.date | None = None) -> list[Chunk]:
    """Fixed windows of about 2,000 characters, cut at line ends; each is its own record."""
    kind = classify(path)
    if kind.kind == "persona":
        return []
    day = kind.day or fallback_date or dt.date(1970, 1, 1)
    lines = text.split("\n")
    chunks, start, size = [], 0, 0
    for index, line in enumerate(lines + [None]):  # type: ignore[list-item]
        if line is not None and (size + len(line) + 1 <= WINDOW or index == start):
            size += len(line) + 1
            continue
        body = "\n".join(lines[start:index])
        if body.strip():
            cid = f"{path}@{start + 1}"
            chunks.append(
                Chunk(
                    id=cid,
                    record=cid,
                    position=0,
                    path=path,
                    anchor="",
                    heading="",
                    breadcrumb=(path,),
                    kind="note" if kind.kind == "persona" else kind.kind,
                    tier=kind.tier,
                    date=day,
                    line=start + 1,
                    end_line=index,
                    text=body,
                    heading_lines=0,
                )
            )
        start, size = index, (len(line) + 1 if line is not None else 0)
    return chunks


@contextlib.contextmanager
def top_chars(budget: int | None) -> Iterator[None]:
    """Search with the top hits cut to ``budget`` characters together (None: returned whole,
    as the fixed windows issue 16 compares against are)."""
    saved = handed.TOP_CHARS
    handed.TOP_CHARS = budget if budget is not None else 10**9
    try:
        yield
    finally:
        handed.TOP_CHARS = saved


def quality(root: Path, queries: list[Labelled], cache_dir: Path) -> dict[str, dict]:
    @cache
    def chunks_of(rel: str) -> list[Chunk]:
        path = root / rel
        return chunk_file(rel, path.read_text("utf-8")) if path.is_file() else []

    out = {}
    for name, chunker in (("heading chunks", chunk_file), ("2,000-char windows", window_chunks)):
        whole = top_chars(None if chunker is window_chunks else handed.TOP_CHARS)
        with SearchIndex(root, cache_dir, chunker=chunker, name=name.split()[0]) as index, whole:
            index.refresh(rebuild=True)
            found = {
                q.query: build_hits(index.search(parse_query(q.query), 10, lexical=True))
                for q in queries
            }
        for k in (5, 2, 1) if chunker is window_chunks else (5,):
            report = evaluate(queries, found.__getitem__, chunks_of, k=k)
            data = report.to_dict()
            out[name if k == 5 else f"{name}, top {k}"] = {
                "recall": data[f"recall@{k}"],
                "mrr@10": data["mrr@10"],
                "chars": data[f"chars@{k}"],
                "k": k,
            }
    return out


def print_quality(title: str, results: dict[str, dict]) -> None:
    """recall@k and the characters returned in the top k (k = 5 unless named), MRR@10."""
    print(f"\n{title}")
    print(f"  {'':30} {'recall@k':>9} {'MRR@10':>8} {'chars@k':>9}")
    for name, data in results.items():
        print(f"  {name:30} {data['recall']:>9.3f} {data['mrr@10']:>8.3f} {data['chars']:>9.0f}")


def times_ms(func, items, cpu: bool = False) -> list[float]:  # type: ignore[no-untyped-def]
    """Wall time of each ``func(item)`` in ms (or CPU time of this process, which other
    processes on a shared machine do not inflate)."""
    clock = time.process_time if cpu else time.perf_counter
    times = []
    for item in items:
        started = clock()
        func(item)
        times.append((clock() - started) * 1000)
    return times


def median_ms(func, items, cpu: bool = False) -> float:  # type: ignore[no-untyped-def]
    return statistics.median(times_ms(func, items, cpu))


def p95(times: list[float]) -> float:
    return sorted(times)[int(0.95 * len(times))]


def search_speed(memory: Memory, questions: list[str], runs: int) -> dict[str, float]:
    """In-process ``search`` median and p95, lexical and (with the extra) hybrid, over
    ``runs`` passes of the questions (the first hybrid query loads the model and vectors,
    before the clock starts)."""
    figures: dict[str, float] = {}
    for mode, lexical in (("lexical", True), ("hybrid", False)):
        if not lexical and not semantic_available():
            continue
        memory.search("warm up the searcher", lexical=lexical)
        times = times_ms(lambda q, lex=lexical: memory.search(q, lexical=lex), questions * runs)
        figures[f"search {mode}, in process, median (ms)"] = statistics.median(times)
        figures[f"search {mode}, in process, p95 (ms)"] = p95(times)
    return figures


def speed(root: Path, cache_dir: Path, questions: list[str], runs: int = 1) -> dict[str, float]:
    figures: dict[str, float] = {}
    memory = Memory(root, cache_dir=cache_dir, author="bench")
    builds, cpu = [], []
    for _ in range(2):
        started = time.process_time()
        builds.append(memory.index(rebuild=True).seconds)
        cpu.append(time.process_time() - started)
    figures["full index build (s)"] = min(builds)
    figures["full index build, CPU time (s)"] = min(cpu)
    chunks = memory.index().chunks
    assert chunks == 0
    memory.learn(
        "Benchmarks append one learning",
        category="bench",
        why="to time the incremental update",
        at="2026-11-27T18:00:00",
    )
    figures["incremental update, one new entry (s)"] = memory.index().seconds
    figures["update / full build (%)"] = (
        100 * figures["incremental update, one new entry (s)"] / figures["full index build (s)"]
    )
    # a file written less than two seconds before the last freshness check is hashed again
    # by every query, and the searcher reopened (index_state.RACY_NS): time what follows
    time.sleep(2.5)
    memory.index()
    figures.update(search_speed(memory, questions, runs))
    figures["recall median, in process (ms)"] = median_ms(
        lambda q: memory.recall(q, lexical=True), questions
    )
    figures["search median, in process, CPU time (ms)"] = median_ms(
        lambda q: memory.search(q, lexical=True), questions, cpu=True
    )
    figures["recall median, in process, CPU time (ms)"] = median_ms(
        lambda q: memory.recall(q, lexical=True), questions, cpu=True
    )
    memory.close()
    exe = Path(sys.executable).with_name("memsite")
    command = [str(exe), "--root", str(root)]
    env = {**os.environ, "MEMSITE_CACHE": str(cache_dir)}
    for verb in ("search", "recall"):
        figures[f"`memsite {verb}` end to end, median (ms)"] = median_ms(
            lambda q, v=verb: subprocess.run(
                [*command, v, q, "--lexical"], env=env, capture_output=True, check=True
            ),
            questions[:15],
        )
    return figures


def write_speed(runs: int) -> dict[str, float]:
    """Whole-process ``memsite log`` and ``memsite decide`` (into a fresh tree) against a bare
    ``python -c "import click"``, taken in turn so that the machine's drift moves them alike,
    median of ``runs`` after one warm-up round (issue 35: at most 2.5x and 3x)."""
    exe = Path(sys.executable).with_name("memsite")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    with tempfile.TemporaryDirectory(prefix="memsite-writes-") as scratch:
        command = [str(exe), "--root", str(Path(scratch) / "memory")]
        subprocess.run([*command, "init"], env=env, capture_output=True, check=True)
        commands = {
            'python -c "import click"': [sys.executable, "-c", "import click"],
            "memsite log": [*command, "log", "ran the tests"],
            "memsite decide": [*command, "decide", "Pin the clock", "--why", "tests"],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(runs + 1):
            for name, argv in commands.items():
                started = time.perf_counter()
                subprocess.run(argv, env=env, capture_output=True, check=True)
                if round_:
                    times[name].append((time.perf_counter() - started) * 1000)
    click = statistics.median(times['python -c "import click"'])
    figures = {
        f"`{name}` whole process, median (ms)": statistics.median(t) for name, t in times.items()
    }
    for name in ("memsite log", "memsite decide"):
        figures[f"`{name}` / `import click` (x)"] = statistics.median(times[name]) / click
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--days", type=int, default=365, help="days of history")
    parser.add_argument(
        "--common-words",
        action="store_true",
        help="everyday words in most activities; time search over questions made of them",
    )
    parser.add_argument("--runs", type=int, default=5, help="passes over the timed questions")
    parser.add_argument("--no-quality", action="store_true", help="speed only")
    parser.add_argument("--queries", type=int, default=300, help="generated questions used")
    parser.add_argument("--work", type=Path, help="work folder (default: a temporary one)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="memsite-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"work folder: {work}")

    if not args.no_quality:
        sample = work / "sample" / "memory"
        shutil.rmtree(sample.parent, ignore_errors=True)
        shutil.copytree(REPO / "memory", sample)
        sample_queries = read_queries(REPO / "bench" / "queries-sample.jsonl")
        print_quality(
            f"Sample memory, {len(sample_queries)} queries (bench/queries-sample.jsonl)",
            quality(sample, sample_queries, work / "cache-sample"),
        )

    shape = f"{args.entries}-{args.days}" + ("-common" if args.common_words else "")
    corpus = work / f"corpus-{shape}"
    questions_file = work / f"corpus-{shape}-queries.jsonl"
    if not (corpus / "cold" / "decisions.md").exists():
        shutil.rmtree(corpus, ignore_errors=True)
        subprocess.run(
            [
                sys.executable,
                str(REPO / "bench" / "corpus.py"),
                str(corpus),
                "--entries",
                str(args.entries),
                "--days",
                str(args.days),
                "--queries",
                str(questions_file),
                *(["--common-words"] if args.common_words else []),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    labelled = read_queries(questions_file)[: args.queries]
    if not args.no_quality:
        print_quality(
            f"Generated corpus ({args.entries:,} entries), {len(labelled)} generated questions",
            quality(corpus, labelled, work / f"cache-{shape}-quality"),
        )

    if args.common_words:
        asked = common_words.questions(generated.SERVICES)
    else:
        asked = [q.query for q in labelled[:200]]
    print(
        f"\nSpeed at {args.entries:,} entries over {args.days} days, {len(asked)} questions"
        f" (load average {os.getloadavg()[0]:.1f})"
    )
    figures = speed(corpus, work / f"cache-{shape}", asked, args.runs)
    figures.update(write_speed(max(args.runs, 12)))
    for name, value in figures.items():
        print(f"  {name:45} {value:10.2f}")
    print(f"  load average at the end: {os.getloadavg()[0]:.1f}")
    (work / f"results-{shape}.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
