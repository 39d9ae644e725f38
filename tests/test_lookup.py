"""``Memory.get``: one entry by id, hit id or ``path#anchor`` citation (issue 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsite import Memory
from memsite.errors import InvalidInput, NotFound

MONGO = "2026-11-03-keep-sessions-in-mongodb-for-now-behind-a-sessionstore"
POSTGRES = "2026-11-05-move-the-session-store-from-mongodb-to-postgres"
ADR = "cold/adr/0001-session-storage.md"


def test_an_id_gives_the_entry_as_written_and_what_superseded_it(sample: Path) -> None:
    found = Memory(sample).get(MONGO)
    assert found.entry.title == "Keep sessions in MongoDB for now, behind a SessionStore interface"
    assert found.markdown.startswith("## 2026-11-03 — Keep sessions in MongoDB")
    assert found.markdown.endswith(f"<!-- id: {MONGO} -->\n")
    assert found.status == "superseded" and found.superseded_by.id == POSTGRES
    assert found.to_dict()["citation"] == f"cold/decisions.md#{MONGO}"


def test_a_citation_names_the_same_entry(sample: Path) -> None:
    memory = Memory(sample)
    assert memory.get(f"cold/decisions.md#{POSTGRES}") == memory.get(POSTGRES)
    assert memory.get(POSTGRES).to_dict()["supersedes"] == MONGO


def test_a_note_section_gives_the_whole_note(sample: Path) -> None:
    memory = Memory(sample)
    note = memory.get(f"{ADR}#consequences")
    assert note.entry.kind == "note" and note.status is None
    assert "## Context" in note.markdown and "## Consequences" in note.markdown
    assert memory.get(ADR) == note == memory.get(f"{note.entry.id}#consequences")


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("nope", "no entry 'nope'"),
        ("2026-02-30-x", "no entry '2026-02-30-x'"),
        ("../outside.md#x", "no memory file '../outside.md'"),
        ("cold/decisions.md", r"holds \d+ entries: add #anchor"),
        (f"{ADR}#no-such-heading", "no entry"),
    ],
)
def test_what_is_not_there_is_one_clear_line(sample: Path, ref: str, message: str) -> None:
    with pytest.raises(NotFound, match=message):
        Memory(sample).get(ref)


def test_an_empty_reference_is_refused(sample: Path) -> None:
    with pytest.raises(InvalidInput, match="id is empty"):
        Memory(sample).get("  ")
