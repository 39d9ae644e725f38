"""What the Zensical tests share (issue 38): the pinned ``zensical`` command, found beside this
Python (``pip install -e ".[zensical]"``), else in ``$MEMSITE_ZENSICAL_VENV`` or
``.ci/zensical-venv`` (git-ignored; ``.ci/run`` installs it there), put on ``PATH`` as memsite
looks for it. Without it the tests skip; with ``MEMSITE_REQUIRE_ZENSICAL=1`` (``.ci/run`` sets
it) they fail instead."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".ci" / "zensical-venv"


def zensical_bin() -> Path:
    """The ``zensical`` command the tests build with; skips (or fails, when required) without."""
    beside = Path(sys.executable).parent / "zensical"
    if beside.is_file():
        return beside
    binary = Path(os.environ.get("MEMSITE_ZENSICAL_VENV") or VENV) / "bin" / "zensical"
    if binary.is_file():
        return binary
    what = f"zensical is not installed (pip install -e '.[zensical]', or {binary})"
    if os.environ.get("MEMSITE_REQUIRE_ZENSICAL"):
        pytest.fail(f"MEMSITE_REQUIRE_ZENSICAL is set but {what}", pytrace=False)
    pytest.skip(what)


@contextmanager
def on_path(binary: Path) -> Iterator[None]:
    """``binary``'s folder first on ``PATH``, where memsite looks for ``zensical``."""
    before = os.environ["PATH"]
    os.environ["PATH"] = f"{binary.parent}{os.pathsep}{before}"
    try:
        yield
    finally:
        os.environ["PATH"] = before
