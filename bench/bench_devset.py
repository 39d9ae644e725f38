"""Search quality on real decision records and lessons files nobody on this project wrote.

For each corpus of ``../shared/devset`` (MADR and Nygard ADRs, coding-agent lessons; see its
README) and for all of them together, prints recall@5, MRR@10 and the characters returned in
the top 5, scored as ``memsite eval`` scores (a hit counts when its lines overlap a labelled
section), for heading chunks (lexical, and hybrid when the semantic extra is installed) and
for fixed 2,000-character windows indexed the same way, returned whole as issue 16 defines
them, and cut to the same budget (``TOP_CHARS``) as heading chunks::

    python bench/bench_devset.py [--devset ../shared/devset] [--records] [--daylogs]

The day-log corpora of ``bench/devset/`` (``karpathy__nanochat``: a repository's commits and
experiment log as memsite day logs, see its README) are run too, each on its own: their
questions carry a ``split`` (``tune`` / ``test``), so they print per split, with one more
figure, ``all@5``: the share of the questions whose answer is two or three entries of one
day that find all of them in the top 5. ``all corpora`` stays the shared devset's six (the
figure every earlier table reports); ``all corpora, with day logs`` adds the day-log
corpora's questions to them (issue 36 asks its target of all corpora, the day logs included).
``--daylogs`` runs the day-log corpora only (without ``../shared``).

``--records`` (issue 26) instead sets up each of the four ADR corpora as a scratch repository
twice: once with the records as notes of the tree (``memory/notes/<folder>/``) and once in
place (``records/``, named in ``[records]`` of ``memory/memsite.toml``), so they are read as
decisions with their status and supersession; both are searched through ``Memory.search``
(lexical, and hybrid with the semantic extra) and the two are printed side by side.

The project's tests never read ``../shared``; this script is how search is tuned on it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import top_chars, window_chunks  # noqa: E402

from memsite import Memory  # noqa: E402
from memsite.search import meaning as semantic  # noqa: E402
from memsite.search.chunks import Chunk, chunk_file  # noqa: E402
from memsite.search.evaluation.metrics import evaluate, read_queries, resolve  # noqa: E402
from memsite.search.index.cache import SearchIndex  # noqa: E402
from memsite.search.payloads.hits import build_hits  # noqa: E402
from memsite.search.query import parse_query  # noqa: E402
from memsite.search.ranking import TOP_CHARS  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DAYLOGS = REPO / "bench" / "devset"  # day-log corpora kept in this repository
SPLITS = ("tune", "test")
# the record folder of each ADR corpus, under its memory/notes/ (see the devset's README)
ADR_FOLDERS = {
    "elastisys__compliantkubernetes": "docs/adr",
    "ministryofjustice__modernisation-platform": "architecture-decision-record",
    "ministryofjustice__cloud-platform": "architecture-decision-record",
    "zooniverse__front-end-monorepo": "docs/arch",
}


def run(corpus: Path, cache_dir: Path) -> dict[str, list]:
    """Per setting, one ``(found, chars, reciprocal rank)`` triple per query."""
    root = corpus / "memory"
    queries = read_queries(corpus / "queries.jsonl")

    @cache
    def chunks_of(rel: str) -> list[Chunk]:
        path = root / rel
        return chunk_file(rel, path.read_text("utf-8")) if path.is_file() else []

    # a label naming no section or entry counts as an answer never found (as every figure
    # before this check counted it): said, never silent, and the corpus still measured
    unresolved = [a for q in queries for a in q.relevant if not resolve(a, chunks_of)]
    if unresolved:
        print(
            f"note: {corpus / 'queries.jsonl'}: {len(unresolved)} label(s) name nothing "
            f"(counted as never found): {unresolved}",
            file=sys.stderr,
        )
    settings = [("heading chunks, lexical", chunk_file, True, True)]
    if semantic.available():
        settings.append(("heading chunks, hybrid", chunk_file, False, True))
    settings.append(("2,000-char windows", window_chunks, True, False))
    settings.append((f"windows, top 5 in {TOP_CHARS:,}", window_chunks, True, True))
    out: dict[str, list] = {}
    for name, chunker, lexical, budget in settings:
        with (
            SearchIndex(root, cache_dir, chunker=chunker, name=name.split(",")[0][:7]) as index,
            top_chars(TOP_CHARS if budget else None),
        ):
            index.refresh(rebuild=True)
            found = {
                q.query: build_hits(index.search(parse_query(q.query), 10, lexical=lexical), root)
                for q in queries
            }
        report = evaluate(queries, found.__getitem__, chunks_of, k=5)
        out[name] = rows_of(report.outcomes)
    return out


def rows_of(outcomes) -> list[tuple[float, int, float, bool]]:
    """Per query: share of its answers found, characters, reciprocal rank, all found."""
    return [
        (
            o.found / max(o.relevant, 1),
            o.chars,
            1 / o.rank if o.rank else 0.0,
            o.found == o.relevant,
        )
        for o in outcomes
    ]


def labels(corpus: Path) -> list[dict]:
    """Each question's JSON line as written (its ``split`` and labels), in file order."""
    lines = (corpus / "queries.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def one_day(question: dict) -> bool:
    """Whether the answer is two or more entries of one day log."""
    files = {label.partition("#")[0] for label in question["relevant"]}
    return len(question["relevant"]) > 1 and len(files) == 1 and files.pop().startswith("warm/")


def records_run(corpus: Path, scratch: Path) -> dict[str, list]:
    """The ADR corpus as notes and as records read in place, each a scratch repository."""
    from memsite.store.tree import init_tree

    folder = ADR_FOLDERS[corpus.name]
    records = sorted((corpus / "memory" / "notes" / folder).glob("*.md"))
    queries = read_queries(corpus / "queries.jsonl")
    out: dict[str, list] = {}
    for how in ("notes", "records"):
        repo = scratch / how
        root = repo / "memory"
        init_tree(root)
        (repo / ".git").mkdir()  # the top of the scratch repository
        target = root / "notes" / folder if how == "notes" else repo / "records"
        target.mkdir(parents=True)
        for path in records:
            shutil.copyfile(path, target / path.name)
        asked = queries
        if how == "records":
            (root / "memsite.toml").write_text('[records]\npaths = ["../records"]\n', "utf-8")
            prefix = f"notes/{folder}/"
            asked = [
                dataclasses.replace(
                    q, relevant=tuple(r.replace(prefix, "../records/", 1) for r in q.relevant)
                )
                for q in queries
            ]

        @cache
        def chunks_of(rel: str, root: Path = root) -> list[Chunk]:
            path = root / rel
            return chunk_file(rel, path.read_text("utf-8")) if path.is_file() else []

        lexicals = [True, False] if semantic.available() else [True]
        with Memory(root, cache_dir=scratch / f"{how}-cache") as memory:
            memory.index(rebuild=True)
            for lexical in lexicals:
                name = f"{how}, {'lexical' if lexical else 'hybrid'}"
                report = evaluate(
                    asked,
                    lambda q, m=memory, lex=lexical: m.search(q, limit=10, lexical=lex),
                    chunks_of,
                    k=5,
                )
                out[name] = rows_of(report.outcomes)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devset", type=Path, default=REPO.parent / "shared" / "devset")
    parser.add_argument("--json", action="store_true", help="Print the table as JSON.")
    parser.add_argument(
        "--records",
        action="store_true",
        help="The four ADR corpora as notes and as [records] read in place as decisions.",
    )
    parser.add_argument(
        "--daylogs", action="store_true", help="Only the day-log corpora of bench/devset/."
    )
    args = parser.parse_args()
    shared = [] if args.daylogs else _corpora(args.devset)
    daylogs = [] if args.records else _corpora(DAYLOGS)
    if args.records:
        shared = [p for p in shared if p.name in ADR_FOLDERS]
    table: dict[str, dict[str, dict[str, float]]] = {}
    every: dict[str, list] = {}
    logged: dict[str, list] = {}  # the day-log corpora's questions, each once
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in shared + daylogs:
            scratch = Path(tmp) / corpus.name
            results = records_run(corpus, scratch) if args.records else run(corpus, scratch)
            if corpus in daylogs:
                table.update(_by_split(corpus, results))
                for name, rows in results.items():
                    logged.setdefault(name, []).extend(rows)
                continue
            table[corpus.name] = {name: _figures(rows) for name, rows in results.items()}
            for name, rows in results.items():
                every.setdefault(name, []).extend(rows)
    if every:
        table["all corpora"] = {name: _figures(rows) for name, rows in every.items()}
    if every and logged:
        table["all corpora, with day logs"] = {
            name: _figures(rows + logged.get(name, [])) for name, rows in every.items()
        }
    if args.json:
        print(json.dumps(table, indent=2))
        return
    for corpus, results in table.items():
        print(f"\n{corpus}")
        print(f"  {'':28} {'recall@5':>9} {'MRR@10':>8} {'chars@5':>8} {'all@5':>7}")
        for name, f in results.items():
            whole = f"{f['all@5']:>7.3f}" if "all@5" in f else f"{'':>7}"
            line = f"  {name:28} {f['recall@5']:>9.3f} {f['mrr@10']:>8.3f} {f['chars@5']:>8.0f}"
            print(f"{line} {whole}".rstrip())


def _corpora(folder: Path) -> list[Path]:
    if not folder.is_dir():
        print(f"({folder} not found: its corpora are left out)", file=sys.stderr)
        return []
    return sorted(p for p in folder.iterdir() if (p / "queries.jsonl").is_file())


def _by_split(corpus: Path, results: dict[str, list]) -> dict[str, dict[str, dict[str, float]]]:
    """A day-log corpus's figures per split and over all its questions, each with ``all@5``
    over the questions answered by several entries of one day (and their count)."""
    asked = labels(corpus)
    out = {}
    for split in (*SPLITS, None):
        keep = [i for i, q in enumerate(asked) if split is None or q.get("split") == split]
        several = [i for i in keep if one_day(asked[i])]
        name = f"{corpus.name}, {split or 'all'} ({len(keep)} q, {len(several)} of one day)"
        out[name] = {
            setting: {
                **_figures([rows[i] for i in keep]),
                "all@5": sum(rows[i][3] for i in several) / max(len(several), 1),
            }
            for setting, rows in results.items()
        }
    return out


def _figures(rows: list) -> dict[str, float]:
    count = max(len(rows), 1)
    return {
        "recall@5": sum(row[0] for row in rows) / count,
        "mrr@10": sum(row[2] for row in rows) / count,
        "chars@5": sum(row[1] for row in rows) / count,
    }


if __name__ == "__main__":
    main()
