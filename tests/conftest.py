from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from memsite import Memory
from memsite.store.tree import init_tree

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
def sample(tmp_path: Path) -> Path:
    """A copy of the bundled sample memory."""
    if not SAMPLE.is_dir():
        pytest.skip("bundled memory/ not present")
    target = tmp_path / "sample" / "memory"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".lock"))
    return target
