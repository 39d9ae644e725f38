"""The ``[records]`` folders under load and attack (issue 34, points 2 to 4).

A wide glob walked every file of the repository before every search, so each hook ran out
of time and each SessionStart on an unbuilt index started one more builder; a glob with
``..`` after its wildcard walked the machine; a folder that vanished under the walk failed
check and search; a record named like a decision of the tree took its id. Each command
here runs as the process an agent or a teammate starts.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memsite import Memory
from memsite.store.records import read_records, record_files
from memsite.store.tree import init_tree
from tests.conftest import Clock

RECORD = "# {n}. Record number {n}\n\nDate: 2025-01-01\n\n## Decision\n\nWe keep file {n}.\n"
DECISION = "Cache sessions in Valkey"
WHY = "Valkey keeps the sessions warm across deploys and answers in a millisecond."


def project(tmp_path: Path, *paths: str) -> tuple[Path, Path]:
    """A repository holding a memory tree whose ``[records]`` table names ``paths``."""
    repo = tmp_path / "project"
    (repo / ".git").mkdir(parents=True)
    root = repo / "memory"
    init_tree(root)
    listed = ", ".join(json.dumps(p) for p in paths)
    (root / "memsite.toml").write_text(f"[records]\npaths = [{listed}]\n", "utf-8")
    return repo, root


def spread(folder: Path, count: int, per_folder: int = 100) -> None:
    """``count`` small numbered records in folders of ``per_folder``."""
    for n in range(count):
        sub = folder / f"part{n // per_folder:04d}"
        if n % per_folder == 0:
            sub.mkdir(parents=True, exist_ok=True)
        (sub / f"{n:06d}-record.md").write_text(RECORD.format(n=n), "utf-8")


def everything(
    tmp_path: Path, folder: str, count: int, per_folder: int, glob: str = "../**/*.md"
) -> tuple[Path, Path]:
    """A tree whose ``[records]`` glob is ``glob`` (the whole repository), ``count`` records
    in ``folder`` of the repository, and the tree's own decision about caching sessions."""
    repo, root = project(tmp_path, glob)
    spread(repo / folder, count, per_folder)
    Memory(root, author="", clock=Clock()).decide(DECISION, why=WHY)
    return repo, root


def aged(folder: Path, seconds: float = 60) -> None:
    """Every folder under ``folder`` changed ``seconds`` ago: out of the walk's racy window."""
    then = time.time() - seconds
    for path, _, _ in os.walk(folder):
        os.utime(path, (then, then))


def memsite(
    root: Path, *args: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMSITE_ROOT"}
    env["MEMSITE_CACHE"] = str(root.parent / ".cache")
    return subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(root), *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=timeout,
        env=env,
        cwd=root.parent,
    )


def prompt_event(prompt: str, root: Path) -> str:
    return json.dumps(
        {
            "session_id": "s1",
            "transcript_path": "/nonexistent/t.jsonl",
            "cwd": str(root.parent),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    )


# -- a wide glob: a budget, and a walk remembered ------------------------------------------


def test_a_glob_over_more_files_than_the_limit_is_cut_there_and_check_says_so(
    tmp_path: Path,
) -> None:
    repo, root = project(tmp_path, "../**/*.md")
    spread(repo / "docs", 5_000 + 150)
    done = memsite(root, "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "memsite.toml:1: warning: [records] paths '../**/*.md' matches more than 5,000 files: "
        "the first 5,000 found are read; narrow it to the records' folders"
    ) in done.stdout.splitlines()
    files = record_files(root)[0]
    assert len(files) == 5_000
    assert files[0] == "../docs/part0000/000000-record.md"
    assert files[-1] == "../docs/part0049/004999-record.md"


def test_the_records_walk_is_not_repeated_while_no_folder_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, root = project(tmp_path, "../docs/**/*.md")
    spread(repo / "docs", 300, per_folder=30)
    aged(repo)
    memory = Memory(root, cache_dir=repo / ".cache")
    assert memory.search("record number 17", lexical=True)
    listed: list[str] = []
    scandir = os.scandir

    def counted(path):  # type: ignore[no-untyped-def]
        listed.append(os.path.abspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counted)
    assert len(record_files(root)[0]) == 300
    hits = memory.search("record number 17", lexical=True)
    assert hits and hits[0].path == "../docs/part0000/000017-record.md"
    outside = [p for p in listed if not Path(p).is_relative_to(root)]
    assert outside == []  # the records' folders were not listed again
    (repo / "docs" / "part0003" / "000999-record.md").write_text(RECORD.format(n=999), "utf-8")
    assert "../docs/part0003/000999-record.md" in record_files(root)[0]
    assert any(Path(p).is_relative_to(repo / "docs") for p in listed)  # walked again


def test_what_is_added_beside_records_read_once_is_seen_by_the_same_process(
    tmp_path: Path,
) -> None:
    repo, root = project(tmp_path, "../docs/adr")
    (repo / "docs" / "adr").mkdir(parents=True)
    (repo / "docs" / "adr" / "0001-first.md").write_text(RECORD.format(n=1), "utf-8")
    aged(repo)
    assert read_records(root).problems == []
    (repo / "docs" / "adr" / "0002-out.md").symlink_to(tmp_path / "elsewhere.md")
    assert [str(p) for p in read_records(root).problems] == [
        "../docs/adr/0002-out.md:1: error: symbolic link points outside the repository; not read"
    ]


@pytest.mark.slow
def test_a_glob_that_looks_at_more_names_than_the_limit_stops_there_and_check_says_so(
    tmp_path: Path,
) -> None:
    """50,000 names and not one record among them: the walk stops, it does not go on."""
    repo, root = project(tmp_path, "../**/adr/*.md")
    for n in range(50_100):
        sub = repo / "build" / f"part{n // 1000:03d}"
        if n % 1000 == 0:
            sub.mkdir(parents=True)
        (sub / f"{n}.txt").touch()
    (repo / "zz" / "adr").mkdir(parents=True)
    (repo / "zz" / "adr" / "0001-late.md").write_text(RECORD.format(n=1), "utf-8")
    done = memsite(root, "check")
    assert done.returncode == 0, done.stdout
    assert (
        "memsite.toml:1: warning: [records] paths '../**/adr/*.md' looked at 50,000 names "
        "without finishing: only the 0 records found by then are read; narrow it to the "
        "records' folders"
    ) in done.stdout.splitlines()


LISTED = """
import os, sys
from pathlib import Path
from memsite import Memory
listed, scandir = [], os.scandir
os.scandir = lambda path=".": listed.append(os.path.abspath(path)) or scandir(path)
with Memory(Path(sys.argv[1]), cache_dir=Path(sys.argv[2])) as memory:
    print(memory.search("record number 17", lexical=True)[0].path)
print("\\n".join(listed))
"""


def test_a_new_process_does_not_walk_the_records_again_while_no_folder_changed(
    tmp_path: Path,
) -> None:
    """Each hook is a new process: the index keeps the walk beside ``state.json``."""
    repo, root = project(tmp_path, "../docs/**/*.md")
    spread(repo / "docs", 300, per_folder=30)
    aged(repo)
    assert memsite(root, "search", "record number 17", "--lexical").returncode == 0
    ask = [sys.executable, "-c", LISTED, str(root), str(repo / ".cache")]
    done = subprocess.run(ask, capture_output=True, text=True, timeout=120, check=True)
    found, *listed = done.stdout.splitlines()
    assert found == "../docs/part0000/000017-record.md"
    assert [p for p in listed if Path(p).is_relative_to(repo / "docs")] == []
    (repo / "docs" / "part0004" / "000999-record.md").write_text(RECORD.format(n=999), "utf-8")
    done = subprocess.run(ask, capture_output=True, text=True, timeout=120, check=True)
    assert any(Path(p).is_relative_to(repo / "docs") for p in done.stdout.splitlines())


@pytest.mark.slow
def test_a_glob_over_100000_files_leaves_the_hook_its_recall_and_check_its_warning(
    tmp_path: Path,
) -> None:
    """The measured break: 100,000 markdown files under ``../**/*.md``, a session started on
    the unbuilt index (its builder in the background), then prompts."""
    repo, root = everything(tmp_path, "vendor", 100_000, per_folder=500)
    started = time.monotonic()
    checked = memsite(root, "check", timeout=60)
    figures = [f"check {time.monotonic() - started:.1f} s"]
    assert "matches more than 5,000 files" in checked.stdout and checked.returncode == 0
    assert time.monotonic() - started < 20, figures
    event = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart"}
    started = time.monotonic()
    said = memsite(root, "hook", stdin=json.dumps({**event, "source": "startup"}))
    figures.append(f"SessionStart {time.monotonic() - started:.1f} s")
    assert "no answer within" not in said.stderr and "additionalContext" in said.stdout
    deadline = time.monotonic() + 600
    while builders(root) and time.monotonic() < deadline:
        time.sleep(1)
    figures.append(f"built {time.monotonic() - started:.0f} s after")
    for _ in range(3):
        started = time.monotonic()
        said = memsite(
            root, "hook", stdin=prompt_event("why do we cache sessions in Valkey?", root)
        )
        figures.append(f"prompt {time.monotonic() - started:.1f} s")
        assert "no answer within" not in said.stderr, said.stderr
        assert "Valkey keeps the sessions warm" in said.stdout
    print("; ".join(figures))


# -- the repository's boundary, and folders that come and go -------------------------------


def test_a_glob_that_climbs_out_of_the_repository_reads_and_lists_nothing_there(
    tmp_path: Path,
) -> None:
    repo, root = project(
        tmp_path,
        "../*/../../sibling/**/*.md",
        "../docs/*/*.md",
        "../docs/adr/*.md",
        "../docs/loop/adr",
    )
    secret = tmp_path / "sibling" / "adr" / "0001-the-neighbours-secret.md"
    secret.parent.mkdir(parents=True)
    secret.write_text("# 1. The neighbours' secret plan\n\nDate: 2025-01-01\n", "utf-8")
    (repo / "docs" / "adr").mkdir(parents=True)
    (repo / "docs" / "adr" / "0002-ours.md").write_text(
        "# 2. Our own record\n\nDate: 2025-01-02\n", "utf-8"
    )
    (repo / "docs" / "out").symlink_to(tmp_path / "sibling" / "adr")
    (repo / "docs" / "loop").symlink_to(repo / "docs" / "loop")  # a loop of links
    checked = memsite(root, "check")
    assert "Traceback" not in checked.stderr, checked.stderr
    assert (
        "memsite.toml:1: error: [records] paths '../docs/loop/adr': no such folder; not read"
        in checked.stdout.splitlines()
    )
    named = [line for line in checked.stdout.splitlines() if not line.startswith("memsite.toml")]
    assert not [line for line in named if "sibling" in line or "docs/out" in line], named
    assert (
        "memsite.toml:1: error: [records] paths '../*/../../sibling/**/*.md': '..' after a "
        "wildcard could lead out of the repository; name the folder before the first "
        "wildcard (../docs/*/adr/*.md); not read"
    ) in checked.stdout.splitlines()
    assert record_files(root)[0] == ["../docs/adr/0002-ours.md"]
    found = memsite(root, "search", "neighbours secret plan our own record", "--json")
    assert found.returncode == 0
    assert "secret plan" not in found.stdout and "Our own record" in found.stdout


CHURN = """
import os, shutil, sys, time
base, stop = sys.argv[1], time.time() + float(sys.argv[2])
while time.time() < stop:
    for i in range(40):
        folder = os.path.join(base, f"out{i:02d}")
        os.makedirs(folder, exist_ok=True)
        # each file whole (a hidden temporary file renamed), as a reader should find it
        temporary = os.path.join(folder, ".part")
        with open(temporary, "w") as handle:
            handle.write(f"# {i}. Generated\\n\\nDate: 2025-01-01\\n\\nBuild output.\\n")
        os.replace(temporary, os.path.join(folder, f"00{i:02d}-generated.md"))
    shutil.rmtree(base, ignore_errors=True)
"""


def test_a_build_folder_that_comes_and_goes_under_the_glob_never_fails_check_or_search(
    tmp_path: Path,
) -> None:
    repo, root = everything(tmp_path, "work/docs", 40, per_folder=10, glob="../work/**/*.md")
    churn = subprocess.Popen([sys.executable, "-c", CHURN, str(repo / "work" / "build"), "600"])
    try:
        failed = []
        for _ in range(10):
            for args in (("check",), ("search", "cache sessions valkey", "--lexical")):
                done = memsite(root, *args)
                if done.returncode != 0 or "Traceback" in done.stderr:
                    failed.append((args[0], done.stdout[-300:], done.stderr[-300:]))
        assert failed == []
    finally:
        churn.kill()
        churn.wait()


# -- one builder per tree ----------------------------------------------------------------


def builders(root: Path) -> set[int]:
    """The pids of the running background builders of the tree at ``root``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(root).encode() in words and any(b"memory.index()" in w for w in words):
            found.add(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="lists processes in /proc")
def test_sessions_started_on_an_unbuilt_index_start_one_builder(tmp_path: Path) -> None:
    repo, root = project(tmp_path, "../docs")
    notes = root / "notes"
    notes.mkdir()
    for n in range(3000):  # long enough to build that every session starts before it ends
        (notes / f"note-{n:04d}.md").write_text(f"# Note {n}\n\n{'word ' * 200}{n}\n", "utf-8")
    start = json.dumps(
        {
            "session_id": "s",
            "cwd": str(repo),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )
    seen: set[int] = set()
    most = 0
    try:
        for _ in range(3):
            assert memsite(root, "hook", stdin=start).returncode == 0
            for pause in (0.0, 0.5):  # at once, and once each new builder has started
                time.sleep(pause)
                running = builders(root)
                seen |= running
                most = max(most, len(running))
        assert seen, "no builder was started"
        assert most == 1, f"{most} builders ran at once"
    finally:
        for pid in builders(root):
            os.kill(pid, 9)


# -- a record never takes a decision's id --------------------------------------------------

TITLE = "Move the session store from MongoDB to Postgres"
REAL = "Postgres gives us transactions across the session and billing tables."
IMPOSTOR = (
    f"# {TITLE}\n\nDate: 2026-11-05\n\n## Status\n\nAccepted\n\n## Decision\n\n"
    "Move the session store from MongoDB to Postgres by copying the collections by hand, "
    "session store and all; MongoDB to Postgres in one night.\n"
)


@pytest.mark.parametrize("record_first", [False, True])
def test_a_record_named_like_a_decision_gets_its_own_id_and_the_decision_keeps_its_own(
    tmp_path: Path, record_first: bool
) -> None:
    repo, root = project(tmp_path, "../docs/adr")
    adr = repo / "docs" / "adr"
    adr.mkdir(parents=True)
    clock = Clock(dt.datetime(2026, 11, 5, 10, 0))
    memory = Memory(root, author="", clock=clock, cache_dir=repo / ".cache")
    decided = "2026-11-05-move-the-session-store-from-mongodb-to-postgres"
    record = adr / f"{decided}.md"
    if record_first:  # the index holds the record under its name, then the decision arrives
        record.write_text(IMPOSTOR, "utf-8")
        assert memory.search(TITLE, lexical=True)[0].id == decided
        time.sleep(0.01)
    assert memory.decide(TITLE, why=REAL) == decided
    if not record_first:
        assert memory.search(TITLE, lexical=True)[0].id == decided
        record.write_text(IMPOSTOR, "utf-8")
    hits = {hit.id: hit for hit in memory.search(TITLE, lexical=True)}
    assert REAL in hits[decided].text and hits[decided].path == "cold/decisions.md"
    assert hits[f"adr-{decided}"].path == f"../docs/adr/{decided}.md"  # both are kept
    assert REAL in memory.recall(TITLE + "?", lexical=True).markdown
    assert REAL in memory.get(decided).markdown
    assert "copying the collections" in memory.get(f"adr-{decided}").markdown
    memory.decide(
        "Copy the sessions by hand after all", why="Two nights.", supersedes=f"adr-{decided}"
    )
    assert memory.get(f"adr-{decided}").status == "superseded"
    assert memory.get(decided).status == "current"
    said = memsite(root, "hook", stdin=prompt_event(f"why did we {TITLE.lower()}?", root))
    assert REAL in said.stdout, said.stderr
    checked = memsite(root, "check")
    assert checked.returncode == 0, checked.stdout
    assert (
        f"../docs/adr/{decided}.md:1: warning: record id '{decided}' is the id of an entry of "
        f"cold/decisions.md, which keeps it; the record is read as 'adr-{decided}'"
    ) in checked.stdout.splitlines()


def test_the_id_a_record_gets_is_the_same_in_search_get_and_check(tmp_path: Path) -> None:
    """``adr-<name>`` is taken by a file that cannot be read: the record is ``adr-<name>-2``
    for the index and for every reader alike."""
    repo, root = project(tmp_path, "../docs/adr")
    adr = repo / "docs" / "adr"
    adr.mkdir(parents=True)
    memory = Memory(root, author="", clock=Clock(dt.datetime(2026, 11, 5, 10, 0)))
    decided = memory.decide(TITLE, why=REAL)
    (adr / f"{decided}.md").write_text(IMPOSTOR, "utf-8")
    (adr / f"adr-{decided}.md").write_bytes("# 9. Café\n".encode("latin-1"))
    memory = Memory(root, cache_dir=repo / ".cache")
    hits = memory.search("copying the collections by hand", lexical=True)
    assert hits[0].id == f"adr-{decided}-2"
    assert "copying the collections" in memory.get(hits[0].id).markdown
