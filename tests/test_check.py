"""Hand-edited files with broken structure: check names each problem, the rest keeps working."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.store.check import check_tree


def problems(root: Path) -> list[str]:
    return [str(p) for p in check_tree(root)]


def write_decisions(root: Path, text: str | bytes) -> None:
    path = root / "cold" / "decisions.md"
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)


def test_a_deleted_heading_shows_as_two_ids_in_one_entry(memory: Memory, root: Path) -> None:
    memory.decide("First", why="a")
    memory.decide("Second", why="b")
    path = root / "cold" / "decisions.md"
    path.write_text(path.read_text().replace("## 2026-06-08 — Second\n", ""))
    assert problems(root) == [
        "cold/decisions.md:3: error: entry has two ids (2026-06-08-first, 2026-06-08-second): "
        "a heading was deleted, or a merge mixed the lines of two entries",
    ]


def test_bom_mixed_line_endings_and_bad_dates_are_named(root: Path) -> None:
    write_decisions(
        root,
        b"\xef\xbb\xbf# Decisions\r\n\r\n## 2026-02-30 \xe2\x80\x94 Impossible\n\n## 2026-03-01 - Fine\r\n",
    )
    assert problems(root) == [
        "cold/decisions.md:1: warning: starts with a byte-order mark (read fine; editors may disagree)",
        "cold/decisions.md:3: warning: mixed line endings (CRLF and LF); read fine",
        "cold/decisions.md:3: error: invalid date '2026-02-30': day is out of range for month",
    ]
    assert [e.title for e in Memory(root).entries("decision")] == ["Fine"]


def test_binary_and_huge_files_are_named_and_skipped(memory: Memory, root: Path) -> None:
    (root / "cold" / "blob.md").write_bytes(b"# ok\n\x00\x01\x02binary")
    (root / "cold" / "huge.md").write_bytes(b"# Huge\n\n" + b"word " * (11 * 1024 * 1024 // 5))
    memory.decide("Still writable", why="isolation")
    found = problems(root)
    assert "cold/blob.md:2: error: contains NUL bytes (binary?); file skipped" in found
    assert "cold/huge.md:1: warning: file is 11 MiB; very large files slow every command" in found
    titles = {e.title for e in memory.entries()}
    assert {"Still writable", "Huge"} <= titles


def test_an_unclosed_fence_is_named(root: Path) -> None:
    write_decisions(
        root, "# Decisions\n\n## 2026-03-01 — A\n\n```python\nx = 1\n\n## 2026-03-02 — Hidden\n"
    )
    assert problems(root) == [
        "cold/decisions.md:5: error: code fence is never closed; it hides the rest of the file"
    ]


def test_other_commands_keep_working_and_warn_about_skipped_files(root: Path) -> None:
    (root / "notes.md").write_bytes(b"\xff\xfe broken")
    runner = CliRunner()
    result = runner.invoke(cli, ["--root", str(root), "decide", "Works", "--why", "yes"])
    assert result.exit_code == 0
    check = runner.invoke(cli, ["--root", str(root), "check"])
    assert check.exit_code == 1
    assert (
        check.stdout
        == "notes.md:1: error: not valid UTF-8 (byte 0xff); file skipped, re-save it as UTF-8\n"
    )
    notices: list[str] = []
    Memory(root, notify=notices.append).entries()
    assert notices == [
        "warning: notes.md:1: not valid UTF-8 (byte 0xff); file skipped, re-save it as UTF-8"
    ]


def test_a_symlink_pointing_outside_is_skipped_with_a_warning(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret notes\n")
    (root / "cold" / "link.md").symlink_to(outside)
    assert problems(root) == [
        "cold/link.md:1: warning: symbolic link points outside the tree; skipped"
    ]
    assert all(e.path != "cold/link.md" for e in Memory(root).entries())


def test_a_broken_hot_context_is_an_error(root: Path) -> None:
    (root / "hot" / "context.json").write_text("{not json")
    (found,) = problems(root)
    assert found.startswith("hot/context.json:1: error: not valid JSON")


def test_the_bundled_sample_is_clean(sample: Path) -> None:
    assert problems(sample) == []


@pytest.mark.slow
def test_a_fifty_megabyte_file_is_named_and_search_still_works(memory: Memory, root: Path) -> None:
    (root / "cold" / "dump.md").write_bytes(
        b"# Dump\n\n" + b"line of text\n" * (50 * 1024 * 1024 // 13)
    )
    memory.decide("Findable", why="the rest keeps working")
    assert (
        "cold/dump.md:1: warning: file is 50 MiB; very large files slow every command"
        in problems(root)
    )
    assert "Findable" in {e.title for e in memory.entries("decision")}


def test_check_tree_takes_a_string_as_memory_does(sample: Path) -> None:
    # Issue 39.7: check_tree(str) raised AttributeError ('str' object has no attribute ...)
    assert check_tree(str(sample)) == check_tree(sample)
