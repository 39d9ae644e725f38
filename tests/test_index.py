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
from memsite.index import SearchIndex


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
