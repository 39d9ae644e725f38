"""The Whoosh index: a rebuildable cache beside the tree, incremental, safe under concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memsite import Memory
from memsite.search.index.cache import SearchIndex


def ids(hits) -> list[str]:  # type: ignore[no-untyped-def]
    return [hit.id for hit in hits]


@pytest.fixture
def notices() -> list[str]:
    return []


@pytest.fixture
def mem(root: Path, notices: list[str]) -> Memory:
    memory = Memory(root, author="", notify=notices.append)
    memory.decide(
        "Adopt Postgres for sessions",
        why="MongoDB lost sessions in a failover.",
        tags=["database"],
        at="2026-06-01T10:00:00",
    )
    memory.learn(
        "Whoosh raises LockError without a timeout",
        category="search",
        why="A second writer fails at once.",
        at="2026-06-02T10:00:00",
    )
    yield memory
    memory.close()


def test_the_index_lives_in_a_git_ignored_cache_beside_the_tree(mem: Memory, root: Path) -> None:
    mem.index()
    cache = root.parent / ".memsite"
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert list((cache / "index").glob("memory-*/state.json"))
    assert not any(p.name.startswith(".memsite") for p in root.iterdir())


def test_cache_dir_is_configurable(root: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with Memory(root, cache_dir=tmp_path / "elsewhere") as memory:
        memory.index()
    assert (tmp_path / "elsewhere" / ".gitignore").exists()
    monkeypatch.setenv("MEMSITE_CACHE", str(tmp_path / "from-env"))
    with Memory(root) as memory:
        memory.index()
    assert (tmp_path / "from-env" / ".gitignore").exists()
    assert not (root.parent / ".memsite").exists()


def test_updates_reread_only_changed_files_and_drop_deleted_ones(mem: Memory, root: Path) -> None:
    first = mem.index()
    assert first.rebuilt and first.files == 4  # decisions, learnings, two day logs
    assert mem.index().files == 0  # nothing changed
    mem.log("ran the suite", result="all green", at="2026-06-03T09:00:00")
    update = mem.index()
    # only the new day log is read again
    assert (update.rebuilt, update.files, update.removed) == (False, 1, 0)
    assert ids(mem.search("suite green")) == ["2026-06-03-ran-the-suite"]
    (root / "warm" / "2026-06-03.md").unlink()
    assert mem.index().removed == 1
    assert mem.search("suite green") == []


def test_an_entry_written_a_moment_ago_is_found_without_reindexing(mem: Memory) -> None:
    # lexical: with the semantic extra, meaning alone links "flock" to the LockError learning
    assert mem.search("flock", lexical=True) == []
    entry_id = mem.learn(
        "fcntl.flock frees the lock when its holder dies", category="os", at="2026-06-04T10:00:00"
    )
    assert ids(mem.search("flock holder dies"))[0] == entry_id


def test_an_edit_that_keeps_the_size_is_still_seen(mem: Memory, root: Path) -> None:
    mem.index()
    path = root / "cold" / "decisions.md"
    text = path.read_text()
    path.write_text(text.replace("MongoDB lost", "CouchDB lost"))  # same size, same second
    assert ids(mem.search("couchdb")) == [mem.entries("decision")[0].id]


def _index_folder(root: Path) -> Path:
    (folder,) = [p for p in (root.parent / ".memsite" / "index").iterdir() if p.is_dir()]
    return folder


def test_a_deleted_index_is_rebuilt_with_a_notice(
    mem: Memory, root: Path, notices: list[str]
) -> None:
    mem.index()
    notices.clear()
    mem.close()
    import shutil

    shutil.rmtree(_index_folder(root))
    assert ids(mem.search("postgres sessions"))[0].endswith("adopt-postgres-for-sessions")
    assert len(notices) == 1 and "rebuilding it from the markdown" in notices[0]


def test_a_corrupt_index_is_rebuilt_with_a_notice(
    mem: Memory, root: Path, notices: list[str]
) -> None:
    mem.index()
    mem.close()
    notices.clear()
    for path in _index_folder(root).iterdir():
        if path.name != "state.json":
            path.write_bytes(b"\x00garbage" * 50)
    fresh = Memory(root, notify=notices.append)
    assert ids(fresh.search("LockError timeout"))[0].endswith("lockerror-without-a-timeout")
    assert len(notices) == 1 and "rebuilding it from the markdown" in notices[0]
    fresh.close()


def test_an_index_of_another_version_is_rebuilt_with_a_notice(
    mem: Memory, root: Path, notices: list[str]
) -> None:
    mem.index()
    state_path = _index_folder(root) / "state.json"
    state = json.loads(state_path.read_text())
    state["whoosh"] = "2.7.4"
    state_path.write_text(json.dumps(state))
    notices.clear()
    assert mem.search("postgres")
    assert len(notices) == 1 and "another version" in notices[0]
    assert json.loads(state_path.read_text())["whoosh"] != "2.7.4"


def test_the_index_is_only_a_cache(mem: Memory, root: Path) -> None:
    before = ids(mem.search("sessions failover"))
    mem.close()
    import shutil

    shutil.rmtree(root.parent / ".memsite")
    with Memory(root) as again:
        assert ids(again.search("sessions failover")) == before


WORKER = textwrap.dedent(
    """
    import sys
    from memsite import Memory
    root, name = sys.argv[1], sys.argv[2]
    memory = Memory(root, author=name)
    for i in range(12):
        entry_id = memory.learn(f"{name} finding number {i}", category="load", at=f"2026-06-{i + 1:02d}T10:00:00")
        hits = memory.search(f"{name} finding number {i}", limit=50)
        assert entry_id in [h.id for h in hits], (entry_id, [h.id for h in hits])
        if i % 4 == 0:
            memory.index(rebuild=(i == 8 and name == "alpha"))
    memory.close()
    """
)


def test_processes_indexing_and_searching_at_once_never_crash(root: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root), name],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("alpha", "beta", "gamma")
    ]
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
    with Memory(root) as memory:
        found = memory.search("finding number", limit=100)
        assert len([h for h in found if h.kind == "learning"]) == 36


def test_a_held_whoosh_writer_lock_is_waited_for(mem: Memory, root: Path) -> None:
    mem.index()
    import threading

    import whoosh.index

    ix = whoosh.index.open_dir(str(_index_folder(root)))
    writer = ix.writer()  # another writer holds Whoosh's lock for a moment
    timer = threading.Timer(0.5, writer.cancel)
    timer.start()
    mem.log("wrote while locked", at="2026-06-05T10:00:00")
    assert ids(mem.search("wrote while locked"))[0] == "2026-06-05-wrote-while-locked"
    timer.join()


def test_search_index_can_be_used_directly(root: Path, tmp_path: Path) -> None:
    (root / "notes").mkdir()
    (root / "notes" / "n.md").write_text("# Note\n\nSomething about gardening.\n")
    with SearchIndex(root, tmp_path / "cache") as index:
        refresh = index.refresh()
        assert refresh.rebuilt and refresh.chunks == 1


def test_an_index_damaged_inside_its_segments_is_rebuilt_when_read(
    mem: Memory, root: Path, notices: list[str]
) -> None:
    mem.index()
    mem.close()
    notices.clear()
    for segment in _index_folder(root).glob("*.seg"):
        data = bytearray(segment.read_bytes())
        middle = len(data) // 4
        data[middle : 3 * middle] = b"\xff" * (2 * middle)
        segment.write_bytes(bytes(data))
    with Memory(root, notify=notices.append) as fresh:
        hits = fresh.search("LockError timeout", lexical=True)
        assert hits[0].id.endswith("lockerror-without-a-timeout")
    assert len(notices) == 1 and "rebuilding it from the markdown" in notices[0]


# -- faults: damaged files, stale locks, kills during updates --------------------------


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "deleted":
        path.unlink()
    else:  # garbage from the middle on, as a crash of a disk or of a copy could leave
        middle = len(data) // 2
        path.write_bytes(data[:middle] + b"\xa5\x00garbage" * max(1, (len(data) - middle) // 9))


@pytest.mark.parametrize("how", ["truncated", "deleted", "garbage"])
@pytest.mark.parametrize("which", ["state.json", "*.toc", "*.seg"])
def test_a_damaged_index_file_is_healed_with_one_notice(
    mem: Memory, root: Path, notices: list[str], which: str, how: str
) -> None:
    mem.index()
    mem.close()
    targets = list(_index_folder(root).glob(which))
    assert targets
    for path in targets:
        _damage(path, how)
    notices.clear()
    with Memory(root, notify=notices.append) as fresh:
        assert ids(fresh.search("LockError timeout", lexical=True))[0].endswith(
            "lockerror-without-a-timeout"
        )
        assert ids(fresh.search("postgres failover", lexical=True))[0].endswith(
            "adopt-postgres-for-sessions"
        )
        assert len(fresh.search("kind:decision", lexical=True)) == 1
    assert len(notices) == 1 and "\n" not in notices[0], notices
    assert "rebuilding it from the markdown" in notices[0]


def test_an_index_of_another_schema_is_rebuilt_with_a_notice(
    mem: Memory, root: Path, notices: list[str]
) -> None:
    mem.index()
    state_path = _index_folder(root) / "state.json"
    state = json.loads(state_path.read_text())
    state["schema"] = -1
    state_path.write_text(json.dumps(state))
    notices.clear()
    assert ids(mem.search("postgres", lexical=True))[0].endswith("adopt-postgres-for-sessions")
    assert len(notices) == 1 and "another version" in notices[0]


HOLDER = textwrap.dedent(
    """
    import sys, time
    import whoosh.index
    from memsite.search.index.cache import SearchIndex
    index = SearchIndex(__import__("pathlib").Path(sys.argv[1]))
    index.refresh()
    with index._locked():  # memsite's lock and Whoosh's writer lock, held until killed
        writer = whoosh.index.open_dir(str(index.folder)).writer()
        print("holding", flush=True)
        time.sleep(600)
    """
)


def test_locks_left_by_a_killed_indexer_do_not_block_the_next_search(
    mem: Memory, root: Path
) -> None:
    mem.index()
    mem.close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    holder.kill()
    holder.communicate()
    folder = _index_folder(root)
    assert (folder / "MAIN_WRITELOCK").exists() and list(folder.parent.glob("*.lock"))
    # the lock files stay behind; the next writer and search go on (well under Whoosh's
    # 60 s lock timeout, which the subprocess timeout would turn into a failure)
    script = (
        "import sys; from memsite import Memory; m = Memory(sys.argv[1]); "
        "i = m.log('after the kill', at='2026-06-05T10:00:00'); "
        "assert [h.id for h in m.search('after the kill', lexical=True)][:1] == [i]; "
        "m.index(rebuild=True); print('ok')"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(root)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


INDEXER = textwrap.dedent(
    """
    import sys
    from memsite import Memory
    root, seed = sys.argv[1], int(sys.argv[2])
    memory = Memory(root, author="indexer")
    memory.index()
    print("ready", flush=True)
    for i in range(10**6):
        memory.learn(f"Finding k{seed}x{i} about kills", category="kill", why="index load " * 40,
                     at=f"2026-06-{1 + i % 9:02d}T10:00:{i % 60:02d}")
        if i % 3 == 0:
            memory.index(rebuild=(i % 6 == 0))
        else:
            memory.search(f"k{seed}x{i}", lexical=True)
    """
)


def kill_indexers(root: Path, kills: int, seed: int) -> dict[str, int]:
    """Start an indexing process, SIGKILL it after a random 0-250 ms, check search; repeat."""
    import random
    import signal

    rng = random.Random(seed)
    figures = {"kills": 0, "notices": 0, "entries": 0, "searches": 0}
    for n in range(kills):
        worker = subprocess.Popen(
            [sys.executable, "-c", INDEXER, str(root), str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        import time

        time.sleep(rng.uniform(0, 0.25))
        worker.send_signal(signal.SIGKILL)
        _, err = worker.communicate()
        assert worker.returncode == -signal.SIGKILL, err
        figures["kills"] += 1
        notices: list[str] = []
        with Memory(root, notify=notices.append) as memory:
            learnings = memory.entries("learning")
            found = memory.search("kind:learning kills", limit=100_000, lexical=True)
            assert sorted(ids(found)) == sorted(e.id for e in learnings), f"after kill {n + 1}"
            for entry in learnings[-3:]:
                marker = entry.title.split()[1]
                assert ids(memory.search(marker, lexical=True))[:1] == [entry.id]
            figures["searches"] += 4
            figures["entries"] = len(learnings)
        assert all("\n" not in notice for notice in notices)
        figures["notices"] += len(notices)
    # a killed rebuild leaves its half-written folder beside the index (never read); the
    # next rebuild removes it, so at most the last kill's folder is left
    left = list((root.parent / ".memsite" / "index").glob(".build-*"))
    figures["left_build_folders"] = len(left)
    assert len(left) <= 1, left
    return figures


def test_indexers_killed_at_random_moments_leave_an_index_that_heals(root: Path) -> None:
    figures = kill_indexers(root, kills=20, seed=5)
    print("\nindex kills:", json.dumps(figures))
    assert figures["kills"] == 20 and figures["entries"] > 0


@pytest.mark.slow
def test_two_hundred_indexer_kills(root: Path) -> None:
    kills = int(os.environ.get("MEMSITE_KILLS", "200"))
    figures = kill_indexers(root, kills=kills, seed=11)
    print("\nindex kills:", json.dumps(figures))
    assert figures["kills"] == kills
