"""Memory that notices (issue 27): a new decision names the current decisions it may replace,
a repeated lesson names (and records) the one it repeats, the learnings page and
``search --recurring`` show the lessons that keep coming back, prime leads with them, and
``check --overlaps`` warns of two current answers to one question."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.search import notices
from memsite.store.format import parse_entries, render_entry
from memsite.store.model import Entry

NOW = dt.datetime(2026, 12, 2, 9, 30)
ARGON2_TUNED = "2026-11-13-tune-argon2id-to-m-19-mib-t-2-p-1"
ARGON2_FIRST = "2026-11-09-switch-password-hashing-to-argon2id-instead-of-bcrypt"
BCRYPT = "2026-11-03-hash-new-passwords-with-bcrypt-at-cost-12"
TRUNCATES = "2026-11-11-bcrypt-silently-truncates-passwords-longer-than-72-bytes"
TRUNCATES_TITLE = "bcrypt silently truncates passwords longer than 72 bytes"
KEYS_30 = "2026-11-17-rotate-jwt-signing-keys-every-30-days-automatically"
KEYS_90 = "2026-11-11-rotate-jwt-signing-keys-every-90-days-with-overlapping-key"
SCRYPT = ("Hash passwords with scrypt", "scrypt is in hashlib, so argon2-cffi can go")
UNRELATED = ("Pick the blue theme for the admin dashboard", "The designers asked for it.")
REPEAT = "bcrypt cuts passwords off at 72 bytes"
KILL_SWITCH = "2026-11-20-keep-a-kill-switch-to-the-legacy-login-path-for-two-weeks"
LEGACY_GONE = "2026-11-27-delete-the-legacy-auth-v1-login-code-once-auth-v2-has-run"


def memory_of(root: Path) -> Memory:
    return Memory(root, author="", clock=lambda: NOW)


def run(root: Path, *args: str):
    return CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)


def status_of(root: Path) -> dict[str, str]:
    """The status of every decision and learning of the tree, by id."""
    from memsite.search.supersession import supersession

    entries = memory_of(root).entries()
    held = supersession(entries)
    return {e.id: held.status(e.id, e.kind) or "" for e in entries}


# -- decisions ---------------------------------------------------------------------------


def test_a_hashing_decision_on_passwords_py_names_the_current_argon2id_decision(
    sample: Path,
) -> None:
    written = memory_of(sample).decide(*SCRYPT, paths=["services/auth/passwords.py"])
    named = {notice.id: notice for notice in written.may_supersede}
    assert ARGON2_TUNED in named
    assert named[ARGON2_TUNED].why == "governs services/auth/passwords.py"
    # never one that a later decision already replaced
    assert ARGON2_FIRST not in named and BCRYPT not in named
    states = status_of(sample)
    assert all(states[entry_id] == "current" for entry_id in named)
    # the id is still the id the API always returned, and the decision is written
    assert written == f"{NOW.date().isoformat()}-hash-passwords-with-scrypt"
    assert memory_of(sample).entry(written).title == SCRYPT[0]


def test_decide_prints_one_stderr_line_per_candidate_and_the_id_on_stdout(sample: Path) -> None:
    done = run(
        sample, "decide", SCRYPT[0], "--why", SCRYPT[1], "--path", "services/auth/passwords.py"
    )
    assert done.exit_code == 0
    assert done.stdout.strip().endswith("-hash-passwords-with-scrypt")
    line = (
        f"may replace {ARGON2_TUNED}: Tune argon2id to m=19 MiB, t=2, p=1 (2026-11-13); "
        f"pass --supersedes {ARGON2_TUNED} if it does"
    )
    assert line in done.stderr.splitlines()
    assert ARGON2_FIRST not in done.stderr and BCRYPT not in done.stderr


def test_decide_json_carries_may_supersede(sample: Path) -> None:
    done = run(
        sample, "decide", SCRYPT[0], "--why", SCRYPT[1], "--path", "services/auth/passwords.py",
        "--json",
    )  # fmt: skip
    data = json.loads(done.stdout)
    assert data["id"].endswith("-hash-passwords-with-scrypt")
    first = data["may_supersede"][0]
    assert first == {
        "id": ARGON2_TUNED,
        "title": "Tune argon2id to m=19 MiB, t=2, p=1",
        "date": "2026-11-13",
        "why": "governs services/auth/passwords.py",
    }


def test_a_close_topic_without_paths_names_the_current_decision_not_the_replaced_one(
    sample: Path,
) -> None:
    written = memory_of(sample).decide(
        "Rotate JWT signing keys every 14 days",
        "A shorter window limits what a leaked signing key can sign; the job makes it cheap.",
    )
    named = [notice.id for notice in written.may_supersede]
    assert named[0] == KEYS_30
    assert KEYS_90 not in named
    assert written.may_supersede[0].why.startswith("close topic (")


def test_a_decision_that_names_what_it_supersedes_is_not_told_about_it(sample: Path) -> None:
    written = memory_of(sample).decide(
        *SCRYPT, supersedes=ARGON2_TUNED, paths=["services/auth/passwords.py"]
    )
    assert ARGON2_TUNED not in [notice.id for notice in written.may_supersede]
    done = run(
        sample, "decide", "Hash passwords with yescrypt", "--why", SCRYPT[1],
        "--path", "services/auth/passwords.py", "--supersedes", str(written),
    )  # fmt: skip
    assert done.exit_code == 0
    assert str(written) not in done.stderr


def test_an_unrelated_decision_names_nothing(sample: Path) -> None:
    assert memory_of(sample).decide(*UNRELATED).may_supersede == ()
    done = run(sample, "decide", "Record every deploy in the team calendar", "--why", "Asked.")
    assert done.exit_code == 0
    assert done.stderr == ""


def test_a_failing_notice_is_one_line_and_the_decision_is_still_written(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> list[notices.Notice]:
        raise OSError("disk on fire")

    monkeypatch.setattr(notices, "may_supersede", broken)
    heard: list[str] = []
    memory = Memory(sample, author="", clock=lambda: NOW, notify=heard.append)
    written = memory.decide(*SCRYPT, paths=["services/auth/passwords.py"])
    assert written.may_supersede == ()
    assert memory.entry(written).title == SCRYPT[0]
    assert heard == [
        f"decision {written} is written; looking for what it may replace failed: disk on fire"
    ]


# -- learnings ---------------------------------------------------------------------------


def test_a_repeated_lesson_names_and_records_the_one_it_repeats(sample: Path) -> None:
    done = run(sample, "learn", REPEAT, "--category", "security")
    assert done.exit_code == 0
    assert done.stderr.splitlines() == [
        f"repeats {TRUNCATES}: bcrypt silently truncates passwords longer than 72 bytes "
        "(2026-11-11)"
    ]
    new_id = done.stdout.strip()
    entry = memory_of(sample).entry(new_id)
    assert entry.repeats == TRUNCATES
    assert f"- **Repeats:** {TRUNCATES}\n" in (sample / "cold/learnings.md").read_text("utf-8")
    assert run(sample, "check").exit_code == 0


def test_learn_json_carries_repeats(sample: Path) -> None:
    data = json.loads(run(sample, "learn", REPEAT, "--category", "security", "--json").stdout)
    assert data["repeats"]["id"] == TRUNCATES
    other = run(sample, "learn", "Stale feature flags need an owner", "--category", "process")
    assert other.stderr == ""
    vite = run(sample, "learn", "Vite caches env files", "--category", "tooling", "--json")
    data = json.loads(vite.stdout)
    assert data["repeats"] is None
    assert "repeats" not in memory_of(sample).entry(data["id"]).fields


def test_a_learning_that_corrects_another_is_not_called_a_repeat(sample: Path) -> None:
    written = memory_of(sample).learn(REPEAT, "security", supersedes=TRUNCATES)
    assert written.repeats is None
    assert memory_of(sample).entry(written).repeats is None


def test_the_repeats_field_round_trips() -> None:
    entry = Entry(
        "2026-12-02-again", "learning", "cold", "Again", dt.date(2026, 12, 2),
        fields={"category": "security", "repeats": TRUNCATES},
    )  # fmt: skip
    text = "# Learnings\n\n" + render_entry(entry)
    assert f"- **Repeats:** {TRUNCATES}" in text
    (back,) = parse_entries(text, "cold/learnings.md").entries
    assert (back.id, back.fields, back.repeats) == (entry.id, entry.fields, TRUNCATES)


def test_check_reports_a_repeats_that_names_no_learning(sample: Path) -> None:
    path = sample / "cold/learnings.md"
    path.write_text(
        path.read_text("utf-8")
        + "\n## 2026-12-02 — Again\n- **Category:** x\n- **Repeats:** no-such-id\n",
        "utf-8",
    )
    done = run(sample, "check")
    assert done.exit_code == 1
    assert "repeats 'no-such-id', which is not another learning id" in done.stdout


# -- the ledger --------------------------------------------------------------------------


def test_search_recurring_groups_the_learnings_that_repeat(sample: Path) -> None:
    assert run(sample, "search", "--recurring").stderr == "no lesson was recorded twice\n"
    assert json.loads(run(sample, "search", "--recurring", "--json").stdout) == []
    # dated, so the expected line does not move with the clock
    at = ["--at", "2026-12-02T10:00:00"]
    new_id = run(sample, "learn", REPEAT, "--category", "security", *at).stdout.strip()
    done = run(sample, "search", "--recurring")
    assert done.stdout.splitlines()[0] == f"2× {REPEAT} (2026-12-02, 2026-11-11)"
    assert f"cold/learnings.md#{new_id}" in done.stdout
    assert f"cold/learnings.md#{TRUNCATES}" in done.stdout
    (group,) = json.loads(run(sample, "search", "--recurring", "--json").stdout)
    assert group["count"] == 2
    assert [o["id"] for o in group["occurrences"]] == [new_id, TRUNCATES]


def test_search_without_a_query_or_recurring_is_a_usage_error(sample: Path) -> None:
    done = run(sample, "search")
    assert done.exit_code == 2
    assert "QUERY" in done.stderr


def test_the_learnings_page_opens_with_the_lessons_that_keep_coming_back(sample: Path) -> None:
    from memsite.site.pages import build_site

    before = build_site(sample, now=NOW, related=False).page("learnings/index.md").markdown
    assert "keep coming back" not in before
    new_id = memory_of(sample).learn(REPEAT, "security")
    page = build_site(sample, now=NOW, related=False).page("learnings/index.md").markdown
    first = page.split("\n## ")[1]
    assert first.startswith("Lessons that keep coming back")
    assert f"**{REPEAT}**: recorded 2 times, last 2 Dec 2026" in first
    assert f"(security.md#{new_id})" in first and f"(security.md#{TRUNCATES})" in first


def test_prime_leads_with_the_recurring_lesson_that_matches_the_task(sample: Path) -> None:
    task = "passwords argon2 hashing speed"

    def learnings() -> list[str]:
        text = memory_of(sample).prime(task, lexical=True).markdown
        section = text.split("## Relevant learnings\n\n", 1)[1].split("\n## ", 1)[0]
        return [line for line in section.splitlines() if line.startswith(("### ", "_Keeps"))]

    before = learnings()
    assert before[0] == "### 2026-11-10 · Learnings › Use a cheap argon2 profile in tests"
    assert "### 2026-11-11 · Learnings › " + TRUNCATES_TITLE in before[1:]
    assert not any(line.startswith("_Keeps") for line in before)
    memory_of(sample).learn(REPEAT, "security")
    after = learnings()
    assert after[0] == "_Keeps coming back: recorded 2 times._"
    assert "bcrypt" in after[1]
    cheap = after.index("### 2026-11-10 · Learnings › Use a cheap argon2 profile in tests")
    assert after[:cheap].count("_Keeps coming back: recorded 2 times._") == 2


# -- overlaps ----------------------------------------------------------------------------


def test_check_overlaps_warns_of_two_current_answers_to_one_question(sample: Path) -> None:
    plain = run(sample, "check")
    assert "look like answers to one question" not in plain.stdout
    done = run(sample, "check", "--overlaps")
    assert done.exit_code == 0
    warned = [line for line in done.stdout.splitlines() if "one question" in line]
    assert len(warned) == 1
    assert KILL_SWITCH in warned[0] and LEGACY_GONE in warned[0]
    assert "both govern app/auth/legacy_login.py" in warned[0]
    assert ": warning: " in warned[0]
    memory_of(sample).decide(
        "Hash passwords with scrypt instead of argon2id",
        "scrypt is in hashlib, so the argon2 binding can go; n=2**15 keeps a login hash near "
        "45 ms on our pods, as argon2id did.",
        paths=["services/auth/passwords.py"],
    )
    again = run(sample, "check", "--overlaps")
    assert any(ARGON2_TUNED in line and "scrypt" in line for line in again.stdout.splitlines())
    assert run(sample, "check", "--overlaps", "--strict").exit_code == 1


# -- MCP ---------------------------------------------------------------------------------


def test_mcp_decide_and_learn_results_carry_what_was_noticed(sample: Path) -> None:
    pytest.importorskip("mcp")
    from memsite.agents.tools import MemoryTools

    tools = MemoryTools(memory_of(sample))
    decided = tools.decide(title=SCRYPT[0], why=SCRYPT[1], paths=["services/auth/passwords.py"])
    assert decided["may_supersede"][0]["id"] == ARGON2_TUNED
    # a tool's parameter, not a command-line flag
    assert any(f"pass supersedes={ARGON2_TUNED} if it does" in n for n in decided["notices"])
    learned = tools.learn(title=REPEAT, category="security")
    assert learned["repeats"]["id"] == TRUNCATES
    assert learned["notices"][-1].startswith(f"repeats {TRUNCATES}: ")


def test_the_mcp_server_hands_the_notices_to_the_agent(sample: Path, tmp_path: Path) -> None:
    """Through ``memsite mcp`` itself: the tools' output schemas carry the new keys."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memsite", "--root", str(sample), "mcp"],
        env={"MEMSITE_CACHE": str(tmp_path / "cache")},
    )

    async def scenario() -> tuple[dict, dict]:
        with (tmp_path / "server.log").open("a") as errlog:
            async with (
                stdio_client(server, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                decided = await session.call_tool(
                    "decide",
                    {
                        "title": SCRYPT[0],
                        "why": SCRYPT[1],
                        "paths": ["services/auth/passwords.py"],
                    },
                )
                learned = await session.call_tool(
                    "learn", {"title": REPEAT, "category": "security"}
                )
                return decided.structured_content, learned.structured_content

    decided, learned = anyio.run(scenario)
    assert decided["may_supersede"][0]["id"] == ARGON2_TUNED
    assert f"pass supersedes={ARGON2_TUNED} if it does" in decided["notices"][0]
    assert learned["repeats"]["id"] == TRUNCATES
    assert "Traceback" not in (tmp_path / "server.log").read_text()
