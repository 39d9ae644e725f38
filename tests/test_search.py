"""Search, recall, prime, related and eval, through the API and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.search.payloads.tokens import estimate_tokens
from memsite.search.ranking import Hit, newest_first_among_ties

ADR = """\
---
date: 2026-03-02
---
# ADR 7: Move sessions from MongoDB to Postgres

Sessions have lived in a MongoDB replica set since 2019; we move them into Postgres next to
the users table.

## Context

The replica set lost sessions during a failover, and revocation cannot share a transaction
with a password change.

## Decision Outcome

Chosen option: a sessions table with a partial index on the token hash.

## Consequences

Every request now reads from the primary cluster, so load rises there; the nightly purge
keeps the table small.

## Appendix: benchmark notes

A long appendix about unrelated benchmark numbers for the cache layer and CDN warmup.
"""


@pytest.fixture
def mem(root: Path) -> Memory:
    memory = Memory(root, author="")
    (root / "notes").mkdir()
    (root / "notes" / "adr-7.md").write_text(ADR)
    (root / "persona.md").write_text("# Persona\n\nI love zebrafish and kumquats.\n")
    memory.decide(
        "Hash passwords with argon2id",
        why="bcrypt truncates long passwords at 72 bytes.",
        tags=["security"],
        at="2026-03-05T10:00:00",
    )
    memory.decide(
        "Rotate refresh tokens on every use",
        why="A stolen refresh token stays valid for 30 days.",
        tags=["security", "tokens"],
        at="2026-03-06T10:00:00",
    )
    memory.learn(
        "The CDN caches 404s for ten minutes",
        category="ops",
        why="A missing asset stayed missing after the deploy fixed it.",
        at="2026-03-07T10:00:00",
    )
    memory.log("ran the auth suite", {"command": "pytest"}, "87 passed", at="2026-03-08T09:00:00")
    yield memory
    memory.close()


def test_a_generic_section_is_found_by_what_its_record_is_about(mem: Memory) -> None:
    hits = mem.search("what did moving sessions to postgres cost us in load?")
    top = hits[0]
    assert top.path == "notes/adr-7.md"
    assert "## Consequences" in top.text
    assert top.breadcrumb.startswith("ADR 7: Move sessions from MongoDB to Postgres")


def test_hits_are_spans_that_never_overlap(mem: Memory) -> None:
    hits = mem.search("sessions mongodb postgres failover transaction partial index", limit=10)
    adr = [h for h in hits if h.path == "notes/adr-7.md"]
    # the record's matching sections come back merged into one span, not as siblings
    assert len(adr) == 1
    assert adr[0].line < adr[0].end_line and "## Context" in adr[0].text
    assert len(adr[0].text) <= 2_000
    lines = sorted((h.path, h.line, h.end_line) for h in hits)
    for (p1, _, end1), (p2, start2, _) in zip(lines, lines[1:], strict=False):
        assert p1 != p2 or end1 < start2


def test_hits_carry_the_json_fields_as_attributes(mem: Memory) -> None:
    (hit,) = mem.search("argon2id bcrypt", limit=1)
    assert hit.id == hit.anchor == "2026-03-05-hash-passwords-with-argon2id"
    assert (hit.path, hit.kind, hit.tier, hit.tags) == (
        "cold/decisions.md",
        "decision",
        "cold",
        ("security",),
    )
    assert hit.breadcrumb == "Decisions › Hash passwords with argon2id"
    assert hit.heading == "2026-03-05 — Hash passwords with argon2id"
    assert hit.date.isoformat() == "2026-03-05"
    assert "**bcrypt**" in hit.snippet
    assert set(hit.to_dict()) >= {
        "id", "path", "anchor", "heading", "breadcrumb", "kind", "tier", "date",
        "category", "tags", "score", "line", "end_line", "snippet", "text",
    }  # fmt: skip


def test_the_persona_is_never_returned(mem: Memory) -> None:
    assert mem.search("zebrafish kumquats") == []
    assert mem.recall("do I like zebrafish?").hits == ()


def test_quoted_phrases_must_occur_when_an_entry_holds_them(mem: Memory) -> None:
    held = mem.search('"partial index"')
    assert [h.path for h in held] == ["notes/adr-7.md"]
    assert held[0].phrase_fallback == ()
    # no entry holds this one: its words answer, and each hit says so (issue 36)
    loose = mem.search('"index partial"')
    assert loose[0].path == "notes/adr-7.md"
    assert {h.phrase_fallback for h in loose} == {("index partial",)}
    assert mem.search('"zebrafish kumquats"') == []


def test_field_filters_in_the_query_and_as_arguments(mem: Memory) -> None:
    assert {h.kind for h in mem.search("security tokens passwords kind:decision")} == {"decision"}
    assert [h.id for h in mem.search("tokens tag:tokens")] == [
        "2026-03-06-rotate-refresh-tokens-on-every-use"
    ]
    assert [h.kind for h in mem.search("cdn", category="ops")] == ["learning"]
    assert mem.search("cdn", category="security") == []
    found = mem.search("passwords tokens", since="2026-03-06", until="2026-03-06")
    assert [h.id for h in found] == ["2026-03-06-rotate-refresh-tokens-on-every-use"]
    assert {h.tier for h in mem.search("auth suite", tier="warm")} == {"warm"}
    # a filter alone lists the newest matches
    assert [h.kind for h in mem.search("kind:learning")] == ["learning"]


def test_recall_fits_the_budget_and_says_what_it_left_out(mem: Memory) -> None:
    full = mem.recall("security passwords tokens sessions", budget=5_000)
    assert len(full.hits) >= 3 and full.left_out == 0
    small = mem.recall("security passwords tokens sessions", budget=170)
    assert estimate_tokens(small.markdown) <= 170
    assert small.left_out == len(full.hits) - len(small.hits) > 0
    assert f"_{small.left_out} more matching item" in small.markdown
    block = small.hits[0]
    assert f"Source: {block.path}#{block.anchor}" in small.markdown


def test_recall_cites_the_site_when_it_has_a_url(mem: Memory, root: Path) -> None:
    (root.parent / "mkdocs.yml").write_text("site_name: Memory\nsite_url: https://mem.example/\n")
    text = mem.recall("argon2id").markdown
    assert (
        "Source: cold/decisions.md#2026-03-05-hash-passwords-with-argon2id "
        "(https://mem.example/decisions/#2026-03-05-hash-passwords-with-argon2id)"
    ) in text
    assert "### 2026-03-05 · Decisions › Hash passwords with argon2id" in text


def _hit(name: str, score: float, day: int) -> Hit:
    import datetime as dt

    return Hit(name, "p.md", name, name, name, "note", "cold", dt.date(2026, 1, day), "", (),
               score, 1, 1, "", name)  # fmt: skip


def test_near_ties_come_newest_first() -> None:
    hits = [_hit("old", 1.00, 1), _hit("new", 0.98, 9), _hit("low", 0.50, 20)]
    assert [h.id for h in newest_first_among_ties(hits)] == ["new", "old", "low"]


def test_prime_holds_every_section_within_budget(mem: Memory) -> None:
    mem.start_session("Harden password storage", at="2026-03-08T10:00:00")
    primed = mem.prime(budget=2_000)
    names = {s.name: s for s in primed.sections}
    assert list(names) == ["persona", "hot", "decisions", "learnings", "activity", "more"]
    assert "zebrafish" in names["persona"].markdown  # the persona, always
    assert "Harden password storage" in names["hot"].markdown
    assert "argon2id" in names["decisions"].markdown.split("\n### ")[1]  # relevant first
    assert "ran the auth suite" in names["activity"].markdown
    assert primed.tokens <= 2_000
    report = primed.to_dict()
    assert [s["tokens"] for s in report["sections"]] == [s.tokens for s in primed.sections]


def test_prime_caps_each_section_by_its_share(mem: Memory) -> None:
    for minute in range(30):
        mem.log(f"deployed build {minute}", result="ok " * 40, at=f"2026-03-10T09:{minute:02d}:00")
    primed = mem.prime(task="deploys", budget=600)
    activity = next(s for s in primed.sections if s.name == "activity")
    assert activity.tokens <= activity.cap and activity.left_out > 0
    assert "left out to stay within this section's budget" in activity.markdown
    assert primed.tokens <= 600


def test_related_lists_similar_records_but_not_itself(mem: Memory) -> None:
    mem.decide(
        "Store refresh tokens hashed",
        why="A database dump must not leak working refresh tokens.",
        tags=["tokens"],
        at="2026-03-09T10:00:00",
    )
    related = mem.related("2026-03-06-rotate-refresh-tokens-on-every-use")
    assert related[0].id == "2026-03-09-store-refresh-tokens-hashed"
    assert "2026-03-06-rotate-refresh-tokens-on-every-use" not in [h.id for h in related]
    assert {h.kind for h in related} <= {"decision", "learning", "note"}


def test_cli_search_prints_rank_breadcrumb_citation_and_snippet(mem: Memory, root: Path) -> None:
    mem.index()
    result = CliRunner().invoke(cli, ["--root", str(root), "search", "argon2id", "--limit", "1"])
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "1. Decisions › Hash passwords with argon2id\n"
        "   cold/decisions.md#2026-03-05-hash-passwords-with-argon2id · 2026-03-05 · decision\n"
        "   **Why:** bcrypt truncates long passwords at 72 bytes. **Tags:** security\n"
    )


def test_cli_search_json_and_recall_from_stdin(mem: Memory, root: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["--root", str(root), "search", "cdn 404", "--json"])
    hit = json.loads(out.stdout)[0]
    assert (hit["kind"], hit["category"], hit["line"]) == ("learning", "ops", 3)
    recalled = runner.invoke(
        cli, ["--root", str(root), "recall", "-", "--json"], input="why do 404s linger on the cdn?"
    )
    data = json.loads(recalled.stdout)
    assert data["hits"][0]["id"] == "2026-03-07-the-cdn-caches-404s-for-ten-minutes"
    assert data["tokens"] <= data["budget"] == 1500
    empty = runner.invoke(cli, ["--root", str(root), "recall", "thanks!"])
    assert (empty.exit_code, empty.stdout) == (0, "")


def test_cli_index_prime_and_related(mem: Memory, root: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, ["--root", str(root), "index", "--rebuild"])
    # decisions, learnings, the ADR and four day logs
    assert first.output.startswith("rebuilt: 7 file(s) indexed, 0 removed, ")
    assert runner.invoke(cli, ["--root", str(root), "index"]).output == "index is up to date\n"
    primed = runner.invoke(cli, ["--root", str(root), "prime", "--json", "--budget", "3000"])
    sections = json.loads(primed.stdout)["sections"]
    assert [s["name"] for s in sections][0] == "persona"
    assert all({"cap", "tokens", "items", "left_out"} <= set(s) for s in sections)
    bad = runner.invoke(cli, ["--root", str(root), "related", "no-such-id"])
    assert bad.exit_code == 1 and "no entry with id 'no-such-id'" in bad.output


def test_cli_eval_reports_and_gates_on_min_recall(mem: Memory, root: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"q": "long passwords cut at 72 bytes", "relevant": [
            "cold/decisions.md#2026-03-05-hash-passwords-with-argon2id"]}) + "\n"
        + json.dumps({"q": "extra load on the primary database", "relevant": [
            "notes/adr-7.md#Consequences"]}) + "\n"
        + json.dumps({"q": "quantum teleportation", "relevant": ["cold/learnings.md"]}) + "\n"
    )  # fmt: skip
    runner = CliRunner()
    result = runner.invoke(cli, ["--root", str(root), "eval", str(queries), "--k", "3"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("recall@3 0.667  MRR@10 0.667  (3 queries, ")
    assert "missed: quantum teleportation" in result.stdout
    gated = runner.invoke(cli, ["--root", str(root), "eval", str(queries), "--min-recall", "0.9"])
    assert gated.exit_code == 1
    broken = tmp_path / "bad.jsonl"
    broken.write_text('{"q": "x"}\n')
    failed = runner.invoke(cli, ["--root", str(root), "eval", str(broken)])
    assert failed.exit_code == 1 and "bad.jsonl:1:" in failed.output


def test_token_estimate_is_four_bytes_a_token() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("日本") == 2  # six bytes


def test_a_limit_above_the_candidate_pool_returns_every_match(root: Path) -> None:
    with Memory(root, author="") as memory:
        for i in range(60):
            memory.learn(
                f"Finding {i} about kills", category="load", at=f"2026-06-01T10:{i:02d}:00"
            )
        assert len(memory.search("kind:learning kills", limit=100, lexical=True)) == 60
        assert len(memory.search("kills", limit=10, lexical=True)) == 10


def test_prime_recent_work_sets_each_field_apart(mem: Memory) -> None:
    # Issue 39.5: "- 2026-12-04 18:08 **progress** - **Author:** newcomer files: src/shop/cart.py
    # Result: …" ran the author, the details and the result together
    mem.log(
        "ran tests",
        {"command": "pytest tests/shop", "failed": "1"},
        "one failure in the cart tests",
        author="newcomer",
        at="2026-03-10T09:00:00",
    )
    primed = mem.prime(task="cart", budget=4_000)
    activity = next(s for s in primed.sections if s.name == "activity").markdown
    line = next(line for line in activity.splitlines() if "**ran tests**" in line)
    assert line.startswith("- 2026-03-10 09:00 **ran tests** by newcomer — ")
    assert (
        "command: pytest tests/shop · failed: 1 · Result: one failure in the cart tests (" in line
    )
    assert "**Author:**" not in line
