"""Recall an agent can trust (issue 16): superseded decisions are flagged, the decision that
holds comes with them, and budgets say what they cut."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.search.supersession import supersession


def _chain(memory: Memory) -> tuple[str, str, str]:
    first = memory.decide("Hash passwords with bcrypt", why="bcrypt is in passlib", at="2026-06-01")
    second = memory.decide(
        "Hash passwords with argon2id", why="bcrypt truncates", supersedes=first, at="2026-06-03"
    )
    third = memory.decide(
        "Tune argon2id passwords hashing memory to 19 MiB",
        why="pods ran out of memory",
        supersedes=second,
        at="2026-06-05",
    )
    return first, second, third


def test_a_chain_of_three_points_every_old_decision_at_the_newest(memory: Memory) -> None:
    first, second, third = _chain(memory)
    hits = {h.id: h for h in memory.search("hash passwords", lexical=True)}
    assert hits[first].status == hits[second].status == "superseded"
    assert hits[first].superseded_by.id == hits[second].superseded_by.id == third
    assert hits[first].superseded_by.date.isoformat() == "2026-06-05"
    assert hits[third].status == "current" and hits[third].superseded_by is None


def test_search_json_carries_status_and_superseded_by(memory: Memory) -> None:
    first, _, third = _chain(memory)
    memory.log("hashed passwords in the benchmark")
    result = CliRunner().invoke(
        cli, ["--root", str(memory.root), "search", "passwords", "--json", "--lexical"]
    )
    assert result.exit_code == 0, result.output
    rows = {row["id"]: row for row in json.loads(result.stdout)}
    assert rows[first]["status"] == "superseded"
    assert rows[first]["superseded_by"] == {
        "id": third,
        "title": "Tune argon2id passwords hashing memory to 19 MiB",
        "date": "2026-06-05",
    }
    activity = next(row for row in rows.values() if row["kind"] == "activity")
    assert activity["status"] is None and activity["superseded_by"] is None


def test_search_text_output_says_superseded_by_whom_and_when(memory: Memory) -> None:
    first, _, third = _chain(memory)
    result = CliRunner().invoke(cli, ["--root", str(memory.root), "search", "bcrypt", "--lexical"])
    assert (
        f"superseded by Tune argon2id passwords hashing memory to 19 MiB ({third}) on 2026-06-05"
        in result.output
    )


def test_current_leaves_superseded_decisions_out(memory: Memory) -> None:
    first, second, third = _chain(memory)
    ids = [h.id for h in memory.search("hash passwords", lexical=True, current=True)]
    assert ids == [third]
    result = CliRunner().invoke(
        cli, ["--root", str(memory.root), "search", "hash passwords", "--current", "--json"]
    )
    assert [row["id"] for row in json.loads(result.stdout)] == [third]


def test_recalling_a_superseded_decision_brings_the_one_that_holds_first(memory: Memory) -> None:
    first, _, third = _chain(memory)
    recalled = memory.recall("bcrypt", budget=2_000, lexical=True)
    ids = [h.id for h in recalled.hits]
    assert third in ids and ids.index(third) < ids.index(first)
    block = recalled.markdown
    assert f"**Superseded** by Tune argon2id passwords hashing memory to 19 MiB ({third})" in block


def test_when_the_budget_holds_one_decision_it_is_the_current_one(memory: Memory) -> None:
    first, _, third = _chain(memory)
    budget = next(
        b for b in range(20, 2_000, 5) if memory.recall("bcrypt", budget=b, lexical=True).hits
    )
    recalled = memory.recall("bcrypt", budget=budget, lexical=True)
    assert [h.id for h in recalled.hits] == [third]
    assert recalled.left_out >= 1


def test_among_near_ties_a_current_decision_ranks_first(memory: Memory) -> None:
    old = memory.decide("Cache sessions in Redis", why="fast", at="2026-06-01")
    new = memory.decide("Cache sessions in Memcached", why="fast", supersedes=old, at="2026-05-01")
    # the newer-dated entry would win a near tie on date alone; status decides first here
    ids = [h.id for h in memory.search("cache sessions fast", lexical=True)]
    assert ids.index(new) < ids.index(old)


def test_supersession_ignores_cycles_and_other_kinds() -> None:
    from memsite.store.format import parse_entries

    text = (
        "# Decisions\n\n## 2026-06-01 — A\n- **Supersedes:** 2026-06-02-b\n\n"
        "## 2026-06-02 — B\n- **Supersedes:** 2026-06-01-a\n"
    )
    known = supersession(parse_entries(text, "cold/decisions.md").entries)
    assert set(known.successor) == {"2026-06-01-a", "2026-06-02-b"}  # no endless loop


def test_sample_recalls_the_current_hashing_decision_first(sample: Path) -> None:
    memory = Memory(sample)
    recalled = memory.recall("how should we hash passwords?", budget=1_500, lexical=True)
    decisions = [h for h in recalled.hits if h.kind == "decision"]
    assert decisions and decisions[0].status == "current"
    assert "argon2id" in decisions[0].heading
    for hit in decisions:
        if "bcrypt" in hit.heading:
            assert hit.status == "superseded"
            assert f"**Superseded** by {hit.superseded_by.title}" in recalled.markdown


def test_budgets_say_what_they_cut(sample: Path) -> None:
    runner = CliRunner()
    prime = runner.invoke(cli, ["--root", str(sample), "prime", "--budget", "50", "--lexical"])
    assert prime.exit_code == 0
    assert "_Cut to fit 50 tokens:" in prime.output and "would hold it all" in prime.output
    data = json.loads(
        runner.invoke(
            cli, ["--root", str(sample), "prime", "--budget", "50", "--json", "--lexical"]
        ).stdout
    )
    assert "decisions" in data["cut"] and data["needed_budget"] > 50
    recall = runner.invoke(
        cli,
        ["--root", str(sample), "recall", "-", "--budget", "20", "--lexical"],
        input="how should we hash passwords?",
    )
    assert "left out" in recall.output and "would hold them all" in recall.output
    data = json.loads(
        runner.invoke(
            cli,
            ["--root", str(sample), "recall", "-", "--budget", "20", "--json", "--lexical"],
            input="how should we hash passwords?",
        ).stdout
    )
    assert data["left_out"] > 0 and data["needed_budget"] > 20


def test_a_learning_supersedes_an_earlier_learning(memory: Memory) -> None:
    old = memory.learn("Mock datetime in tests", category="testing", why="patching is quick")
    new = memory.learn(
        "Pass the clock instead of mocking datetime", category="testing", supersedes=old
    )
    hits = {h.id: h for h in memory.search("datetime mocking", lexical=True)}
    assert hits[old].status == "superseded" and hits[old].superseded_by.id == new
    assert memory.entry(new).supersedes == old
    result = CliRunner().invoke(
        cli, ["--root", str(memory.root), "learn", "X", "--category", "c", "--supersedes", "nope"]
    )
    assert result.exit_code == 2 and "no learning with that id" in result.output


def test_check_reports_a_learning_that_supersedes_a_decision(memory: Memory) -> None:
    from memsite.store.check import check_tree

    decision = memory.decide("D", why="w")
    with (memory.root / "cold" / "learnings.md").open("a") as handle:
        handle.write(f"\n## 2026-06-08 — L\n- **Category:** c\n- **Supersedes:** {decision}\n")
    messages = [p.message for p in check_tree(memory.root)]
    assert f"supersedes {decision!r}, which is not a learning id" in messages


def test_a_long_lived_memory_recalls_the_successor_written_after_it_opened(
    memory: Memory,
) -> None:
    # the MCP server keeps one Memory: its cached cold chunks must follow new decisions
    old = memory.decide("Cache sessions in memcached", why="it was there", at="2026-06-01")
    assert [h.id for h in memory.recall("memcached", budget=2_000, lexical=True).hits] == [old]
    new = memory.decide("Keep sessions in Redis", why="restarts lost them", supersedes=old)
    recalled = memory.recall("memcached", budget=2_000, lexical=True)
    assert [h.id for h in recalled.hits][:2] == [new, old]
    assert recalled.hits[0].status == "current"
