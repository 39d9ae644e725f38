from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memsite import Memory
from memsite.store.tree import init_tree

# The per-turn hook's warm process (memsite/agents/warm.py) outlives the hook that starts it:
# off for the suite, so no test leaves a server behind; tests/test_warm.py turns it on.
os.environ["MEMSITE_WARM"] = "off"

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "memory"
NOW = dt.datetime(2026, 6, 8, 14, 30, 5)


class Clock:
    """A settable clock: tests move time forward explicitly, nothing patches datetime."""

    def __init__(self, now: dt.datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def tick(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)


def printed_under_hash_seeds(code: str, seeds: int = 6) -> set[str]:
    """What the Python ``code`` prints, run in a process of its own under each of ``seeds``
    string-hashing seeds (``PYTHONHASHSEED``): one output when nothing it computes depends on
    the order a set of strings comes in."""
    seen = set()
    for seed in range(seeds):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        seen.add(done.stdout.strip())
    return seen


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A fresh, empty memory tree."""
    path = tmp_path / "memory"
    init_tree(path)
    return path


@pytest.fixture
def memory(root: Path, clock: Clock) -> Memory:
    return Memory(root, author="", clock=clock)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository that will hold ``memory/``, as the current folder (a test module
    whose project holds more defines its own ``project``)."""
    path = tmp_path / "project"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    monkeypatch.chdir(path)
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    return path


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A copy of the bundled sample memory."""
    if not SAMPLE.is_dir():
        pytest.skip("bundled memory/ not present")
    target = tmp_path / "sample" / "memory"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".lock"))
    return target


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop every warm process a test's hooks started: a test that runs a hook with a clean
    environment turns it back on, and the trees of pytest's temp folders outlive the run."""
    import signal

    try:
        base = str(session.config._tmp_path_factory.getbasetemp())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"memsite.agents.warm import serve" in a for a in argv) and any(
            a.decode(errors="replace").startswith(base) for a in argv
        ):
            with contextlib.suppress(OSError):
                os.kill(int(proc.name), signal.SIGTERM)
