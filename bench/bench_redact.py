"""How well secret redaction works: detection rate on secret shapes, false positives on look-alikes.

    python bench/bench_redact.py [--seeds 200] [--tree DIR]

Uses the two lists of ``tests/test_redact.py``: ``SECRETS`` (realistic secret shapes, one per
text, with random bodies) and ``INNOCENT`` (text that only looks like a secret: the word
"secret", hashes, UUIDs, a base64 image, ...). The secret list is rebuilt with ``--seeds``
different random seeds, so each shape is tried with that many random bodies.

Prints, for write time (``redact``) and build time (``find_secrets``, what ``memsite build``
refuses to publish): how many secrets were caught under their own kind, how many were caught
at all, and how many innocent texts were touched. ``--tree DIR`` also times the build's scan
(``find_secrets`` on every markdown file of DIR: CPU time, best of 3), e.g. over the year
``python bench/corpus.py DIR --entries 20000`` writes.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memsite.store.redact import find_secrets, redact  # noqa: E402


def secret_lists(seeds: int) -> tuple[list[tuple[str, str]], list[str]]:
    """SECRETS rebuilt once per seed (the test module seeds its generator with 7)."""
    source = (REPO / "tests" / "test_redact.py").read_text("utf-8")
    assert "random.Random(7)" in source
    secrets: list[tuple[str, str]] = []
    innocent: list[str] = []
    for seed in range(7, 7 + seeds):
        namespace: dict[str, object] = {"__name__": "bench_redact_corpus"}
        exec(
            compile(source.replace("random.Random(7)", f"random.Random({seed})"), "t", "exec"),
            namespace,
        )
        secrets += namespace["SECRETS"]  # type: ignore[arg-type]
        innocent = namespace["INNOCENT"]  # type: ignore[assignment]
    return secrets, innocent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--tree", type=Path, help="also time the secret scan of this tree")
    args = parser.parse_args()
    secrets, innocent = secret_lists(args.seeds)
    kinds = len({kind for kind, _ in secrets})

    own = caught = blocked = 0
    missed: Counter[str] = Counter()
    for kind, text in secrets:
        clean, found = redact(text)
        own += [f.kind for f in found] == [kind] and f"[redacted: {kind}]" in clean
        caught += bool(found)
        blocked += bool(find_secrets(text))
        if not found:
            missed[kind] += 1
    touched = sum(redact(text) != (text, []) for text in innocent)
    flagged = sum(bool(find_secrets(text)) for text in innocent)

    n = len(secrets)
    print(
        f"secret texts: {n} ({n // args.seeds} shapes of {kinds} kinds x {args.seeds} random "
        f"bodies); innocent: {len(innocent)}"
    )
    print()
    print("| | write time (`redact`) | build time (`find_secrets`) |")
    print("|---|---|---|")
    print(
        f"| secrets caught | {caught}/{n} ({caught / n:.2%}) | {blocked}/{n} ({blocked / n:.2%}) |"
    )
    print(f"| caught under their own kind | {own}/{n} ({own / n:.2%}) | |")
    print(
        f"| innocent texts touched (false positives) | {touched}/{len(innocent)} "
        f"({touched / len(innocent):.2%}) | {flagged}/{len(innocent)} ({flagged / len(innocent):.2%}) |"
    )
    if missed:
        print()
        print("missed:", ", ".join(f"{kind} x{count}" for kind, count in missed.most_common()))
    if args.tree:
        texts = [path.read_text("utf-8") for path in sorted(args.tree.rglob("*.md"))]
        took = []
        for _ in range(3):
            start = time.process_time()
            for text in texts:
                find_secrets(text)
            took.append(time.process_time() - start)
        print()
        print(
            f"secret scan of {len(texts)} files ({sum(map(len, texts)):,} characters): "
            f"{min(took):.2f} s of CPU (best of 3)"
        )


if __name__ == "__main__":
    main()
