"""A sweep of every command with bad input and damaged data (after issue 36): each case, as a
user would meet it; each failed on the code before its fix."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from memsite import Memory
from memsite.cli import cli
from memsite.store.check import check_tree
from memsite.store.inputs import clean
from memsite.store.session import hot

READERS = [
    ["check"],
    ["index"],
    ["search", "argon2id"],
    ["recall", "--lexical", "how many argon2id iterations"],
    ["prime", "--lexical"],
    ["why", "src/auth/tokens.py"],
]


def run(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--root", str(root), *args])


def in_a_process(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    env["MEMSITE_WARM"] = "off"
    command = [sys.executable, "-m", "memsite", "--root", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("where", ["warm/loop.md", "notes/loop.md", "cold/adr/loop.md"])
def test_a_symbolic_link_loop_in_the_tree_is_skipped_with_a_warning(
    sample: Path, where: str
) -> None:
    # Python 3.11 and 3.12 raise RuntimeError for a loop where 3.13 raises OSError: every
    # read command crashed with a traceback over one committed link
    link = sample / where
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(link.name, link)
    for args in READERS:
        result = run(sample, *args)
        assert result.exit_code == 0 and result.exception is None, (args, result.output)
    checked = run(sample, "check")
    assert f"{where}:1: warning: symbolic link loop; skipped" in checked.output
    assert "argon2id" in run(sample, "search", "argon2id").output


def test_a_hot_context_that_is_a_link_loop_is_a_one_line_error(sample: Path) -> None:
    context = sample / "hot" / "context.json"
    context.unlink(missing_ok=True)
    os.symlink(context.name, context)
    result = run(sample, "session", "show")
    assert result.exit_code == 1 and result.exception is not None
    assert isinstance(result.exception, SystemExit)
    assert "symbolic link loop" in result.output and len(result.output.splitlines()) == 1
    assert run(sample, "log", "still writes").exit_code == 0


@pytest.mark.parametrize("args", [["search", "x"], ["why", "x"], ["log", "x"], ["check"]])
def test_a_root_that_is_a_link_loop_is_no_tree(tmp_path: Path, args: list[str]) -> None:
    loop = tmp_path / "memory"
    os.symlink(loop.name, loop)
    result = run(loop, *args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert (
        result.output.strip()
        == f"Error: {loop}: no memory tree here (run 'memsite init {loop}' or pass --root)"
    )


class CountingReader:
    """A reader of an index holding ``words``, counting the lookups asked of it."""

    def __init__(self, *words: str) -> None:
        self.words, self.lookups = set(words), 0

    def doc_frequency(self, field: str, word: str) -> int:
        self.lookups += 1
        return int(word in self.words)


def test_a_pasted_word_of_200000_characters_is_not_read_as_an_abbreviation() -> None:
    # every prefix from half its length down was hashed whole: recall of one such word ran
    # for minutes, and the prompt hook gave up at its 5 s limit
    from memsite.search.index import asking

    reader = CountingReader("auth")
    # the stemmed word ("authent") the memory abbreviates is still read as the memory spells it
    assert asking.as_the_memory_spells(reader, "tokens and authentication") == {"authent": "auth"}
    reader.lookups = 0
    assert asking.as_the_memory_spells(reader, "blob 0x" + "f" * 200_000) == {}
    assert reader.lookups < 100


def _summary_by_pattern(text: str) -> str:
    """What compact_summary returned when it was two lazy patterns (its meaning, slowly)."""
    import re

    found = re.search(r"<summary>(.*?)</summary>", text, re.S)
    return (
        found.group(1) if found else re.sub(r"<analysis>.*?</analysis>", "", text, flags=re.S)
    ).strip()


@given(
    st.lists(
        st.sampled_from(
            ["<summary>", "</summary>", "<analysis>", "</analysis>", "a", " ", "\n", "<"]
        ),
        max_size=24,
    ).map("".join)
)
def test_a_compaction_summary_is_found_as_the_patterns_found_it(text: str) -> None:
    from memsite.store.session.summaries import compact_summary

    assert compact_summary(text) == _summary_by_pattern(text)


@pytest.mark.parametrize("tag", ["<summary>", "<analysis>"])
def test_thousands_of_unclosed_tags_in_a_compaction_summary_are_kept_in_time(
    sample: Path, tag: str
) -> None:
    # each opening tag started a lazy match that ran to the end: the hook hit its 5 s limit
    # and the compaction's summary was never stored
    import json

    from memsite import Memory

    given = "Moved token refresh to Postgres. " + tag * 40_000
    done = CliRunner().invoke(
        cli,
        ["--root", str(sample), "hook"],
        input=json.dumps(
            {"hook_event_name": "PostCompact", "session_id": "s", "trigger": "auto",
             "compact_summary": given}
        ),
    )  # fmt: skip
    assert (done.exit_code, done.stdout, done.stderr) == (0, "", "")
    checkpoint = Memory(sample).latest_checkpoint()
    assert checkpoint is not None and checkpoint.summary.startswith("Moved token refresh")


@pytest.mark.parametrize("name", ["*/state.json", "*.records.json", "*.chains.json"])
def test_an_index_cache_nested_past_pythons_limit_is_rebuilt(sample: Path, name: str) -> None:
    # json.loads raises RecursionError, which no reader of the cache caught: search, recall
    # and prime ended in a traceback, and index --rebuild did not mend the records' walk.
    # Each command is its own process, as it is for a user: one process keeps what it read
    for args in (["index"], ["prime", "--lexical"]):  # build every cache
        assert in_a_process(sample, *args).returncode == 0
    [cache] = (sample.parent / ".memsite" / "index").glob(name)
    cache.write_text("[" * 100_000 + "]" * 100_000)
    for args in (["search", "argon2id"], ["prime", "--lexical"], ["index", "--rebuild"]):
        done = in_a_process(sample, *args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
    assert "argon2id" in in_a_process(sample, "search", "argon2id").stdout


def test_eval_of_a_queries_line_nested_past_pythons_limit_is_a_one_line_error(
    sample: Path, tmp_path: Path
) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"q": "x", "relevant": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    result = run(sample, "eval", str(queries))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{queries}:1: expected" in result.output and len(result.output.splitlines()) == 1


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.mark.parametrize("site", ["", ".", "memory", "memory/public", "project", ".memsite"])
def test_a_site_folder_that_is_not_the_sites_own_is_refused_and_nothing_is_deleted(
    sample: Path, monkeypatch: pytest.MonkeyPatch, site: str
) -> None:
    # `build --site-dir ""` (or ".") in a project deleted every file of it, memory included:
    # MkDocs empties its site folder before it writes
    work = sample.parent
    (work / "precious.txt").write_text("x")
    (work / "project").mkdir()
    (work / "project" / "main.py").write_text("print(1)\n")
    assert run(sample, "index").exit_code == 0  # the cache beside the tree
    monkeypatch.chdir(work)
    before = _files(work)
    result = run(sample, "build", "--site-dir", site)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output.startswith("Error: site not built: site_dir ")
    assert len(result.output.splitlines()) == 1
    assert _files(work) == before


def test_a_site_folder_a_build_wrote_is_replaced(sample: Path, tmp_path: Path) -> None:
    site = tmp_path / "public"
    for _ in range(2):
        result = run(sample, "build", "--site-dir", str(site))
        assert result.exit_code == 0, result.output
    assert (site / "index.html").is_file()


@pytest.mark.parametrize("option", ["--docs-only", "--techdocs"])
def test_an_export_never_writes_over_a_projects_own_docs_or_into_the_tree(
    sample: Path, tmp_path: Path, option: str
) -> None:
    own = tmp_path / "project"
    (own / "docs").mkdir(parents=True)
    (own / "mkdocs.yml").write_text("site_name: ours\n")
    (own / "docs" / "index.md").write_text("# Ours\n")
    for folder, said in [
        (own, "holds an mkdocs.yml that memsite did not export"),
        (sample / "notes", "is the memory tree or lies inside it"),
    ]:
        before = _files(sample) | _files(own)
        result = run(sample, "build", option, str(folder))
        assert result.exit_code == 1 and said in result.output, result.output
        assert _files(sample) | _files(own) == before
    (own / "mkdocs.yml").unlink()
    result = run(sample, "build", option, str(own))
    assert (
        result.exit_code == 1
        and "holds a docs/ folder that memsite did not export" in result.output
    )
    fresh = tmp_path / "export"
    for _ in range(2):  # an export's own folder is written again
        assert run(sample, "build", option, str(fresh)).exit_code == 0


@pytest.mark.parametrize("damage", [b"- **Why:** a\xff\n", b"x\x00y\n"], ids=["not UTF-8", "NUL"])
@pytest.mark.parametrize(
    ("args", "target"),
    [
        (["decide", "After", "--why", "w"], "cold/decisions.md"),
        (["learn", "After", "--why", "w", "--category", "c"], "cold/learnings.md"),
        (["log", "after", "--at", "2026-11-27T10:00:00"], "warm/2026-11-27.md"),
    ],
)
def test_an_entry_is_never_appended_where_every_reader_skips_it(
    sample: Path, args: list[str], target: str, damage: bytes
) -> None:
    # the entry was written, its id printed, and then search, recall and get never saw it:
    # every reader skips a file that is not UTF-8 or holds NUL bytes
    path = sample / target
    path.write_bytes(path.read_bytes() + b"\n" + damage)
    before = _files(sample)
    result = run(sample, *args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert f"{path}:" in result.output and "nothing was written" in result.output
    assert len(result.output.splitlines()) == 1
    assert _files(sample) == before


def test_related_checks_its_id_as_get_does(sample: Path) -> None:
    # an empty id was "no entry with id ''" (exit 1, where get exits 2), and an id of
    # 100,000 characters was echoed back whole
    for command in ("get", "related"):
        empty = run(sample, command, "")
        assert (empty.exit_code, empty.output) == (2, "Error: id is empty\n"), command
        huge = run(sample, command, "a" * 100_000)
        assert huge.exit_code in (1, 2) and len(huge.output) < 200, command


def edit_context(sample: Path, **values: str) -> None:
    """Set ``values`` in the live session's file as a person editing it would (JSON escapes
    and all)."""
    path = sample / "hot" / "context.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **values}, indent=2))


WRITERS = [
    ["progress", "Ported the admin views"],
    ["pending", "add", "Tell maria"],
    ["checkpoint"],
    ["decide", "Keep impersonation audited", "--why", "Support asked for it"],
    ["session", "end"],
]


@pytest.mark.parametrize("key", ["task", "session_id"])
@pytest.mark.parametrize("value", ["a\udcffb", "a\ud83d", "line one\nline two"])
def test_a_lone_surrogate_or_a_newline_in_the_live_session_is_cleaned_on_read(
    sample: Path, key: str, value: str
) -> None:
    """A lone surrogate's escape in hot/context.json (``"a\\udcffb"``) made progress, pending
    add, checkpoint, decide and session end a UnicodeEncodeError traceback, decide after its
    decision was written (a retry wrote it twice); a newline made session end refuse for ever
    ("did not read back as written"), so the session could only be removed by hand. Each
    value is read back as one clean line, and every command writes its entry once."""
    edit_context(sample, **{key: value})
    for args in WRITERS:
        result = run(sample, *args)
        assert result.exit_code == 0 and result.exception is None, (args, result.output)
        assert "Error" not in result.output, (args, result.output)
    memory = Memory(sample)
    assert memory.session() is None and not (sample / "hot" / "context.json").exists()
    titles = [e.title for e in memory.entries("decision")]
    assert titles.count("Keep impersonation audited") == 1
    shown = " ".join(clean(value).split())  # "a\ufffdb", "line one line two"
    ended = [e for e in memory.entries("activity") if e.title == "session end"]
    assert [e.details[key] for e in ended].count(shown) == 1
    assert [p for p in check_tree(sample) if p.severity == "error"] == []


def test_a_lone_surrogate_in_the_carried_pending_actions_is_cleaned_on_read(
    sample: Path,
) -> None:
    """The same escape in hot/carried.json made session start a traceback."""
    assert run(sample, "session", "end").exit_code == 0
    carried = {"pending": [{"text": "Tell a\udcffb", "from": "s\ud83d"}, {"text": "\x00"}]}
    (sample / "hot" / "carried.json").write_text(json.dumps(carried))
    result = run(sample, "session", "start", "Next task")
    assert result.exit_code == 0 and result.exception is None, result.output
    live = Memory(sample).session()
    assert live is not None and live.pending_actions == ["Tell a\ufffdb"]
    assert live.carried == {"Tell a\ufffdb": "s\ufffd"}


def test_a_decision_the_live_session_cannot_list_is_written_once(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """decide exited 1 with a traceback when the live session could not be saved after the
    decision and its pointer were written, so a retry wrote them twice: it is a notice."""

    def unsaved(*args: object) -> None:
        raise UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogates not allowed")

    monkeypatch.setattr(hot, "save", unsaved)
    result = run(sample, "decide", "Keep impersonation audited", "--why", "Support asked")
    assert result.exit_code == 0 and result.exception is None, result.output
    assert "is written, but the live session does not list it" in result.stderr
    titles = [e.title for e in Memory(sample).entries("decision")]
    assert titles.count("Keep impersonation audited") == 1


@pytest.mark.parametrize("started", ["2026-11-27T09:00:21+05:00", "2026-11-27T04:00:21Z"])
def test_a_session_started_at_a_time_with_its_offset_is_checkpointed(
    sample: Path, started: str
) -> None:
    """checkpoint compared a start given with its offset to the naive local clock: a
    TypeError traceback. The start is read as the local time it names."""
    edit_context(sample, started=started)
    result = run(sample, "checkpoint")
    assert result.exit_code == 0 and result.exception is None, result.output
    latest = Memory(sample).latest_checkpoint()
    assert latest is not None and result.output.strip() == latest.id
    assert hot.moment(started) == dt.datetime(
        2026, 11, 27, 4, 0, 21, tzinfo=dt.UTC
    ).astimezone().replace(tzinfo=None)


@pytest.mark.parametrize("folder", ["notes", "cold/adr", "../docs/adr"])
def test_a_file_name_that_is_not_utf8_is_skipped_with_a_warning(sample: Path, folder: str) -> None:
    # os gives such a name back with surrogate escapes, which no index holds: search for the
    # note's words ended in a UnicodeEncodeError traceback
    if folder.startswith(".."):
        (sample / "memsite.toml").write_text(f'[records]\npaths = ["{folder}"]\n', "utf-8")
    where = (sample / folder).resolve()
    where.mkdir(parents=True, exist_ok=True)
    (where / "0009-plain-zebra.md").write_text("# Zebra record\n\nzebra stripes\n", "utf-8")
    name = os.fsencode(where) + b"/0010-\xffzebra.md"
    with open(name, "wb") as out:
        out.write(b"# Okapi record\n\nokapi stripes\n")
    for args in (["search", "okapi"], ["recall", "--lexical", "okapi stripes"], ["prime"]):
        done = in_a_process(sample, *args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
    assert "Zebra record" in in_a_process(sample, "search", "zebra").stdout
    checked = in_a_process(sample, "check")
    assert "0010-\\udcffzebra.md" in checked.stdout + checked.stderr
    assert "file name is not UTF-8; skipped" in checked.stdout + checked.stderr


def test_entries_of_one_title_without_id_lines_take_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each derived id counted -2, -3, ... from 2: a hand-written file of 10,000 entries of
    # one title took 4.5 s to parse, on every read
    from memsite.store import format as fmt

    looked = [0]

    class Counting(fmt.Seen):
        def __contains__(self, key: object) -> bool:
            looked[0] += 1
            return super().__contains__(key)

    monkeypatch.setattr(fmt, "Seen", Counting)
    text = "# Decisions\n\n" + "".join(
        f"## 2026-01-01 — Same title\n- **Why:** w{i}\n\n" for i in range(3_000)
    )
    text += (
        "## 2026-01-01 — Same title\n- **Why:** named\n\n<!-- id: 2026-01-01-same-title-3002 -->\n"
    )
    text += "## 2026-01-01 — Same title\n- **Why:** after it\n"
    ids = [entry.id for entry in fmt.parse_entries(text, "cold/decisions.md").entries]
    base = "2026-01-01-same-title"
    expected = [base] + [f"{base}-{n}" for n in range(2, 3_001)] + [f"{base}-3002", f"{base}-3001"]
    assert ids == expected  # the ids counting one by one gave
    assert looked[0] < 20_000  # 4.5 million before


def test_a_filters_bad_date_is_a_usage_error_as_the_options_is(sample: Path) -> None:
    typed = run(sample, "search", "since:2026-02-30")
    option = run(sample, "search", "tokens", "--since", "2026-02-30")
    assert typed.exit_code == option.exit_code == 2, (typed.output, option.output)
    assert typed.output == "Error: since: invalid date '2026-02-30', expected YYYY-MM-DD\n"


def test_why_says_a_path_holding_a_newline_on_one_line(sample: Path) -> None:
    assert run(sample, "index").exit_code == 0
    result = CliRunner().invoke(cli, ["--root", str(sample), "why", "a\nb"])
    assert result.exit_code == 0
    assert result.stderr == "memsite: nothing in memory governs or mentions a\\nb\n"


def test_an_export_over_a_fifo_named_mkdocs_yml_is_refused_not_a_wait(
    sample: Path, tmp_path: Path
) -> None:
    # whether the mkdocs.yml there was exported was read with read_text, which waits for a
    # writer for ever on a FIFO; each command in its own process, under a guard
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "mkdocs.yml")
    done = in_a_process(sample, "build", "--docs-only", str(out))
    assert done.returncode == 1
    assert "holds an mkdocs.yml that memsite did not export" in done.stderr
