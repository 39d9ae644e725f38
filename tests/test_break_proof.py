"""The break-proof review (issue 15): each attack, as a user or an attacker would try it.

One test (or a few) per numbered point of the review; each failed on the code before the fix.
The site-side points (scripts in ``<head>``, outside requests) are in
``tests/test_site_safety.py``, which builds and drives the site in Chromium.
"""

from __future__ import annotations

from pathlib import Path

from memsite import Memory
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
