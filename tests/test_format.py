"""The file format: exact rendering, tolerant reading, and write → read round trips."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memsite.errors import InvalidInput
from memsite.store.code import normalise
from memsite.store.format import parse_entries, render_entry
from memsite.store.inputs import multi_line, one_line
from memsite.store.model import Entry

DAY = dt.date(2026, 6, 8)


def decision(**changes: object) -> Entry:
    values: dict[str, object] = {
        "id": "2026-06-08-switched-to-postgres",
        "kind": "decision",
        "tier": "cold",
        "title": "Switched to Postgres",
        "date": DAY,
        "fields": {
            "why": "Mongo lost writes\nunder load",
            "risk": "migration downtime",
            "tags": "db, auth",
        },
        "body": "We measured it twice.",
        "path": "cold/decisions.md",
    }
    values.update(changes)
    return Entry(**values)  # type: ignore[arg-type]


def read_back(entry: Entry, header: str = "# Decisions\n\n") -> list[Entry]:
    return parse_entries(header + render_entry(entry), entry.path).entries


def test_decision_renders_exactly_as_documented() -> None:
    assert render_entry(decision()) == (
        "## 2026-06-08 — Switched to Postgres\n"
        "- **Why:** Mongo lost writes\n"
        "  under load\n"
        "- **Risk:** migration downtime\n"
        "- **Tags:** db, auth\n"
        "\n"
        "We measured it twice.\n"
        "\n"
        "<!-- id: 2026-06-08-switched-to-postgres -->\n"
    )


def test_activity_renders_details_fence_and_result() -> None:
    entry = Entry(
        "2026-06-08-ran-tests",
        "activity",
        "warm",
        "ran tests",
        DAY,
        dt.time(14, 30, 5),
        {"author": "claude"},
        body="",
        path="warm/2026-06-08.md",
        details={"command": "pytest -q"},
        result="3 failed",
    )
    assert render_entry(entry) == (
        "### 14:30:05 — ran tests\n"
        "- **Author:** claude\n"
        "\n"
        "```details\n"
        "command: pytest -q\n"
        "```\n"
        "\n"
        "Result: 3 failed\n"
        "\n"
        "<!-- id: 2026-06-08-ran-tests -->\n"
    )


def test_round_trip_keeps_every_part_and_position() -> None:
    (entry,) = read_back(decision())
    assert entry.id == "2026-06-08-switched-to-postgres"
    assert (entry.title, entry.date, entry.kind, entry.tier) == (
        "Switched to Postgres",
        DAY,
        "decision",
        "cold",
    )
    assert entry.why == "Mongo lost writes\nunder load"
    assert entry.tags == ["db", "auth"]
    assert entry.body == "We measured it twice."
    assert (entry.line, entry.end_line) == (3, 11)


HAND_EDITED = (
    "\ufeff# Decisions\r\n"
    "\r\n"
    "## 2026-06-01 - Use argon2id\r\n"
    "\r\n"
    "- **Why:** bcrypt truncates at 72 bytes\r\n"
    "\r\n"
    "- **Owner:** maria\r\n"
    "Body right after the fields.\r\n"
    "\r\n"
    "\r\n"
    "## 2026-06-02—No separator spaces\r\n"
    "Just a body, no fields at all.\r\n"
    "## 2026-06-03 — Right after the previous line (a union merge)\r\n"
    "- **Id:** 2026-06-03-kept-id\r\n"
    "## 2026-06-04 — Id stored as the closing line\r\n"
    "<!-- id: 2026-06-04-stored -->\r\n"
)


def test_hand_edited_files_parse() -> None:
    parsed = parse_entries(HAND_EDITED, "cold/decisions.md")
    assert parsed.problems == []
    first, second, third, fourth = parsed.entries
    assert first.title == "Use argon2id"
    assert first.fields == {"why": "bcrypt truncates at 72 bytes", "owner": "maria"}
    assert first.body == "Body right after the fields."
    assert first.id == "2026-06-01-use-argon2id"
    assert second.title == "No separator spaces"
    assert second.body == "Just a body, no fields at all."
    assert third.id == "2026-06-03-kept-id"
    assert third.line == 13
    assert (fourth.id, fourth.body, fourth.end_line) == ("2026-06-04-stored", "", 16)


def test_derived_ids_get_suffixes_on_collision() -> None:
    text = "## 2026-06-01 — Same\n\n## 2026-06-01 — Same\n\n## 2026-06-01 — Same\n"
    ids = [e.id for e in parse_entries(text, "cold/decisions.md").entries]
    assert ids == ["2026-06-01-same", "2026-06-01-same-2", "2026-06-01-same-3"]


def test_headings_inside_code_fences_are_not_entries() -> None:
    text = "## 2026-06-01 — Real\n\n```\n## 2026-06-02 — Not an entry\n```\n"
    (entry,) = parse_entries(text, "cold/decisions.md").entries
    assert "Not an entry" in entry.body


def test_bad_heading_and_invalid_date_are_problems_not_crashes() -> None:
    text = "## 2026-02-30 — Impossible day\n\n## Not dated\n\n## 2026-03-01 — Fine\n"
    parsed = parse_entries(text, "cold/decisions.md")
    assert [e.title for e in parsed.entries] == ["Fine"]
    messages = [(p.line, p.message) for p in parsed.problems]
    assert messages[0][0] == 1 and "2026-02-30" in messages[0][1]
    assert messages[1][0] == 3 and "not an entry heading" in messages[1][1]


STRUCTURE = "\n".join(
    [
        "# a heading",
        "## 2026-06-09 — looks like an entry",
        "---",
        "Setext text",
        "===",
        "- **Why:** looks like a field",
        "<!-- id: looks-like-an-id -->",
        "```",
        "an unclosed fence",
        "\\## already escaped",
        "Result: looks like a result",
    ]
)


def test_text_that_looks_like_structure_stays_inside_one_entry() -> None:
    entry = decision(body=STRUCTURE, fields={"why": STRUCTURE})
    after = decision(id="2026-06-09-next", title="Next", body="after")
    text = "# Decisions\n\n" + render_entry(entry) + "\n" + render_entry(after)
    parsed = parse_entries(text, "cold/decisions.md")
    assert [e.id for e in parsed.entries] == [entry.id, after.id]
    assert parsed.entries[0].body == STRUCTURE
    assert parsed.entries[0].why == STRUCTURE
    assert parsed.problems == []


def test_activity_body_that_starts_like_details_or_result_round_trips() -> None:
    for body in ("```\nkey: value\n```", "Result: not the result"):
        entry = Entry(
            "2026-06-08-x",
            "activity",
            "warm",
            "x",
            DAY,
            dt.time(9, 0),
            body=body,
            path="warm/2026-06-08.md",
        )
        (back,) = read_back(entry, "# 2026-06-08\n\n")
        assert (back.body, back.details, back.result) == (body, {}, "")


def test_title_ending_in_hashes_is_not_eaten_as_closing_sequence() -> None:
    (back,) = read_back(decision(title="Prefer C #"))
    assert back.title == "Prefer C #"


# -- property: write → read gives the same entry --------------------------------------


def _storable(text: str) -> bool:
    try:
        multi_line(text, "x")
    except Exception:
        return False
    return True


lines = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(
    lambda s: _is_line(s)
)


def _is_line(text: str) -> bool:
    try:
        one_line(text, "x")
    except Exception:
        return False
    return one_line(text, "x") == text


blocks = (
    st.lists(
        st.one_of(
            st.text(
                st.characters(
                    blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029"
                ),
                max_size=30,
            ),
            st.sampled_from(
                [
                    "#",
                    "## 2026-01-01 — x",
                    "```",
                    "~~~~",
                    "---",
                    "=",
                    "- **Id:** y",
                    # every field shape the reader accepts (issue 15.2)
                    "* **Supersedes:** 2026-01-01-a",
                    "+ **Tags:** injected",
                    "- **Tags**: injected",
                    "* **Why**:",
                    "<!-- id: 2026-01-01-forged -->",
                    "\\#",
                    "Result: r",
                    "  ",
                    "\t",
                ]
            ),
        ),
        max_size=8,
    )
    .map("\n".join)
    .map(lambda s: multi_line(s, "x") if _storable(s) else "")
)


def _stored_path(text: str) -> str | None:
    """A path as ``--path`` stores it (issue 14), or None when it would be refused."""
    try:
        return normalise(one_line(text, "path"), Path("/repo"))
    except InvalidInput:
        return None


paths = st.lists(
    st.one_of(
        lines,
        st.sampled_from(["auth/tokens.py", "./a/../b", "auth/", "auth/**", "<b>x</b>.py", "*.sql"]),
    )
    .map(_stored_path)
    .filter(lambda p: p is not None),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(
    title=lines,
    why=blocks,
    risk=blocks,
    body=blocks,
    tags=st.lists(lines.filter(lambda t: "," not in t), max_size=3),
    result=blocks,
    kind=st.sampled_from(["decision", "learning", "activity"]),
    code=paths,
    commit=st.one_of(st.none(), lines, st.just("0123456789abcdef0123456789abcdef01234567")),
)
def test_write_then_read_gives_the_same_entry(
    title: str,
    why: str,
    risk: str,
    body: str,
    tags: list[str],
    result: str,
    kind: str,
    code: list[str],
    commit: str | None,
) -> None:
    fields = {"why": why, "risk": risk}
    if tags:
        fields["tags"] = ", ".join(t.strip() for t in tags)
    if code:
        fields["paths"] = ", ".join(dict.fromkeys(code))
    if commit is not None:
        fields["commit"] = commit
    path = {"decision": "cold/decisions.md", "learning": "cold/learnings.md"}.get(
        kind, "warm/2026-06-08.md"
    )
    entry = Entry(
        "2026-06-08-id",
        kind,
        "warm" if kind == "activity" else "cold",
        title,
        DAY,
        dt.time(1, 2, 3) if kind == "activity" else None,
        fields,
        body=body,
        path=path,
        result=result if kind == "activity" else "",
    )
    before = Entry(
        "2026-06-07-before", kind, entry.tier, "before", DAY, entry.time, {}, body=body, path=path
    )
    text = render_entry(before) + "\n" + render_entry(entry) + "\n" + render_entry(before)
    back = parse_entries(text, path).entries
    assert len(back) == 3
    got = back[1]
    assert (got.id, got.title, got.fields, got.body, got.result) == (
        entry.id,
        entry.title,
        entry.fields,
        entry.body,
        entry.result,
    )
    assert got.paths == list(dict.fromkeys(code))
    assert got.commit == (commit.strip() or None if commit is not None else None)
