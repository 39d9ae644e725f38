"""Recall's relevance floor (issue 24): a prompt about nothing in memory recalls nothing, so
the UserPromptSubmit hook adds nothing to it; a question about the memory still recalls its
entry; explicit search keeps returning its best hits."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.search import meaning
from memsite.search.payloads import floor
from tests.conftest import printed_under_hash_seeds

OFF_TOPIC = [
    "thanks!",
    "Rewrite this SQL query with a window function",
    "write a factorial function in python",
    "reverse a linked list in C",
    "write a test",
    "center a div with CSS flexbox",
    # each shares one word with an entry, by chance: no entry holds a second word of it
    "what's the difference between a process and a thread?",
    "merge two sorted arrays",
    "sort a dictionary by value in Python",
    # long requests share a few words with many entries, none of them about the request
    "I have a Python script that reads a CSV file and writes a summary of the rows to stdout."
    " It is slow with big files, about two gigabytes. Can you make it stream the rows instead"
    " of loading everything, and add a progress bar?",
    "Please write a short poem about autumn leaves falling on a quiet lake in the morning.",
]
ON_TOPIC = [
    ("why did we move sessions from MongoDB to Postgres?", "move-the-session-store-from-mongodb"),
    ("what argon2id parameters did we tune?", "tune-argon2id"),
    ("how long do access tokens live?", "access-tokens-live-15-minutes"),
]


@pytest.mark.parametrize("lexical", [True, False])
@pytest.mark.parametrize("prompt", OFF_TOPIC)
def test_an_off_topic_prompt_recalls_nothing(sample: Path, prompt: str, lexical: bool) -> None:
    recalled = Memory(sample).recall(prompt, lexical=lexical)
    assert (recalled.hits, recalled.markdown) == ((), "")


@pytest.mark.parametrize("lexical", [True, False])
@pytest.mark.parametrize(("prompt", "anchor"), ON_TOPIC)
def test_a_question_about_the_memory_still_recalls_its_entry(
    sample: Path, prompt: str, anchor: str, lexical: bool
) -> None:
    recalled = Memory(sample).recall(prompt, lexical=lexical)
    assert any(anchor in hit.anchor for hit in recalled.hits)


# questions that share no rare word with their answer: words alone cannot tell them from a
# request that shares a few of the memory's words, meaning can
PARAPHRASED = [
    (
        "everybody was suddenly signed off at the same moment, what do I check",
        "logged out en masse",
    ),
    ("what happened with the user who got kicked out every time the app opens", "support ticket"),
    ("sign-in takes forever, where should I look", "Login is slow"),
]


@pytest.mark.parametrize(("prompt", "heading"), PARAPHRASED)
def test_ranked_with_meaning_a_paraphrase_still_recalls_its_entry(
    sample: Path, prompt: str, heading: str
) -> None:
    if not meaning.available():
        pytest.skip('needs pip install "memsite[semantic]"')
    recalled = Memory(sample).recall(prompt)
    assert heading in recalled.markdown


def test_a_question_about_the_memory_is_further_from_everyday_requests(sample: Path) -> None:
    """``apart``: how much closer a prompt is to the memory than to everyday requests."""
    if not meaning.available():
        pytest.skip('needs pip install "memsite[semantic]"')
    memory = Memory(sample)
    (question, *_) = memory.search("why are quick retries of a renewal not treated as theft")
    (request, *_) = memory.search("write a rate limiter in Go from scratch")
    assert question.apart is not None and request.apart is not None
    assert question.apart > request.apart + 0.05
    # without meaning there is nothing to measure it by: the floor weighs words alone
    (lexical, *_) = memory.search("write a rate limiter in Go from scratch", lexical=True)
    assert lexical.apart is None and "apart" not in floor.signals([lexical])


def test_without_its_everyday_requests_the_floor_weighs_words_alone(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken install without ``everyday.txt``: recall still answers, by the words."""
    if not meaning.available():
        pytest.skip('needs pip install "memsite[semantic]"')
    from memsite.search.meaning import everyday

    monkeypatch.setattr(everyday, "EVERYDAY", sample / "no-such-file.txt")
    everyday._vectors.cache_clear()
    try:
        memory = Memory(sample)
        (hit, *_) = memory.search("what argon2id parameters did we tune?")
        assert hit.apart is None
        recalled = memory.recall("what argon2id parameters did we tune?")
        assert any("tune-argon2id" in h.anchor for h in recalled.hits)
    finally:
        everyday._vectors.cache_clear()


def test_search_still_returns_hits_for_an_off_topic_query(sample: Path) -> None:
    assert Memory(sample).search("write a test", lexical=True)


@pytest.mark.parametrize("prompt", OFF_TOPIC[:3])
def test_the_hook_prints_nothing_for_an_off_topic_prompt(
    sample: Path, prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)
    event = {
        "session_id": "8f2c5b1e-claude",
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": "/home/you/project",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    done = CliRunner().invoke(cli, ["--root", str(sample), "hook"], input=json.dumps(event))
    assert (done.exit_code, done.stdout) == (0, "")


def test_the_floor_measures_the_second_rare_word_of_the_hit_holding_most() -> None:
    frequencies = {"argon2id": 1, "paramet": 3, "tune": 40, "rotat": 2}
    words = lambda text: set(text.split())  # noqa: E731
    # one hit holds two of the prompt's rare words: the rarer second one is measured
    together = floor.measure(100, frequencies, ["tune", "argon2id paramet tune"], words)
    assert together.second == pytest.approx(math.log(100 / 4) / math.log(100))
    # the same words spread over two hits: no hit holds a second one
    apart = floor.measure(100, frequencies, ["argon2id", "rotat"], words)
    assert apart.second == 0.0
    assert together.rarest == apart.rarest == pytest.approx(math.log(100 / 2) / math.log(100))


@pytest.mark.parametrize("lexical", [False, True])
def test_a_question_in_the_memorys_subject_spelled_otherwise_recalls_dated_cited_entries(
    sample: Path, lexical: bool
) -> None:
    """Issue 36: the sample says "auth", never "authentication", and "decide" once; the
    coverage rule counted those two words against the question and recall said "nothing in
    memory matched" of a memory about little else. Ranked with meaning, a question closer to
    the memory than to everyday requests is judged on the words the memory holds; by words
    alone too, a word the memory never says is read as its abbreviation the memory does say
    ("auth"), so it is held, not unknown."""
    if not lexical and not meaning.available():
        pytest.skip('needs pip install "memsite[semantic]"')
    prompt = "what did we decide about tokens and authentication"
    done = CliRunner().invoke(
        cli, ["--root", str(sample), "recall", *(["--lexical"] if lexical else []), prompt]
    )
    assert done.exit_code == 0, done.output
    assert "nothing in memory matched" not in done.output
    headings = [line for line in done.stdout.splitlines() if line.startswith("### ")]
    sources = [line for line in done.stdout.splitlines() if line.startswith("Source: ")]
    assert len(headings) >= 3 and len(sources) == len(headings)
    assert all(line[4:14].count("-") == 2 for line in headings)  # each dated YYYY-MM-DD
    tokens = [line for line in sources if "token" in line]
    assert tokens and tokens[0].startswith("Source: cold/decisions.md#")
    assert all(line.startswith("Source: cold/") for line in tokens)


def test_a_word_no_document_holds_is_left_to_meaning_only_when_it_agrees(sample: Path) -> None:
    """``spelled``: the share of the words the index holds; it admits a prompt that fails
    the coverage rule only when the prompt is closer to the memory than to everyday
    requests (``apart`` above 0), never by words alone."""
    frequencies = {"decid": 1, "token": 42, "authent": 0}
    words = lambda text: set(text.split())  # noqa: E731
    measured = floor.measure(394, frequencies, ["token refresh", "token jwt"], words)
    assert measured.covered < floor.FLOOR_COVERED <= measured.spelled
    (hit, *_) = Memory(sample).search("access tokens", lexical=True)
    hit = dataclasses.replace(hit, covered=measured.covered, spelled=measured.spelled)
    assert floor.covered_enough([hit])  # the model is asked
    assert not floor.covers(hit)  # words alone: the rule as before
    assert floor.covers(dataclasses.replace(hit, apart=0.03))
    assert not floor.covers(dataclasses.replace(hit, apart=-0.03))
    assert not floor.covers(dataclasses.replace(hit, apart=0.03, spelled=0.2))
    # each setting reads its own share: by words alone FLOOR_COVERED, with meaning
    # MEANING_COVERED (bench/fit_floor.py fits it with the meaning floor's weights)
    lower = dataclasses.replace(hit, covered=floor.MEANING_COVERED - 0.01, spelled=0.0)
    assert not floor.covers(lower) and not floor.covers(dataclasses.replace(lower, apart=-0.03))
    assert floor.covers(lower, share=lower.covered) and floor.covered_enough([lower], lower.covered)
    assert not floor.covered_enough([lower])
    # most of its words never said: a long request from elsewhere, the model never loads
    unsaid = dataclasses.replace(hit, apart=0.03, asked=5, terms=2)
    assert not floor.covers(unsaid) and not floor.covered_enough([unsaid])


def test_the_floor_reads_a_word_the_memory_abbreviates_as_held(sample: Path) -> None:
    """The sample says "auth", never "authentication": the floor counts "authentication" as a
    word the memory holds (as "auth"), not as one no document holds; a word merely beginning
    another ("read" in "readme": more than half of it) stays unknown."""
    memory = Memory(sample)
    (hit, *_) = memory.search("tokens and authentication", lexical=True)
    assert (hit.asked, hit.terms) == (2, 2)
    (hit, *_) = memory.search("tokens readme", lexical=True)
    assert (hit.asked, hit.terms) == (2, 1)


def _with_an_entry_titled(sample: Path, title: str, result: str) -> None:
    """Add an activity entry to the sample's newest day log, ``title`` in its heading only."""
    day = sorted((sample / "warm").glob("*.md"))[-1]
    entry = (
        f"\n### 23:10:00 — {title}\n- **Author:** claude\n\nResult: {result}\n\n"
        "<!-- id: entry-titled-only -->\n"
    )
    day.write_text(day.read_text("utf-8") + entry, "utf-8")


def test_a_word_only_a_title_holds_is_a_word_the_memory_holds(sample: Path) -> None:
    """Issue 36: the floor counted a query word's documents in the body alone, so a word that
    only an entry's heading holds ("export SPOOLER_BASE_DIR so ...", a lesson titled with the
    word a question names it by) was a word no document holds, weighed the rarest possible,
    while the coverage of the hit whose heading holds it counted it too: a share of the
    prompt's held words above 1. Counted in every field, it is held once, like any word."""
    _with_an_entry_titled(
        sample,
        "export SPOOLER_BASE_DIR so child processes get it too",
        "The nightly jobs now find their scratch folder again.",
    )
    (hit, *_) = Memory(sample).search("SPOOLER_BASE_DIR", lexical=True)
    assert "spooler_base_dir" in hit.heading.casefold()
    assert (hit.asked, hit.terms) == (1, 1)
    assert hit.covered == pytest.approx(1.0) and hit.spelled == pytest.approx(1.0)
    assert hit.rarest < 1.0  # one document holds it: ln(N / 2) / ln N, not a word never said
    (hit, *_) = Memory(sample).search("rotate the SPOOLER_BASE_DIR tokens", lexical=True)
    assert hit.spelled <= 1.0 and hit.covered <= 1.0


def test_a_name_inside_a_dotted_path_is_a_word_the_memory_holds(sample: Path) -> None:
    """Issue 36: the tokenizer reads ``workflow.configuration.enable_widget_prefetch`` as one
    word, so a question naming ``enable_widget_prefetch`` found nothing, and the floor
    counted a word the memory holds as one no document holds (or as "enabl", a word it
    begins). The index now holds a dotted name's snake_case parts too; a query's dotted
    name stays whole and still finds it."""
    _with_an_entry_titled(
        sample,
        "turned on widget prefetching for the beta",
        "Set `workflow.configuration.enable_widget_prefetch = true` in the staging config.",
    )
    memory = Memory(sample)
    (hit, *_) = memory.search("enable_widget_prefetch", lexical=True)
    assert hit.heading.endswith("turned on widget prefetching for the beta")
    assert (hit.asked, hit.terms) == (1, 1) and hit.covered == pytest.approx(1.0)
    (hit, *_) = memory.search("workflow.configuration.enable_widget_prefetch", lexical=True)
    assert hit.heading.endswith("turned on widget prefetching for the beta")
    assert (hit.asked, hit.terms) == (1, 1)


def test_a_hit_is_measured_alike_in_every_process() -> None:
    """The floor's shares are the same whatever order Python's string hashing gives a set of
    words: a hit holding every word of the prompt covers exactly all of it, in every process
    (summed in set order, one process measured 1.0 and another 0.9999999999999999, and a
    prompt at a rule's edge was recalled or not by chance)."""
    code = (
        "from memsite.search.payloads import floor\n"
        "freq = {f'word{i}': i for i in range(1, 16)}\n"
        "m = floor.measure(394, freq, [' '.join(freq)], lambda t: set(t.split()))\n"
        "print(repr(m.covered), repr(m.spelled))\n"
    )
    assert printed_under_hash_seeds(code) == {"1.0 1.0"}
