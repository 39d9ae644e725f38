"""The break-proof review (issue 15): each attack, as a user or an attacker would try it.

One test (or a few) per numbered point of the review; each failed on the code before the fix.
The site-side points (scripts in ``<head>``, outside requests) are in
``tests/test_site_safety.py``, which builds and drives the site in Chromium.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory, MemsiteError
from memsite.cli import cli
from memsite.store.check import check_tree


def test_body_text_in_any_field_shape_stays_body(memory: Memory) -> None:
    """15.2: ``* **Supersedes:**`` or ``- **Tags**:`` in a body is text, never a field."""
    first = memory.decide("A", why="w")
    forged = f"* **Supersedes:** {first}\n- **Tags**: injected\n+ **Risk:** none"
    second = memory.decide("B", why="w", body=forged)
    entry = memory.entry(second)
    assert entry.supersedes is None and entry.tags == [] and entry.risk is None
    assert entry.body == forged
    assert [p for p in check_tree(memory.root) if p.severity == "error"] == []


def test_no_text_field_of_any_kind_reads_back_as_a_field(memory: Memory) -> None:
    shapes = ["* **Supersedes:** x", "+ **Tags:** t", "- **Category**: c", "- **Id:** forged"]
    for shape in shapes:
        text = f"first line\n{shape}"
        ids = [
            memory.decide("D", why=text, risk=text, body=shape),
            memory.learn("L", category="c", why=text, body=shape),
            memory.log("a", result=text, body=shape),
        ]
        for entry_id in ids:
            entry = memory.entry(entry_id)
            assert set(entry.fields) <= {"why", "risk", "category"}, (shape, entry.fields)
            assert entry.body == shape


def test_sample_memory_is_untouched_by_the_shared_field_shape(sample: Path) -> None:
    """The stricter escaping changes nothing in files already written."""
    assert [p for p in check_tree(sample) if p.severity == "error"] == []


# -- 15.4: files whose real path is outside the tree -------------------------------------


def _outside(tmp_path: Path, text: str) -> Path:
    secret = tmp_path / "outside" / "host-secret.txt"
    secret.parent.mkdir()
    secret.write_text(text)
    return secret


def test_a_persona_linked_outside_the_tree_is_never_injected(
    memory: Memory, tmp_path: Path
) -> None:
    secret = _outside(tmp_path, "# Persona\n\nOUTSIDE-PERSONA-TEXT\n")
    persona = memory.root / "persona.md"
    persona.unlink()
    persona.symlink_to(secret)
    memory.decide("Use Postgres", why="durability")
    payload = memory.prime(task="database", lexical=True)
    assert "OUTSIDE-PERSONA-TEXT" not in payload.markdown
    messages = [p.message for p in check_tree(memory.root)]
    assert any("outside the tree" in m for m in messages)


def test_a_hot_context_linked_outside_the_tree_is_not_read(memory: Memory, tmp_path: Path) -> None:
    secret = _outside(tmp_path, '{"session_id": "S", "task": "OUTSIDE-TASK"}')
    (memory.root / "hot" / "context.json").symlink_to(secret)
    with pytest.raises(MemsiteError, match="outside the memory tree"):
        memory.session()
    result = CliRunner().invoke(cli, ["--root", str(memory.root), "session", "show"])
    assert result.exit_code == 1 and "OUTSIDE-TASK" not in result.output
    assert "Traceback" not in result.output


# -- 15.14: a damaged hot context never crashes a command ---------------------------------


@pytest.mark.parametrize(
    "content",
    [
        '{"session_id": "S", "task": ' + "9" * 5000 + "}",
        "[" * 100_000 + "]" * 100_000,
        '{"session_id": "S", "pending_actions": ' + "[" * 5000 + "]" * 5000 + "}",
    ],
    ids=["5000-digit number", "nested 100000 deep", "nested list field"],
)
def test_a_damaged_hot_context_is_a_one_line_error(root: Path, content: str) -> None:
    (root / "hot" / "context.json").write_text(content)
    for args in (["session", "show"], ["check"]):
        result = CliRunner().invoke(cli, ["--root", str(root), *args])
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "context.json" in result.output
        assert len(result.output.strip().splitlines()) <= 3


def test_an_at_outside_the_calendar_is_a_one_line_error(root: Path) -> None:
    args = ["decide", "X", "--why", "w", "--at", "0001-01-01T00:00+05:00"]
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exit_code in (1, 2), result.output
    assert not isinstance(result.exception, OverflowError)
    assert "years 1-9999" in result.output
    assert (root / "cold" / "decisions.md").read_text() == "# Decisions\n"


def test_prune_keeping_more_days_than_the_calendar_holds_moves_nothing(
    memory: Memory,
) -> None:
    memory.log("old work", at="2026-05-01T10:00:00")
    result = CliRunner().invoke(
        cli, ["--root", str(memory.root), "prune", "--keep-days", "100000000"]
    )
    assert result.exit_code == 0, result.output
    assert "moved 0 log(s)" in result.output
    assert (memory.root / "warm" / "2026-05-01.md").is_file()


# -- 15.15: a root that is not a memory tree ----------------------------------------------


def test_a_folder_that_is_not_a_memory_tree_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "projects").mkdir(parents=True)
    (home / "projects" / "README.md").write_text("# hello\n")
    for args in (["search", "hello"], ["check"], ["decide", "X", "--why", "w"], ["build"]):
        result = CliRunner().invoke(cli, ["--root", str(home), *args])
        assert result.exit_code == 1, (args, result.output)
        assert "not a memory tree" in result.output
    assert not (tmp_path / ".memsite").exists() and not (home / ".memsite").exists()


def test_a_tree_of_only_notes_is_a_tree(tmp_path: Path) -> None:
    root = tmp_path / "adrs"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "0001-use-postgres.md").write_text("# Use Postgres\n\nDurability.\n")
    result = CliRunner().invoke(cli, ["--root", str(root), "search", "postgres", "--lexical"])
    assert result.exit_code == 0, result.output
    assert "Use Postgres" in result.output


# -- 15.6: secrets written encoded --------------------------------------------------------

TOKEN = "ghp_" + "Ab3" * 12


@pytest.mark.parametrize(
    "encoded",
    [
        TOKEN.replace("_", "\\_"),  # a markdown escape: renders as the plain token
        "&#103;" + TOKEN[1:],  # a decimal HTML entity
        "&#x67;" + TOKEN[1:],  # a hex one
        "ghp&lowbar;" + TOKEN[4:],  # a named one
    ],
    ids=["markdown escape", "decimal entity", "hex entity", "named entity"],
)
def test_a_secret_written_encoded_is_redacted_as_it_would_render(
    memory: Memory, encoded: str
) -> None:
    entry_id = memory.decide("Rotate the token", why=f"the old one was {encoded} (leaked)")
    text = (memory.root / "cold" / "decisions.md").read_text()
    assert TOKEN[4:] not in text and "[redacted: github token]" in text
    assert memory.entry(entry_id).why == "the old one was [redacted: github token] (leaked)"


def test_escapes_that_hide_no_secret_are_left_alone(memory: Memory) -> None:
    why = "use \\*stars\\* &amp; ampersands; ghp\\_ is a prefix, &#103; a letter"
    entry_id = memory.decide("Escapes", why=why)
    assert memory.entry(entry_id).why == why
