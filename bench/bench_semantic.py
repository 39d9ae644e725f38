"""Semantic ranking benchmark (issue 6): hybrid vs lexical quality, and what the model costs.

    python bench/bench_semantic.py [--entries 20000] [--queries 300] [--runs 7] [--work DIR]

Quality, over the bundled sample memory with ``bench/semantic_queries.jsonl`` (paraphrased
questions that share no content word with the heading that answers them, tagged by type):
recall@5, MRR@10 and the characters returned in the top 5, lexical (``lexical=True``) and
hybrid side by side, overall and per question type; then the same with every hybrid result
list cut to the characters lexical returned for that question (hits that do not fit are
left out whole, as ``recall`` does). Also over ``bench/queries-sample.jsonl`` (issue 3's set)
and the questions ``bench/corpus.py`` writes for a generated year, as a check that hybrid
does not lose where words do match.

Cost: the extra's footprint on disk, model import + load in a fresh process, embedding
throughput and the vector store at a year of memory (``--entries``), incremental embedding
after one new entry, per-query latency in process and end to end as a command, with and
without the model. Needs ``pip install "memsite[semantic]"``.
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from memsite import Memory
from memsite.search import meaning as semantic
from memsite.search.chunks import Chunk, chunk_file
from memsite.search.evaluation.metrics import Outcome, Report, judge, read_queries

REPO = Path(__file__).resolve().parent.parent
MODES = (("lexical", True), ("hybrid", False))


def types_of(path: Path) -> list[str]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [str(row.get("type") or row.get("kind") or "") for row in rows]


def chunker(root: Path) -> Callable[[str], list[Chunk]]:
    @cache
    def chunks_of(rel: str) -> list[Chunk]:
        path = root / rel
        return chunk_file(rel, path.read_text("utf-8")) if path.is_file() else []

    return chunks_of


def fit(hits: Sequence, budget: int) -> list:  # type: ignore[type-arg]
    """The hits, in order, that fit ``budget`` characters; one that doesn't is left out whole."""
    kept, used = [], 0
    for hit in hits[:5]:
        if used + len(hit.text) <= budget:
            kept.append(hit)
            used += len(hit.text)
    return kept


def quality(root: Path, queries_file: Path, cache_dir: Path) -> dict[str, object]:
    """Lexical and hybrid outcomes per query, plus hybrid cut to lexical's characters."""
    queries = read_queries(queries_file)
    chunks_of = chunker(root)
    memory = Memory(root, cache_dir=cache_dir)
    memory.index()
    found: dict[str, list[Outcome]] = {"lexical": [], "hybrid": [], "hybrid, same chars": []}
    for labelled in queries:
        lexical = memory.search(labelled.query, limit=10, lexical=True)
        hybrid = memory.search(labelled.query, limit=10)
        budget = sum(len(hit.text) for hit in lexical[:5])
        found["lexical"].append(judge(labelled, lexical, 5, chunks_of))
        found["hybrid"].append(judge(labelled, hybrid, 5, chunks_of))
        cut = fit(hybrid, budget)
        # MRR counts the cut list first, then the rest of the hybrid ranking
        rest = [hit for hit in hybrid if hit not in cut]
        outcome = judge(labelled, cut + rest, 5, chunks_of)
        top = judge(labelled, cut, 5, chunks_of)
        found["hybrid, same chars"].append(
            Outcome(labelled.query, top.found, top.relevant, outcome.rank, top.chars)
        )
    memory.close()
    return {"queries": queries, "outcomes": found}


def summary(outcomes: Sequence[Outcome]) -> str:
    report = Report(5, tuple(outcomes))
    return f"{report.recall:9.3f} {report.mrr:7.3f} {report.chars:8.0f}"


def print_quality(title: str, result: dict[str, object], types: list[str] | None) -> None:
    outcomes: dict[str, list[Outcome]] = result["outcomes"]  # type: ignore[assignment]
    n = len(result["queries"])  # type: ignore[arg-type]
    print(f"\n{title} ({n} questions)")
    print(f"  {'ranking':<20} {'recall@5':>9} {'MRR@10':>7} {'chars@5':>8}")
    for name, items in outcomes.items():
        print(f"  {name:<20} {summary(items)}")
    if not types or len(set(types)) < 2:
        return
    print(f"  per type {'':<11} {'lexical R@5 / MRR':>19}   {'hybrid R@5 / MRR':>18}   n")
    for kind in sorted(set(types)):
        rows = {
            name: [o for o, t in zip(items, types, strict=True) if t == kind]
            for name, items in outcomes.items()
        }
        lex = Report(5, tuple(rows["lexical"]))
        hyb = Report(5, tuple(rows["hybrid"]))
        print(
            f"  {kind:<19} {lex.recall:9.3f} / {lex.mrr:5.3f}   "
            f"{hyb.recall:9.3f} / {hyb.mrr:5.3f}   {len(rows['lexical'])}"
        )


def footprint() -> tuple[float, list[str]]:
    """MB on disk of the distributions the extra brings that memsite's core does not need."""

    def requires(name: str) -> set[str]:
        try:
            reqs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            return set()
        return {
            re.split(r"[ ;<>=!~\[(]", r, maxsplit=1)[0].lower().replace("_", "-")
            for r in reqs
            if "extra ==" not in r
        }

    def closure(roots: set[str]) -> set[str]:
        seen: set[str] = set()
        todo = list(roots)
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += requires(name) - seen
        return seen

    core = closure(requires("memsite"))
    extra = closure({"wordllama"}) - core
    total = 0
    for name in extra:
        try:
            files = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            continue
        total += sum(f.size or 0 for f in files)
    return total / 1e6, sorted(extra)


LOAD = """
import time
start = time.perf_counter()
from memsite.search import meaning as semantic
model = semantic.load()
loaded = time.perf_counter()
model.embed_one("warm up")
print(loaded - start)
"""


def load_seconds(runs: int) -> float:
    times = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", LOAD], capture_output=True, text=True, check=True
        )
        times.append(float(done.stdout))
    return statistics.median(times)


def median_ms(func: Callable[[str], object], items: Sequence[str]) -> tuple[float, float]:
    times = []
    for item in items:
        start = time.perf_counter()
        func(item)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def command_ms(root: Path, cache_dir: Path, args: list[str], questions: Sequence[str]) -> float:
    env = {**os.environ, "MEMSITE_CACHE": str(cache_dir)}
    times = []
    for question in questions:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "memsite", "--root", str(root), args[0], question, *args[1:]],
            check=True,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def cost(work: Path, entries: int, queries: int, runs: int) -> None:
    corpus, questions_file = work / "corpus", work / "corpus-questions.jsonl"
    if not corpus.is_dir():
        subprocess.run(
            [
                sys.executable,
                str(REPO / "bench" / "corpus.py"),
                str(corpus),
                "--entries",
                str(entries),
                "--queries",
                str(questions_file),
            ],
            check=True,
            stderr=subprocess.DEVNULL,
        )
    labelled = read_queries(questions_file)[:queries]
    short = work / "corpus-questions-short.jsonl"
    short.write_text(
        "".join(json.dumps({"q": q.query, "relevant": list(q.relevant)}) + "\n" for q in labelled)
    )
    cache_dir = work / "cache-corpus"
    shutil.rmtree(cache_dir, ignore_errors=True)

    size, extra = footprint()
    print(f"\nCost (a generated year: {entries} entries)")
    print(f"  extra on disk: {size:.0f} MB in {len(extra)} distributions ({', '.join(extra)})")
    print(f"  import + load the model in a fresh process: {load_seconds(runs):.2f} s (median)")

    memory = Memory(corpus, cache_dir=cache_dir)
    started = time.perf_counter()
    memory.index()
    print(f"  lexical index build: {time.perf_counter() - started:.1f} s")
    files = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.md"))
    chunks = [c for rel in files for c in chunk_file(rel, (corpus / rel).read_text("utf-8"))]
    documents = [semantic.document(c) for c in chunks]
    model = semantic.load()
    started = time.perf_counter()
    model.embed(documents)
    took = time.perf_counter() - started
    words = statistics.mean(len(d.split()) for d in documents)
    print(
        f"  embedding: {len(documents)} chunks (mean {words:.0f} words) in {took:.1f} s, "
        f"{len(documents) / took:,.0f} chunks/s"
    )
    pool = " ".join(documents).split()
    eighty = [" ".join(pool[i : i + 80]) for i in range(0, min(len(pool), 400_000) - 80, 80)]
    started = time.perf_counter()
    model.embed(eighty)
    took = time.perf_counter() - started
    print(f"  embedding 80-word texts: {len(eighty)} in {took:.1f} s, {len(eighty) / took:,.0f}/s")
    started = time.perf_counter()
    memory.search("warm up")
    print(
        f"  first hybrid query (embeds every chunk, writes the store): "
        f"{time.perf_counter() - started:.1f} s"
    )
    (store,) = (cache_dir / "index").glob("*.vectors.npz")
    semantic._READ.clear()
    started = time.perf_counter()
    semantic.read_store(store)
    print(
        f"  vector store: {store.stat().st_size / 1e6:.1f} MB, read in "
        f"{(time.perf_counter() - started) * 1000:.0f} ms (once per process)"
    )
    # a title no earlier run wrote, so its text is new to the vector cache
    memory.learn(
        f"Pin the embedding model version (bench run {time.time_ns()})",
        category="ops",
        why="Vectors must agree.",
    )
    before = model.embedded
    started = time.perf_counter()
    memory.search("embedding model version")
    seconds = time.perf_counter() - started
    print(
        f"  after one new entry: the next hybrid query took {seconds * 1000:.0f} ms "
        f"and embedded {model.embedded - before} chunk(s): the learning and its day-log "
        "pointer (index update included)"
    )

    asked = [q.query for q in labelled]
    print(f"  in process, {len(asked)} questions: median / p95 ms")
    for name, lexical in MODES:
        search = median_ms(lambda q, lx=lexical: memory.search(q, lexical=lx), asked)
        recall = median_ms(lambda q, lx=lexical: memory.recall(q, lexical=lx), asked)
        print(
            f"    {name:<8} search {search[0]:6.1f} / {search[1]:6.1f}   "
            f"recall {recall[0]:6.1f} / {recall[1]:6.1f}"
        )
    for name, lexical in MODES:
        report = memory.evaluate(short, 5, lexical=lexical)
        print(
            f"    {name:<8} quality on the year's questions: recall@5 {report.recall:.3f}  "
            f"MRR@10 {report.mrr:.3f}  chars@5 {report.chars:.0f}"
        )
    memory.close()
    few = asked[:runs]
    print(f"  end to end as a command (a fresh process each; median of {len(few)}):")
    for verb in ("search", "recall"):
        lex = command_ms(corpus, cache_dir, [verb, "--lexical"], few)
        hyb = command_ms(corpus, cache_dir, [verb], few)
        print(f"    memsite {verb:<6}  --lexical {lex:5.0f} ms   hybrid {hyb:5.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--work", type=Path, help="keep the corpus and caches here")
    args = parser.parse_args()
    if not semantic.available():
        sys.exit('bench_semantic needs the extra: pip install "memsite[semantic]"')
    work = args.work or Path(tempfile.mkdtemp(prefix="memsite-semantic-"))
    work.mkdir(parents=True, exist_ok=True)
    sample = work / "sample" / "memory"
    shutil.rmtree(sample.parent, ignore_errors=True)
    shutil.copytree(REPO / "memory", sample, ignore=shutil.ignore_patterns(".lock"))
    paraphrased = REPO / "bench" / "semantic_queries.jsonl"
    print_quality(
        "Sample memory, paraphrased questions (bench/semantic_queries.jsonl)",
        quality(sample, paraphrased, work / "cache-sample"),
        types_of(paraphrased),
    )
    issue3 = REPO / "bench" / "queries-sample.jsonl"
    if issue3.is_file():
        print_quality(
            "Sample memory, issue 3's questions (bench/queries-sample.jsonl)",
            quality(sample, issue3, work / "cache-sample"),
            types_of(issue3),
        )
    cost(work, args.entries, args.queries, args.runs)


if __name__ == "__main__":
    main()
