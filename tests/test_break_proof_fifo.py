"""A FIFO where memsite reads markdown: every reader answers at once, none waits for a writer.

Opening a FIFO for reading waits for a writer, for ever. A ``notes/*.md`` FIFO made every
command that walks the tree (search, recall, prime, why, the site) hang before its first
line; one in place of a warm log or ``cold/learnings.md`` hung prime and every write that
reads the logs. Each command here runs as the process an agent or a teammate starts.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

TODAY = dt.date.today().isoformat()


def memsite(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMSITE_ROOT"}
    try:
        return subprocess.run(
            [sys.executable, "-m", "memsite", "--root", str(root), *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=root.parent,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"memsite {' '.join(args)} still waits on the FIFO after 60 s")


def test_a_fifo_named_like_a_note_is_skipped_by_every_reader(sample: Path) -> None:
    os.mkfifo(sample / "notes" / "pipe.md")
    found = memsite(sample, "search", "argon2id", "--json")
    assert found.returncode == 0 and "argon2id" in found.stdout
    recalled = memsite(sample, "recall", "which argon2id parameters did we pick for hashing")
    assert recalled.returncode == 0 and "argon2id" in recalled.stdout
    assert memsite(sample, "prime").returncode == 0
    assert memsite(sample, "why", "services/auth/passwords.py").returncode == 0
    checked = memsite(sample, "check")
    assert "notes/pipe.md:1: warning: a FIFO, not a regular file; skipped" in checked.stdout


@pytest.mark.parametrize("rel", [f"warm/{TODAY}.md", "cold/learnings.md"])
def test_a_fifo_in_place_of_a_log_leaves_reads_working_and_a_write_replaces_it(
    sample: Path, rel: str
) -> None:
    (sample / rel).unlink(missing_ok=True)
    os.mkfifo(sample / rel)
    assert memsite(sample, "prime").returncode == 0
    found = memsite(sample, "search", "argon2id", "--json")
    assert found.returncode == 0 and "argon2id" in found.stdout
    # a write takes the file's place (a FIFO holds nothing to keep) with the new entry
    wrote = memsite(sample, "log", "ran the FIFO check")
    assert wrote.returncode == 0, wrote.stderr
    assert memsite(sample, "learn", "FIFOs wait", "--category", "tooling").returncode == 0
    assert (sample / rel).is_file()
    text = (sample / rel).read_text("utf-8")
    assert ("ran the FIFO check" if rel.startswith("warm") else "FIFOs wait") in text


@pytest.mark.parametrize(
    "args", [("checkpoint", "--summary", "halfway"), ("session", "start", "check FIFOs")]
)
def test_a_fifo_in_place_of_todays_log_is_a_one_line_error_for_the_session(
    sample: Path, args: tuple[str, ...]
) -> None:
    """The live session reads today's log (its last checkpoint, the session it archives)."""
    (sample / "warm" / f"{TODAY}.md").unlink(missing_ok=True)
    os.mkfifo(sample / "warm" / f"{TODAY}.md")
    done = memsite(sample, *args)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"Error: {sample / 'warm' / TODAY}.md: a FIFO, not a regular file; not read, replace "
        "it with a file"
    ]
