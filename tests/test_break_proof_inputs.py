"""Break-proof, round 3 (issue 22): what enters memsite from outside is checked where it enters.

- A query is text, not damage: a lone surrogate, a NUL or a control character in a query,
  prompt, task or id is cleaned before any tokenizer sees it, and only what reading damaged
  index files raises makes the index rebuild.
- A summary is cleaned, never lost: a summarizer's answer and a hook's fields holding line
  separators, NEL, C1 controls or terminal codes are written cleaned, and an answer that still
  cannot be written gives the built-in summary with a note.
- Numbers are checked where they enter: every numeric option, API parameter and MCP argument
  refuses nan, inf, 1e308, 10**400, negatives and zeros out of range in one line.
"""

from __future__ import annotations

import contextlib
import json
import math
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memsite import BadNumber, Memory, NotFound
from memsite.cli import cli
from memsite.store.session import checkpoints
from memsite.store.session.summaries import MAX_SUMMARY

POSTGRES = "Adopt Postgres for sessions"


@pytest.fixture
def indexed(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> Memory:
    """A tree with two entries, its index and vectors built, and a live session."""
    for name in ("MEMSITE_CACHE", "MEMSITE_ROOT", "MEMSITE_AUTHOR"):
        monkeypatch.delenv(name, raising=False)
    memory.decide(POSTGRES, why="MongoDB lost sessions in a failover.", at="2026-06-01T10:00:00")
    memory.learn("Whoosh needs a writer timeout", category="search", at="2026-06-02T10:00:00")
    memory.start_session("Refactor the auth module", "s1")
    memory.search("postgres sessions")  # builds the index and, with the extra, the vectors
    memory.search("postgres sessions", lexical=True)
    memory.notices.clear()
    return memory


def index_files(memory: Memory) -> dict[str, tuple[int, ...]]:
    """The index's folders by inode, its Whoosh files and vectors by inode, mtime and size: a
    rebuild swaps in a new folder of new files. (``state.json`` is left out: a search that
    finds a file touched a moment ago checks it again and rewrites the state, no rebuild.)"""
    cache = memory.root.parent / ".memsite"
    found: dict[str, tuple[int, ...]] = {}
    for path in sorted(cache.rglob("*")):
        stat, name = path.stat(), path.relative_to(cache).as_posix()
        if path.is_dir():
            found[name] = (stat.st_ino,)
        elif path.suffix in (".toc", ".seg", ".npz"):
            found[name] = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    return found


def cli_run(root: Path, *args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(cli, ["--root", str(root), *args], input=input)


def hook_event(name: str, **fields: Any) -> str:
    base = {
        "session_id": "8f2c5b1e",
        "transcript_path": "/none",
        "cwd": "/",
        "hook_event_name": name,
    }
    return json.dumps({**base, **fields})  # lone surrogates go out as \\udXXX escapes


# -- 1. a query is text, not damage ---------------------------------------------------------

QUERIES = {
    "several surrogates": "postgres \udcff\udcfe sessions",
    "high half of an emoji": "postgres \ud83d sessions",
    "low half of an emoji": "\ude00 postgres sessions",
    "a pair split in two code points": "postgres \ud83d\ude00 sessions",
    "a NUL": "postgres\x00 sessions",
    "controls and a terminal code": "postgres\x1b[31m\x07 sessions\x7f\x85",
    "separators": "postgres\u2028sessions\u2029",
    "a huge query": "postgres " + "sessions failover " * 60_000,
}


@pytest.mark.parametrize("query", QUERIES.values(), ids=QUERIES.keys())
def test_a_query_is_cleaned_and_never_rebuilds_the_index(indexed: Memory, query: str) -> None:
    before = index_files(indexed)
    for lexical in (False, True):
        hits = indexed.search(query, lexical=lexical)
        assert hits and POSTGRES in hits[0].heading
    assert indexed.notices == []
    assert index_files(indexed) == before


ENTRY_POINTS = {
    "recall": lambda m, q: m.recall(q),
    "prime": lambda m, q: m.prime(q),
    "why": lambda m, q: m.why(f"auth/{q}.py"),
    "related": lambda m, q: m.related(q),
    "budget": lambda m, q: m.budget(task=q),
}


@pytest.mark.parametrize("call", ENTRY_POINTS.values(), ids=ENTRY_POINTS.keys())
def test_every_entry_point_of_a_query_takes_a_lone_surrogate(indexed: Memory, call) -> None:
    before = index_files(indexed)
    with contextlib.suppress(NotFound):  # related: no entry has that id, which is the answer
        call(indexed, "postgres \udcff\ud83d")
    assert indexed.notices == []
    assert index_files(indexed) == before


def test_an_evaluation_file_with_a_lone_surrogate_runs(indexed: Memory, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"q": "postgres \udcff", "relevant": ["cold/decisions.md"]}))
    before = index_files(indexed)
    assert indexed.evaluate(queries, k=5).recall == 1.0
    assert (indexed.notices, index_files(indexed)) == ([], before)


@pytest.mark.parametrize("command", ["search", "recall"])
def test_a_stray_byte_on_the_command_line_is_searched_not_rebuilt(
    indexed: Memory, command: str
) -> None:
    before = index_files(indexed)
    argv = [sys.executable, "-m", "memsite", "--root", str(indexed.root), command]
    done = subprocess.run([*argv, b"postgres \xff\xfe sessions"], capture_output=True)
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, stderr
    assert "Traceback" not in stderr and "rebuilding" not in stderr
    assert POSTGRES.encode() in done.stdout
    assert index_files(indexed) == before


def test_the_prompt_hook_recalls_a_prompt_with_half_an_emoji(indexed: Memory) -> None:
    before = index_files(indexed)
    done = cli_run(
        indexed.root, "hook", input=hook_event("UserPromptSubmit", prompt="postgres \ud83d?")
    )
    assert done.exit_code == 0
    assert done.stderr == "", done.stderr  # no error, no late answer, no rebuild notice
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert POSTGRES in context
    assert index_files(indexed) == before


def test_an_mcp_query_with_a_lone_surrogate_is_answered(indexed: Memory) -> None:
    call = mcp_caller(indexed)
    before = index_files(indexed)
    for tool, arguments in [
        ("search", {"query": "postgres \udcff"}),
        ("recall", {"prompt": "\ud83d postgres"}),
    ]:
        result = call(tool, arguments)
        assert not result.is_error and POSTGRES in result.content[0].text
    assert index_files(indexed) == before


def test_an_error_that_is_not_damage_is_raised_and_the_index_left_alone(
    indexed: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memsite.search.index import search as query_time

    def broken(*args: Any, **kwargs: Any) -> None:
        raise TypeError("a bug in the question, not in the files")

    before = index_files(indexed)
    monkeypatch.setattr(query_time, "search", broken)
    with pytest.raises(TypeError, match="a bug in the question"):
        indexed.search("postgres")
    assert indexed.notices == []
    assert index_files(indexed) == before


def test_damage_is_told_by_the_module_it_is_raised_in() -> None:
    import zlib

    from memsite.search.index.damage import is_damage

    def raised_in(module: str, error: Exception) -> Exception:
        try:
            exec("raise error", {"__name__": module, "error": error})
        except Exception as err:  # noqa: BLE001 - the error as raised there
            return err
        raise AssertionError("nothing raised")

    assert is_damage(raised_in("whoosh.codec.whoosh3", IndexError("offset")))
    assert is_damage(raised_in("memsite.search.index.postings", TypeError("block")))
    assert is_damage(raised_in("anywhere", zlib.error("bad data")))
    assert is_damage(raised_in("anywhere", EOFError()))
    assert not is_damage(raised_in("memsite.search.meaning.model", TypeError("str")))
    assert not is_damage(
        raised_in("whoosh.fields", UnicodeEncodeError("utf-8", "\udcff", 0, 1, ""))
    )


# -- 2. a summary is cleaned, never lost ----------------------------------------------------

SUMMARIES = {
    "U+2028": ("Line one\u2028line two", "Line one\nline two"),
    "U+2029": ("Para one\u2029para two", "Para one\npara two"),
    "NEL": ("Step one\x85step two", "Step one\nstep two"),
    "C1 controls": ("Done\x80 and\x9f tested", "Done and tested"),
    "terminal colours": ("\x1b[1;31mRed\x1b[0m text", "Red text"),
    "NUL, DEL, BEL": ("a\x00b\x7fc\x07d", "abcd"),
    "VT and FF": ("a\x0bb\x0cc", "a\nb\nc"),
    "CR and CRLF": ("a\r\nb\rc", "a\nb\nc"),
}


def printing(data: bytes, *, stream: str = "stdout", code: int = 0) -> str:
    """A summarizer command that prints ``data`` and exits ``code``."""
    script = (
        f"import sys; sys.{stream}.buffer.write(bytes.fromhex('{data.hex()}')); sys.exit({code})"
    )
    return shlex.join([sys.executable, "-c", script])


@pytest.mark.parametrize(("given", "kept"), SUMMARIES.values(), ids=SUMMARIES.keys())
def test_a_summarizer_answer_with_separators_and_controls_is_cleaned_and_kept(
    indexed: Memory, given: str, kept: str
) -> None:
    done = cli_run(indexed.root, "checkpoint", "--summarizer", printing(given.encode()))
    assert done.exit_code == 0, done.output
    latest = indexed.latest_checkpoint()
    assert (latest.summary, latest.note) == (kept, "")


def test_a_summarizer_answer_that_is_not_utf8_is_kept_with_replacement(indexed: Memory) -> None:
    done = cli_run(indexed.root, "checkpoint", "--summarizer", printing(b"caf\xff done"))
    assert done.exit_code == 0, done.output
    assert indexed.latest_checkpoint().summary == "caf\ufffd done"


def test_a_failing_summarizer_with_a_coloured_error_still_leaves_a_checkpoint(
    indexed: Memory,
) -> None:
    error = "\x1b[31mError:\x1b[0m quota\u2028exceeded\x85".encode()
    command = printing(error, stream="stderr", code=3)
    done = cli_run(indexed.root, "checkpoint", "--summarizer", command)
    assert done.exit_code == 0, done.output
    latest = indexed.latest_checkpoint()
    assert latest.summary.startswith("Task: Refactor the auth module")
    assert "exited 3: Error: quota exceeded" in latest.note
    assert latest.note.endswith("the built-in summary is used")


def test_a_summary_that_still_cannot_be_written_falls_back_to_the_built_in_one(
    indexed: Memory,
) -> None:
    from memsite import InvalidInput

    def strict(text: str) -> str:
        if "REFUSED" in text:
            raise InvalidInput("summary contains something memsite cannot store")
        return text

    summarize = checkpoints.summarizer(printing(b"REFUSED answer"), 10.0, strict)
    summary, note = summarize(indexed.session(), [])
    assert summary.startswith("Task: Refactor the auth module")
    assert "cannot be written" in note and note.endswith("the built-in summary is used")


HOOK_SUMMARIES = {
    **{name: pair for name, pair in SUMMARIES.items() if name != "CR and CRLF"},
    "half an emoji": ("Done \ud83d and tested", "Done \ufffd and tested"),
    "a pair as two code points": ("Done \ud83d\ude00", "Done \U0001f600"),
}


@pytest.mark.parametrize(("given", "kept"), HOOK_SUMMARIES.values(), ids=HOOK_SUMMARIES.keys())
def test_a_compact_summary_from_the_hook_is_cleaned_and_written(
    indexed: Memory, given: str, kept: str
) -> None:
    done = cli_run(
        indexed.root, "hook", input=hook_event("PostCompact", trigger="auto", compact_summary=given)
    )
    assert (done.exit_code, done.stdout, done.stderr) == (0, "", "")
    assert indexed.latest_checkpoint().summary == kept


def test_a_huge_compact_summary_is_cut_not_lost(indexed: Memory) -> None:
    given = "We moved token refresh. " * 90_000  # 2 MB, twice what a body may hold
    done = cli_run(indexed.root, "hook", input=hook_event("PostCompact", compact_summary=given))
    assert (done.exit_code, done.stderr) == (0, "")
    summary = indexed.latest_checkpoint().summary
    assert summary.startswith("We moved token refresh.") and len(summary) <= MAX_SUMMARY


def test_a_session_end_reason_with_a_separator_is_written(indexed: Memory) -> None:
    done = cli_run(indexed.root, "hook", input=hook_event("SessionEnd", reason="exit\u2028\x00now"))
    assert (done.exit_code, done.stderr) == (0, "")


# -- 3. numbers are checked where they enter --------------------------------------------------

HUGE = "1" + "0" * 400  # 10**400
NOT_FINITE = ["nan", "inf", "-inf", "1e308", HUGE, "-1"]
# (the command before the option, the option, the values it refuses besides NOT_FINITE)
OPTIONS = [
    (["search", "x"], "--limit", ["0"]),
    (["recall", "x"], "--budget", ["0"]),
    (["recall", "x"], "--limit", ["0"]),
    (["why", "x"], "--budget", ["0"]),
    (["prime"], "--budget", ["0"]),
    (["related", "x"], "--limit", ["0"]),
    (["eval", "q.jsonl"], "--k", ["0"]),
    (["eval", "q.jsonl"], "--min-recall", ["1.5"]),
    (["budget"], "--window", ["0"]),
    (["checkpoint"], "--summarizer-timeout", ["0", "0.01", "3601"]),
    (["checkpoint", "--window", "200000"], "--used", []),
    (["checkpoint", "--used", "1"], "--window", ["0"]),
    (["checkpoint", "--used", "1", "--window", "2"], "--threshold", ["0", "1.5"]),
    (["checkpoint"], "--tokens-after", []),
    (["hook"], "--prime-budget", ["0"]),
    (["hook"], "--recall-budget", ["0"]),
    (["mcp"], "--call-timeout", ["0"]),
]
CASES = [(args, option, value) for args, option, extra in OPTIONS for value in NOT_FINITE + extra]


@pytest.mark.parametrize(
    ("args", "option", "value"), CASES, ids=[f"{c[1]}={c[2][:8]}" for c in CASES]
)
def test_every_numeric_option_refuses_a_bad_number_in_one_usage_line(
    root: Path, args: list[str], option: str, value: str
) -> None:
    done = cli_run(root, *args, option, value, input="{}")
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output and isinstance(done.exception, SystemExit)
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"Error: Invalid value for '{option}': ") and len(line) < 200


@pytest.mark.parametrize("value", ["nan", "inf", "1e308", "-1"])
def test_keep_days_refuses_what_is_not_a_whole_number_from_zero(root: Path, value: str) -> None:
    done = cli_run(root, "prune", "--keep-days", value)
    assert done.exit_code == 2 and "Error: Invalid value for '--keep-days'" in done.stderr


NOT_NUMBERS = [math.nan, math.inf, -math.inf, 1e308, True, 2.5, "3"]
FROM_ONE = [*NOT_NUMBERS, 10**400, -1, 0]  # a count of 1 or more
FROM_ZERO = [*NOT_NUMBERS, 10**400, -1]  # a count of 0 or more
NOT_FINITE_NUMBERS = [math.nan, math.inf, -math.inf, 1e308, 10**400, True, "3", -1, 0]
CALLS = [
    ("limit", FROM_ONE, lambda m, v: m.search("postgres", limit=v)),
    ("budget", FROM_ONE, lambda m, v: m.recall("postgres", budget=v)),
    ("limit", FROM_ONE, lambda m, v: m.recall("postgres", limit=v)),
    ("budget", FROM_ONE, lambda m, v: m.prime(budget=v)),
    ("budget", FROM_ONE, lambda m, v: m.why("auth/x.py", budget=v)),
    ("limit", FROM_ONE, lambda m, v: m.related("x", limit=v)),
    ("k", FROM_ONE, lambda m, v: m.evaluate("q.jsonl", k=v)),
    ("window", FROM_ONE, lambda m, v: m.budget(window=v)),
    (
        "timeout",
        [*NOT_FINITE_NUMBERS, 0.01, 3601],
        lambda m, v: m.checkpoint(summarizer="true", timeout=v),
    ),
    ("used", FROM_ZERO, lambda m, v: m.checkpoint(used=v, window=200_000)),
    ("window", FROM_ONE, lambda m, v: m.checkpoint(used=1, window=v)),
    (
        "threshold",
        [*NOT_FINITE_NUMBERS, 1.5],
        lambda m, v: m.checkpoint(used=1, window=1, threshold=v),
    ),
    ("tokens_before", FROM_ZERO, lambda m, v: m.checkpoint(tokens_before=v)),
    ("tokens_after", FROM_ZERO, lambda m, v: m.checkpoint(tokens_after=v)),
    ("keep_days", [*NOT_NUMBERS, -1], lambda m, v: m.prune(keep_days=v)),
]
API_CASES = [(name, call, value) for name, values, call in CALLS for value in values]


@pytest.mark.parametrize(
    ("name", "call", "value"),
    API_CASES,
    ids=[f"{i}-{c[0]}={repr(c[2])[:8]}" for i, c in enumerate(API_CASES)],
)
def test_the_api_refuses_a_bad_number_naming_the_parameter(
    indexed: Memory, name: str, call, value: Any
) -> None:
    warm = {p: p.read_bytes() for p in (indexed.root / "warm").glob("*.md")}
    with pytest.raises(BadNumber) as refused:
        call(indexed, value)
    message = str(refused.value)
    assert message.startswith(f"{name} must be ") and "\n" not in message and len(message) < 120
    assert {p: p.read_bytes() for p in (indexed.root / "warm").glob("*.md")} == warm


def mcp_caller(memory: Memory):
    """Call a tool of the MCP server over ``memory`` in this process, as the SDK would."""
    pytest.importorskip("mcp")
    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    from memsite.agents.mcp_server import build_server

    server = build_server(memory)

    def call(tool: str, arguments: dict[str, Any]) -> Any:
        async def ask() -> Any:
            try:
                return await server.call_tool(tool, arguments)
            except ToolError as err:
                return err

        return anyio.run(ask)

    return call


MCP_ARGUMENTS = [
    ("prime", {}, "budget"),
    ("recall", {"prompt": "postgres"}, "budget"),
    ("why", {"path": "auth/x.py"}, "budget"),
    ("search", {"query": "postgres"}, "limit"),
    ("related", {"id": "x"}, "limit"),
]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e308, 10**400, -1, 0])
@pytest.mark.parametrize(
    ("tool", "given", "name"), MCP_ARGUMENTS, ids=[a[0] for a in MCP_ARGUMENTS]
)
def test_an_mcp_numeric_argument_is_refused_in_one_line_naming_it(
    indexed: Memory, tool: str, given: dict, name: str, value: Any
) -> None:
    answer = mcp_caller(indexed)(tool, {**given, name: value})
    said = str(answer) if isinstance(answer, Exception) else answer.content[0].text
    assert isinstance(answer, Exception) or answer.is_error
    assert said.startswith(f"{tool}: {name} must be a whole number from 1 to "), said
    assert "\n" not in said and len(said) < 160, said
