"""Load: many processes write through the CLI and the API while others search and build.

Half of the writers call ``python -m memsite`` once per entry, the other half the
``Memory`` API; a searcher process and a builder process run until the writers are done.
Afterwards every entry is whole, ``memsite check`` is clean, every entry is found by
search and the site builds. ``-m slow`` runs the issue's full size (16 x 500 = 8,000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from memsite import Memory
from memsite.store.tree import init_tree

WRITER = """
import os, subprocess, sys, time
from memsite import Memory
root, worker, count, go, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
memory = Memory(root, author=f"worker-{worker}")
while not os.path.exists(go):
    time.sleep(0.001)

def cli(*args, stdin=None):
    done = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", root, *args, "--author", f"worker-{worker}"],
        input=stdin, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()

for i in range(count):
    marker = f"w{worker:02d}n{i:04d}"
    at = f"2026-06-{1 + i % 5:02d}T{10 + worker % 10:02d}:{i % 60:02d}:00"
    body = f"body of {marker}\\n\\n## not a heading\\n- **Id:** not-an-id\\n\\n---\\nend {marker}"
    kind = ("decision", "learning", "activity", "activity", "activity")[i % 5]
    if mode == "api":
        if kind == "decision":
            new = memory.decide(f"Decision {marker}", why=f"why {marker}", body=body, at=at)
        elif kind == "learning":
            new = memory.learn(f"Learning {marker}", category="load", body=body, at=at)
        else:
            new = memory.log(f"step {marker}", details={"marker": marker}, result="ok", body=body, at=at)
    elif kind == "decision":
        new = cli("decide", f"Decision {marker}", "--why", f"why {marker}", "--body", "-", "--at", at, stdin=body)
    elif kind == "learning":
        new = cli("learn", f"Learning {marker}", "--category", "load", "--body", body, "--at", at)
    else:
        new = cli("log", f"step {marker}", "--detail", f"marker={marker}", "--result", "ok", "--body", "-", "--at", at, stdin=body)
    print(marker, kind, new, flush=True)
"""

SEARCHER = """
import os, random, subprocess, sys
from memsite import Memory
root, stop = sys.argv[1], sys.argv[2]
rng = random.Random(7)
searches = 0
while not os.path.exists(stop):
    worker, n = rng.randrange(16), rng.randrange(500)
    marker = f"w{worker:02d}n{n:04d}"
    if searches % 4 == 3:
        done = subprocess.run(
            [sys.executable, "-m", "memsite", "--root", root, "search", marker, "--json", "--lexical"],
            capture_output=True, text=True,
        )
        assert done.returncode == 0, done.stderr
        hits = __import__("json").loads(done.stdout)
        assert all(marker in h["text"] for h in hits[:1]), (marker, hits[:1])
    else:
        with Memory(root) as memory:
            kind = rng.choice([None, "decision", "learning", "activity"])
            hits = memory.search(marker, kind=kind, lexical=True)
            assert all(h.kind == kind for h in hits if kind), (kind, hits)
    searches += 1
print(searches, flush=True)
"""

BUILDER = """
import os, subprocess, sys
root, stop, site = sys.argv[1], sys.argv[2], sys.argv[3]
builds = 0
while not os.path.exists(stop):
    done = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", root, "build", "--site-dir", site],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    builds += 1
print(builds, flush=True)
"""


def run_load(tmp_path: Path, writers: int, count: int) -> dict[str, float]:
    root = tmp_path / "memory"
    init_tree(root)
    go, stop = tmp_path / "go", tmp_path / "stop"
    env = {**os.environ, "PYTHONWARNINGS": "error", "MEMSITE_AUTHOR": ""}

    def start(script: str, *args: object) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", script, *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    started = time.monotonic()
    writing = [
        start(WRITER, root, n, count, go, "api" if n % 2 == 0 else "cli") for n in range(writers)
    ]
    others = [start(SEARCHER, root, stop), start(BUILDER, root, stop, tmp_path / "site")]
    go.touch()
    written: dict[str, tuple[str, str]] = {}
    for process in writing:
        out, err = process.communicate(timeout=3600)
        assert process.returncode == 0, err
        for line in out.splitlines():
            marker, kind, entry_id = line.split()
            written[entry_id] = (marker, kind)
    stop.touch()
    searches, builds = (int(p.communicate(timeout=600)[0] or 0) for p in others)
    for process in others:
        assert process.returncode == 0, process.stderr.read() if process.stderr else ""
    elapsed = time.monotonic() - started
    total = writers * count
    assert len(written) == total  # every call returned its own id

    with Memory(root) as memory:
        entries = memory.entries()
        counts = Counter(e.id for e in entries)
        assert [i for i, n in counts.items() if n > 1] == []
        own = [e for e in entries if e.id in written]
        assert len(own) == total
        for entry in own:
            marker, kind = written[entry.id]
            assert entry.kind == kind
            assert entry.body == (
                f"body of {marker}\n\n## not a heading\n- **Id:** not-an-id\n\n---\nend {marker}"
            )
            assert entry.author == f"worker-{marker[1:3].lstrip('0') or '0'}"
        pointers = [e for e in entries if e.id not in written]
        assert len(pointers) == sum(1 for _, k in written.values() if k != "activity")
        assert all(e.kind == "activity" and e.title in ("decision", "learning") for e in pointers)

        check = subprocess.run(
            [sys.executable, "-m", "memsite", "--root", str(root), "check"],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0 and check.stdout.strip() == "", check.stdout + check.stderr

        for entry_id, (marker, kind) in written.items():
            hits = memory.search(marker, kind=kind, lexical=True)
            assert [h.id for h in hits[:1]] == [entry_id], (marker, [h.id for h in hits])

    checked = time.monotonic()
    built = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(root), "build", "--site-dir"]
        + [str(tmp_path / "final-site")],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "final-site" / "index.html").exists()
    return {
        "entries": total,
        "searches": searches,
        "builds": builds,
        "seconds": round(elapsed, 1),
        "check_and_search_seconds": round(checked - started - elapsed, 1),
        "final_build_seconds": round(time.monotonic() - checked, 1),
        "total_seconds": round(time.monotonic() - started, 1),
    }


def test_four_writers_of_40_entries_while_searching_and_building(tmp_path: Path) -> None:
    figures = run_load(tmp_path, writers=4, count=40)
    assert figures["searches"] >= 1 and figures["builds"] >= 1


@pytest.mark.slow
def test_sixteen_writers_of_500_entries_while_searching_and_building(tmp_path: Path) -> None:
    figures = run_load(tmp_path, writers=16, count=500)
    print("\nload:", json.dumps(figures))
    assert figures["builds"] >= 1
