"""A sweep for input that is accepted and then stalls every later command: each case as a user
would meet it, counting the work done rather than timing it; each failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from memsite import Memory
from memsite.cli import cli


def run(root: Path, *args: str, **kwargs):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--root", str(root), *args], **kwargs)


class CountingSet(set):  # type: ignore[type-arg]
    """A set counting the lookups asked of it."""

    lookups = 0

    def __contains__(self, item: object) -> bool:
        CountingSet.lookups += 1
        return super().__contains__(item)


def test_thousands_of_duplicate_headings_take_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each duplicate counted _1, _2, ... from 1: a note of 40,000 "## h" (200 KB, accepted by
    # `note`) tried 800 million anchors, and index, search, recall and prime took 74 s each
    from memsite.search import headings

    monkeypatch.setattr(headings, "set", CountingSet, raising=False)
    CountingSet.lookups = 0
    found = headings.headings("## h\n" * 3_000)
    assert [h.anchor for h in found[:3]] == ["h", "h_1", "h_2"] and found[-1].anchor == "h_2999"
    assert CountingSet.lookups < 10 * 3_000  # 4.5 million before


@given(st.lists(st.sampled_from(["x", "x_1", "x_2", "x_10", "x_1_1", "x_01", "", "_1", "y"])))
def test_anchors_are_the_ones_markdown_gives_however_headings_repeat(slugs: list[str]) -> None:
    # anchors are stored as citations (path#anchor) and the site's pages carry Markdown's:
    # the linear count must give every heading the anchor counting one by one gave
    from markdown.extensions.toc import unique

    from memsite.search.headings import unique_anchor

    theirs: set[str] = set()
    ours: set[str] = set()
    skips: dict[str, int] = {}
    assert [unique_anchor(s, ours, skips) for s in slugs] == [unique(s, theirs) for s in slugs]


def test_a_session_that_touched_thousands_of_files_primes_parsing_the_cold_files_once(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # governed() asked why.items() of each file, which chunked the cold files again each
    # time: 3,000 files (one `progress --file` each) made every prime and budget take 6 s,
    # and SessionStart said "no answer within 5 s; no context added"
    from memsite.search.payloads import why

    files = ["services/auth/passwords.py", *(f"src/f{i}.py" for i in range(300))]
    assert (
        run(sample, "progress", "step", *(a for f in files for a in ("--file", f))).exit_code == 0
    )
    chunked: list[str] = []
    real = why.chunk_file

    def counting(rel: str, text: str):  # type: ignore[no-untyped-def]
        chunked.append(rel)
        return real(rel, text)

    monkeypatch.setattr(why, "chunk_file", counting)
    primed = run(sample, "prime", "--lexical")
    assert primed.exit_code == 0, primed.output
    assert "## Decisions governing this session's files" in primed.output
    assert "`services/auth/passwords.py`" in primed.output
    assert len(chunked) <= 2  # the decisions and the learnings, once; 602 before


def test_eval_of_a_file_that_is_not_utf8_is_a_one_line_error(sample: Path, tmp_path: Path) -> None:
    # a UnicodeDecodeError traceback before
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes(b"\xff\xfe")
    result = run(sample, "eval", str(queries))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output == f"Error: {queries}: not UTF-8 (bad byte at offset 0)\n"


def test_eval_of_a_fifo_is_a_one_line_error_not_a_wait_for_a_writer(
    sample: Path, tmp_path: Path
) -> None:
    # eval opened a FIFO for reading, which waits for a writer for ever. In a process of its
    # own, with a generous guard: the hang is what failed, nothing else shows it
    import os
    import subprocess
    import sys

    fifo = tmp_path / "queries.jsonl"
    os.mkfifo(fifo)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_WARM"] = "off"
    command = [sys.executable, "-m", "memsite", "--root", str(sample), "eval", str(fifo)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert (
        done.stderr
        == f"Error: {fifo}: a FIFO, not a regular file; not read, replace it with a file\n"
    )


def test_a_day_of_thousands_of_activities_fills_the_prime_counting_each_once(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each activity was checked against the budget by counting the tokens of every kept
    # line again: a day log of 45,000 activities spent 3 s of every prime doing so
    from memsite.search.payloads import primed

    day = "".join(
        f"\n### 10:{i // 60 % 60:02d}:{i % 60:02d} — ran command {i}\n- **Author:** claude\n\n"
        f"Result: exit 0 after step {i}\n\n<!-- id: 2026-06-08-ran-command-{i} -->\n"
        for i in range(3_000)
    )
    (root / "warm" / "2026-06-08.md").write_text("# 2026-06-08\n" + day, "utf-8")
    counted = [0]
    real = primed.estimate_tokens

    def counting(text: str) -> int:
        counted[0] += 1
        return real(text)

    monkeypatch.setattr(primed, "estimate_tokens", counting)
    payload = Memory(root).prime(budget=2_000, lexical=True)
    assert "ran command 2999" in payload.markdown  # the newest first, within its share
    assert "more left out to stay within this section's budget" in payload.markdown
    assert counted[0] < 100  # about 3,000 before
