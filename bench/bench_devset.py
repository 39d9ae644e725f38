"""Search quality on real decision records and lessons files nobody on this project wrote.

For each corpus of ``../shared/devset`` (MADR and Nygard ADRs, coding-agent lessons; see its
README) and for all of them together, prints recall@5, MRR@10 and the characters returned in
the top 5, scored as ``memsite eval`` scores (a hit counts when its lines overlap a labelled
section), for heading chunks (lexical, and hybrid when the semantic extra is installed) and
for fixed 2,000-character windows indexed the same way, returned whole as issue 16 defines
them, and cut to the same budget (``TOP_CHARS``) as heading chunks::

    python bench/bench_devset.py [--devset ../shared/devset] [--records]

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
from memsite.search.evaluation.metrics import evaluate, read_queries  # noqa: E402
from memsite.search.index.cache import SearchIndex  # noqa: E402
from memsite.search.payloads.hits import build_hits  # noqa: E402
from memsite.search.query import parse_query  # noqa: E402
from memsite.search.ranking import TOP_CHARS  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
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
                q.query: build_hits(index.search(parse_query(q.query), 10, lexical=lexical))
                for q in queries
            }
        report = evaluate(queries, found.__getitem__, chunks_of, k=5)
        out[name] = [
            (o.found / max(o.relevant, 1), o.chars, 1 / o.rank if o.rank else 0.0)
            for o in report.outcomes
        ]
    return out


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
                out[name] = [
                    (o.found / max(o.relevant, 1), o.chars, 1 / o.rank if o.rank else 0.0)
                    for o in report.outcomes
                ]
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
    args = parser.parse_args()
    corpora = sorted(p for p in args.devset.iterdir() if (p / "queries.jsonl").is_file())
    if args.records:
        corpora = [p for p in corpora if p.name in ADR_FOLDERS]
    table: dict[str, dict[str, dict[str, float]]] = {}
    every: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in corpora:
            scratch = Path(tmp) / corpus.name
            results = records_run(corpus, scratch) if args.records else run(corpus, scratch)
            table[corpus.name] = {name: _figures(rows) for name, rows in results.items()}
            for name, rows in results.items():
                every.setdefault(name, []).extend(rows)
    table["all corpora"] = {name: _figures(rows) for name, rows in every.items()}
    if args.json:
        print(json.dumps(table, indent=2))
        return
    for corpus, results in table.items():
        print(f"\n{corpus}")
        print(f"  {'':28} {'recall@5':>9} {'MRR@10':>8} {'chars@5':>8}")
        for name, f in results.items():
            print(f"  {name:28} {f['recall@5']:>9.3f} {f['mrr@10']:>8.3f} {f['chars@5']:>8.0f}")


def _figures(rows: list) -> dict[str, float]:
    count = max(len(rows), 1)
    return {
        "recall@5": sum(found for found, _, _ in rows) / count,
        "mrr@10": sum(rank for _, _, rank in rows) / count,
        "chars@5": sum(chars for _, chars, _ in rows) / count,
    }


if __name__ == "__main__":
    main()
