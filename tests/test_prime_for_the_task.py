"""Issue 36 (part B): the session start primes on the task's decisions, not the newest ones;
a notice needs more than one shared word and a reworded lesson is named as a repeat; ``why``
keeps a path's governing decision before anything that only mentions the path."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memsite import Memory
from memsite.store.tree import init_tree
from tests.conftest import printed_under_hash_seeds

SAMPLE = Path(__file__).resolve().parent.parent / "memory"
NOW = dt.datetime(2026, 12, 2, 9, 30)
ARGON2 = "Tune argon2id to m=19 MiB, t=2, p=1"
ARGON2_WHY = "- **Why:** At 64 MiB a burst of 40 logins needs 2.5 GiB"


def memsite(root: Path, *args: str, env: dict[str, str], stdin: str = "") -> str:
    """Run ``memsite --root ROOT ARGS`` as its own process; its stdout (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(root), *args],
        input=stdin, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def decisions_of(context: str) -> list[str]:
    """The titles of the decisions a prime payload lists, in order."""
    section = context.split("## Relevant decisions", 1)[1].split("\n## ", 1)[0]
    return [line.split(" › ", 1)[-1] for line in section.splitlines() if line.startswith("### ")]


# -- prime for the task ------------------------------------------------------------------


def test_session_start_for_a_hashing_task_leads_with_the_argon2id_decision(
    tmp_path: Path,
) -> None:
    """A fresh clone of the sample (no index), a session started for "Harden password
    hashing": SessionStart lists the current argon2id decision, its Why with it, before any
    other decision, under Claude Code's 10,000 characters; and again once the index is
    built (before issue 36 it listed the five newest decisions and left it out, and with the
    index it came fourth)."""
    from memsite.search.index.place import is_built

    root = tmp_path / "memory"
    shutil.copytree(SAMPLE, root)
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_CACHE"] = str(cache)
    memsite(root, "session", "start", "Harden password hashing", env=env)
    start = json.dumps(
        {"session_id": "c1", "transcript_path": "/nonexistent/t.jsonl", "cwd": str(tmp_path),
         "hook_event_name": "SessionStart", "source": "startup"}
    )  # fmt: skip
    for built in (False, True):
        assert is_built(root, cache) == built
        out = memsite(root, "hook", env=env, stdin=start)
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert len(context) <= 10_000
        assert decisions_of(context)[0] == ARGON2, decisions_of(context)
        section = context.split("## Relevant decisions", 1)[1]
        assert section.index(ARGON2_WHY) < section.index("\n### ", 5)
        deadline = time.monotonic() + 90  # the first SessionStart builds it behind
        while not is_built(root, cache) and time.monotonic() < deadline:
            time.sleep(0.2)


# -- why ---------------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


def test_why_with_a_small_budget_keeps_the_folders_decision_before_a_mention(
    tmp_path: Path,
) -> None:
    """``why src/shop/discounts.py --budget 200``: the decision governing ``src/shop/``
    comes (shortened to its Why when whole it does not fit), and a progress line that only
    mentions the file never comes before it (before, the decision was left out and the
    progress line kept)."""
    project = tmp_path / "project"
    (project / "src" / "shop").mkdir(parents=True)
    (project / "src" / "shop" / "discounts.py").write_text("RATE = 0.1\n")
    git(project, "init", "-q")
    root = project / "memory"
    init_tree(root)
    memory = Memory(root, author="", clock=lambda: NOW)
    memory.decide(
        "Compute shop prices in integer cents",
        why="Float arithmetic lost a cent on one refund in forty during the October audit; "
        "integer cents add, multiply and round the same on every machine, and the payment "
        "provider takes cents anyway, so nothing converts at the edge. Discounts, taxes and "
        "shipping are all computed in cents and rounded half-even once, at checkout. The "
        "reports divide by 100 only when they print, and the exports to the accountants "
        "carry cents with the currency's ISO code beside them, as their tool expects.",
        paths=["src/shop/"],
        tags=["money", "shop"],
        risk="Every new price field must be an int; a float slipping in fails only at runtime.",
    )
    memory.start_session("Spring discount codes")
    memory.progress("Touched src/shop/discounts.py for the spring codes")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_CACHE"] = str(tmp_path / "cache")
    found = json.loads(
        memsite(root, "why", "src/shop/discounts.py", "--budget", "200", "--json", env=env)
    )
    matches = [item["match"] for item in found["items"]]
    assert matches and matches[0] == "folder", matches
    assert "Compute shop prices in integer cents" in found["markdown"]
    assert "- **Why:** Float arithmetic lost a cent" in found["markdown"]
    assert found["tokens"] <= 200
    # with room for all, the decision comes whole, then the progress line
    wide = json.loads(memsite(root, "why", "src/shop/discounts.py", "--json", env=env))
    assert [item["match"] for item in wide["items"]] == ["folder", "mentions"]
    assert "- **Risk:** Every new price field" in wide["markdown"]


# -- notices -----------------------------------------------------------------------------


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    root = tmp_path / "sample" / "memory"
    shutil.copytree(SAMPLE, root)
    return root


def test_a_decision_sharing_one_word_gets_no_notice(sample: Path) -> None:
    """In the sample, where "admin" is a rare word: "Use Tailwind for the admin UI" is not
    told it may replace "Hash admin passwords with scrypt too" (before: close topic 0.13),
    and a decision on the same question still is."""
    memory = Memory(sample, author="", clock=lambda: NOW)
    scrypt = memory.decide("Hash admin passwords with scrypt too", "Admins can read every order.")
    tailwind = memory.decide("Use Tailwind for the admin UI", "Utility classes, no design system.")
    assert [n.id for n in tailwind.may_supersede] == []
    again = memory.decide("Hash admin passwords with argon2id", "Admin passwords need it most.")
    assert scrypt in [n.id for n in again.may_supersede]


def test_a_reworded_lesson_with_the_same_why_is_named_as_a_repeat(tmp_path: Path) -> None:
    """An hour-old memory of two learnings: "Floats lose cents when multiplied", its why
    said again word for word, repeats "Float multiply loses cents" (before: 0.20 against the
    bar of 0.35: in so few learnings every shared word weighed as a common one); ``learn`` says so on stderr and
    records ``Repeats``. A lesson that shares one word repeats nothing."""
    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="", clock=lambda: NOW)
    why = "0.1 * 3 gave 0.30000000000000004 and a refund was a cent short."
    first = memory.learn("Float multiply loses cents", why=why, category="bug")
    memory.learn("Use Decimal for money", why="Floats drift.", category="bug")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_CACHE"] = str(tmp_path / "cache")
    done = subprocess.run(
        [sys.executable, "-m", "memsite", "--root", str(root), "learn",
         "Floats lose cents when multiplied", "--why", why, "--category", "bug"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"repeats {first}" in done.stderr, done.stderr
    written = Memory(root).entry(done.stdout.strip())
    assert written.repeats == first
    other = memory.learn("Cents columns need a CHECK", why="A refund went negative.", category="db")
    assert other.repeats is None


def test_prime_without_an_index_ranks_the_decisions_governing_the_sessions_files_first(
    sample: Path,
) -> None:
    """A session whose task shares no word with memory but which changed
    ``services/auth/passwords.py``: prime (no index) leads its decisions with the one that
    governs that file (before: the newest ones, the argon2id decision left out)."""
    memory = Memory(sample, author="", clock=lambda: NOW)
    memory.start_session("Tidy the module before the release")
    memory.progress("Renamed the helper", files=["services/auth/passwords.py"])
    primed = memory.prime(budget=2400, lexical=True, use_index=False)
    assert decisions_of(primed.markdown)[0] == ARGON2, decisions_of(primed.markdown)


def test_the_budget_is_shared_alike_in_every_process() -> None:
    """The sections' caps are the same whatever order Python's string hashing gives the set
    of sections still open: summed in that order, the shares of 3,000 tokens came to one
    cap a token apart between processes (with the real shares, every multiple of 3)."""
    code = (
        "from memsite.search.payloads.primed import PRIME_SHARES, share_out\n"
        "shares = dict(PRIME_SHARES[1:])\n"
        "print(share_out(dict.fromkeys(shares, 10_000), shares, 3_000))\n"
    )
    assert len(printed_under_hash_seeds(code)) == 1
