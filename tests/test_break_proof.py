"""The break-proof review (issue 15): each attack, as a user or an attacker would try it.

One test (or a few) per numbered point of the review; each failed on the code before the fix.
The site-side points (scripts in ``<head>``, outside requests) are in
``tests/test_site_safety.py``, which builds and drives the site in Chromium.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory, MemsiteError
from memsite.cli import cli
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
    first = ""
    for shape in shapes:
        text = f"first line\n{shape}"
        ids = [
            memory.decide("D", why=text, risk=text, body=shape),
            memory.learn("L", category="c", why=text, body=shape),
            memory.log("a", result=text, body=shape),
        ]
        for entry_id in ids:
            entry = memory.entry(entry_id)
            # "L" said again repeats the first "L" (issue 36), a field memsite writes itself
            fields = {k: v for k, v in entry.fields.items() if not (k == "repeats" and v == first)}
            assert set(fields) <= {"why", "risk", "category"}, (shape, entry.fields)
            assert entry.body == shape
        first = first or ids[1]


def test_sample_memory_is_untouched_by_the_shared_field_shape(sample: Path) -> None:
    """The stricter escaping changes nothing in files already written."""
    assert [p for p in check_tree(sample) if p.severity == "error"] == []


# -- 15.4: files whose real path is outside the tree -------------------------------------


def _outside(tmp_path: Path, text: str) -> Path:
    secret = tmp_path / "outside" / "host-secret.txt"
    secret.parent.mkdir()
    secret.write_text(text)
    return secret


def test_a_persona_linked_outside_the_tree_is_never_injected(
    memory: Memory, tmp_path: Path
) -> None:
    secret = _outside(tmp_path, "# Persona\n\nOUTSIDE-PERSONA-TEXT\n")
    persona = memory.root / "persona.md"
    persona.unlink()
    persona.symlink_to(secret)
    memory.decide("Use Postgres", why="durability")
    payload = memory.prime(task="database", lexical=True)
    assert "OUTSIDE-PERSONA-TEXT" not in payload.markdown
    messages = [p.message for p in check_tree(memory.root)]
    assert any("outside the tree" in m for m in messages)


def test_a_hot_context_linked_outside_the_tree_is_not_read(memory: Memory, tmp_path: Path) -> None:
    secret = _outside(tmp_path, '{"session_id": "S", "task": "OUTSIDE-TASK"}')
    (memory.root / "hot" / "context.json").symlink_to(secret)
    with pytest.raises(MemsiteError, match="outside the memory tree"):
        memory.session()
    result = CliRunner().invoke(cli, ["--root", str(memory.root), "session", "show"])
    assert result.exit_code == 1 and "OUTSIDE-TASK" not in result.output
    assert "Traceback" not in result.output


# -- 15.14: a damaged hot context never crashes a command ---------------------------------


@pytest.mark.parametrize(
    "content",
    [
        '{"session_id": "S", "task": ' + "9" * 5000 + "}",
        "[" * 100_000 + "]" * 100_000,
        '{"session_id": "S", "pending_actions": ' + "[" * 5000 + "]" * 5000 + "}",
    ],
    ids=["5000-digit number", "nested 100000 deep", "nested list field"],
)
def test_a_damaged_hot_context_is_a_one_line_error(root: Path, content: str) -> None:
    (root / "hot" / "context.json").write_text(content)
    for args in (["session", "show"], ["check"]):
        result = CliRunner().invoke(cli, ["--root", str(root), *args])
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "context.json" in result.output
        assert len(result.output.strip().splitlines()) <= 3


def test_an_at_outside_the_calendar_is_a_one_line_error(root: Path) -> None:
    args = ["decide", "X", "--why", "w", "--at", "0001-01-01T00:00+05:00"]
    result = CliRunner().invoke(cli, ["--root", str(root), *args])
    assert result.exit_code in (1, 2), result.output
    assert not isinstance(result.exception, OverflowError)
    assert "years 1-9999" in result.output
    assert (root / "cold" / "decisions.md").read_text() == "# Decisions\n"


def test_prune_keeping_more_days_than_the_calendar_holds_moves_nothing(
    memory: Memory,
) -> None:
    memory.log("old work", at="2026-05-01T10:00:00")
    result = CliRunner().invoke(
        cli, ["--root", str(memory.root), "prune", "--keep-days", "100000000"]
    )
    assert result.exit_code == 0, result.output
    assert "moved 0 log(s)" in result.output
    assert (memory.root / "warm" / "2026-05-01.md").is_file()


# -- 15.15: a root that is not a memory tree ----------------------------------------------


def test_a_folder_that_is_not_a_memory_tree_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "projects").mkdir(parents=True)
    (home / "projects" / "README.md").write_text("# hello\n")
    for args in (["search", "hello"], ["check"], ["decide", "X", "--why", "w"], ["build"]):
        result = CliRunner().invoke(cli, ["--root", str(home), *args])
        assert result.exit_code == 1, (args, result.output)
        assert "not a memory tree" in result.output
    assert not (tmp_path / ".memsite").exists() and not (home / ".memsite").exists()


def test_a_tree_of_only_notes_is_a_tree(tmp_path: Path) -> None:
    root = tmp_path / "adrs"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "0001-use-postgres.md").write_text("# Use Postgres\n\nDurability.\n")
    result = CliRunner().invoke(cli, ["--root", str(root), "search", "postgres", "--lexical"])
    assert result.exit_code == 0, result.output
    assert "Use Postgres" in result.output


# -- 15.6: secrets written encoded --------------------------------------------------------

TOKEN = "ghp_" + "Ab3" * 12


@pytest.mark.parametrize(
    "encoded",
    [
        TOKEN.replace("_", "\\_"),  # a markdown escape: renders as the plain token
        "&#103;" + TOKEN[1:],  # a decimal HTML entity
        "&#x67;" + TOKEN[1:],  # a hex one
        "ghp&lowbar;" + TOKEN[4:],  # a named one
    ],
    ids=["markdown escape", "decimal entity", "hex entity", "named entity"],
)
def test_a_secret_written_encoded_is_redacted_as_it_would_render(
    memory: Memory, encoded: str
) -> None:
    entry_id = memory.decide("Rotate the token", why=f"the old one was {encoded} (leaked)")
    text = (memory.root / "cold" / "decisions.md").read_text()
    assert TOKEN[4:] not in text and "[redacted: github token]" in text
    assert memory.entry(entry_id).why == "the old one was [redacted: github token] (leaked)"


def test_escapes_that_hide_no_secret_are_left_alone(memory: Memory) -> None:
    why = "use \\*stars\\* &amp; ampersands; ghp\\_ is a prefix, &#103; a letter"
    entry_id = memory.decide("Escapes", why=why)
    assert memory.entry(entry_id).why == why


# -- 15.9: a write that spans two files is whole or absent --------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("decide", "Use Redis", "--why", "speed", "--at", "2026-06-08T15:00:00"),
        ("learn", "Cache misses", "--category", "perf", "--at", "2026-06-08T15:00:00"),
    ],
    ids=["decide", "learn"],
)
def test_a_full_day_log_leaves_no_half_decision_or_learning(
    memory: Memory, args: tuple[str, ...]
) -> None:
    """The cold append succeeds, the warm pointer hits the file-size limit: both or neither."""
    from tests.test_storage import memsite, one_error_line, snapshot

    memory.log("big", body="x" * 20_000, at="2026-06-08T09:00:00")
    root = memory.root
    before = snapshot(root)
    limit = len(before["warm/2026-06-08.md"]) + 100  # room for the cold file, not the log
    assert len(before.get("cold/decisions.md", b"")) + 1_000 < limit
    line = one_error_line(memsite("--root", str(root), *args, limit=limit))
    assert snapshot(root) == before
    cold = "cold/decisions.md" if args[0] == "decide" else "cold/learnings.md"
    assert "file size limit exceeded" in line
    assert f"was not written either ({root / cold} is unchanged)" in line
    retried = memsite("--root", str(root), *args)  # the obvious retry writes exactly one
    assert retried.returncode == 0, retried.stderr
    kind = "decision" if args[0] == "decide" else "learning"
    assert [e.title for e in memory.entries(kind)] == [args[1]]
    assert [e.details[kind] for e in memory.entries("activity") if e.title == kind] == [
        retried.stdout.strip()
    ]


def test_a_progress_whose_hot_update_fails_leaves_the_day_log_as_it_was(memory: Memory) -> None:
    """progress appends to the day log, then replaces hot/context.json: both or neither."""
    from tests.test_storage import memsite, one_error_line, snapshot

    memory.start_session("Big context")
    for n in range(10):
        memory.pending_add(f"todo {n} " + "p" * 900)
    root = memory.root
    before = snapshot(root)
    limit = 2_000  # the day log may be written, the context may not
    assert "warm/2026-06-08.md" not in before and len(before["hot/context.json"]) > limit
    args = ("progress", "step two", "--at", "2026-06-08T15:00:00")
    line = one_error_line(memsite("--root", str(root), *args, limit=limit))
    assert "context.json" in line and "file size limit exceeded" in line
    assert snapshot(root) == before


# -- 15.13: ghost ids and files that do not parse ------------------------------------------


@pytest.mark.parametrize(
    "shown",
    ["<!-- id: 2026-06-08-ghost -->", "- **Id:** 2026-06-08-ghost"],
    ids=["trailer", "field"],
)
def test_supersedes_must_name_a_real_decision_not_an_id_in_a_code_block(
    memory: Memory, shown: str
) -> None:
    memory.decide("How ids look", why="docs", body=f"```markdown\n{shown}\n```")
    with pytest.raises(MemsiteError, match="no decision with that id"):
        memory.decide("Replace the ghost", why="w", supersedes="2026-06-08-ghost")
    assert [e.title for e in memory.entries("decision")] == ["How ids look"]
    assert [p for p in check_tree(memory.root) if p.severity == "error"] == []


@pytest.mark.parametrize(
    ("rel", "damage", "args"),
    [
        ("cold/decisions.md", "```python\nprint('hand edit')\n", ["decide", "B", "--why", "w"]),
        ("cold/learnings.md", "~~~\nhand edit\n", ["learn", "B", "--category", "c"]),
        ("warm/2026-06-08.md", "```\nhand edit\n", ["log", "B", "--at", "2026-06-08T15:00:00"]),
        ("cold/decisions.md", "## Notes from the meeting\n", ["decide", "B", "--why", "w"]),
    ],
    ids=["unclosed fence in decisions", "in learnings", "in a day log", "a bad heading"],
)
def test_a_write_to_a_file_that_does_not_parse_is_refused(
    memory: Memory, rel: str, damage: str, args: list[str]
) -> None:
    memory.decide("A", why="w", at="2026-06-08T10:00:00")
    memory.learn("A", category="c", at="2026-06-08T10:00:00")
    path = memory.root / rel
    text = path.read_text() + "\n" + damage
    path.write_text(text)
    bad_line = len(text.splitlines()) - damage.count("\n") + 1
    before = {p: p.read_bytes() for p in memory.root.rglob("*.md")}
    result = CliRunner().invoke(cli, ["--root", str(memory.root), *args])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}:{bad_line}: ")
    assert "memsite check" in lines[0]
    assert {p: p.read_bytes() for p in memory.root.rglob("*.md")} == before


# -- 15.3: a session's summary and pending work never vanish -------------------------------


def test_a_session_id_used_today_is_refused(root: Path) -> None:
    def run(*args: str):
        return CliRunner().invoke(cli, ["--root", str(root), *args])

    assert run("session", "start", "Morning", "--id", "T").exit_code == 0
    assert run("session", "end").exit_code == 0
    again = run("session", "start", "Afternoon", "--id", "T")
    assert again.exit_code == 1
    assert again.output.strip().splitlines() == [
        f"Error: session id 'T' was already used on {again_day(root)}; "
        "give another --id, or none for a fresh one"
    ]
    assert not (root / "hot" / "context.json").exists()


def again_day(root: Path) -> str:
    return next((root / "warm").glob("*.md")).stem


def test_a_session_is_archived_unless_that_very_state_is_on_disk(memory: Memory) -> None:
    """Same generated id twice in one second (a fixed clock), and a context restored by hand
    with an id already archived: each state is written before hot/ is cleared."""
    memory.start_session("Rotate secrets")
    memory.end_session()
    memory.start_session("Rotate secrets")
    memory.pending_add("ROTATE THE PROD DB PASSWORD")
    memory.end_session("AFTERNOON")
    (memory.root / "hot" / "context.json").write_text(
        '{"session_id": "20260608-143005-rotate-secrets", "task": "Evening", '
        '"pending_actions": ["CALL THE BANK"]}'
    )
    memory.end_session("EVENING")
    archives = [e for e in memory.entries("activity") if e.title == "session end"]
    assert [e.result for e in archives] == ["", "AFTERNOON", "EVENING"]
    assert "ROTATE THE PROD DB PASSWORD" in archives[1].body
    assert "CALL THE BANK" in archives[2].body
    assert archives[0].details["session_id"] != archives[1].details["session_id"]


def test_ending_a_session_twice_after_a_crash_archives_it_once(memory: Memory) -> None:
    """The retry case the archive check exists for: the archive is on disk, hot/ was not
    cleared (a kill in between); ending again writes nothing new and clears hot/."""
    memory.start_session("Work")
    memory.pending_add("finish")
    context = (memory.root / "hot" / "context.json").read_text()
    first = memory.end_session("done")
    (memory.root / "hot" / "context.json").write_text(context)
    assert memory.end_session("done") == first
    assert memory.session() is None
    assert len([e for e in memory.entries("activity") if e.title == "session end"]) == 1


# -- 15.5: every text a command writes is redacted ----------------------------------------

SECRET = TOKEN[4:]  # what must never reach disk, whatever prefix or escape surrounds it

# every text option of every write command, as the test below exercises it
WRITE_OPTIONS = {
    ("session", "start"): {"task", "session_id"},
    ("session", "end"): {"summary"},
    ("progress",): {"step", "files"},
    ("pending", "add"): {"text"},
    ("pending", "done"): {"text"},
    ("decide",): {
        "title",
        "why",
        "risk",
        "supersedes",
        "tags",
        "body",
        "author",
        "paths",
        "commit",
    },
    ("learn",): {
        "title",
        "category",
        "why",
        "supersedes",
        "tags",
        "body",
        "author",
        "paths",
        "commit",
    },
    ("log",): {"action", "details", "result", "body", "author", "paths", "commit"},
    ("note",): {"title", "body", "author"},
}


def _text_params(path: tuple[str, ...]) -> set[str]:
    command = cli
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return {
        p.name
        for p in command.params
        if p.name and p.name != "at" and not getattr(p, "is_flag", False)
    }


def test_the_secret_test_covers_every_text_option_of_every_write_command() -> None:
    for path, covered in WRITE_OPTIONS.items():
        assert _text_params(path) == covered, path


def _tree_text(root: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()
    )


def test_no_text_option_of_any_write_command_writes_a_secret(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMSITE_AUTHOR", raising=False)
    t = TOKEN

    def run(*args: str, ok: bool = True) -> None:
        result = CliRunner().invoke(cli, ["--root", str(root), *args])
        assert (result.exit_code == 0) is ok, (args, result.output)
        assert SECRET not in _tree_text(root) or "--allow-secrets" in args, args

    run("session", "start", f"task {t}", "--id", f"sid-{t}")
    run("progress", f"step {t}", "--file", f"src/{t}.py")
    run("pending", "add", f"todo {t}")
    run("pending", "add", f"keep {t}")
    run("pending", "done", f"todo {t}")
    run(
        "decide", f"title {t}", "--why", t, "--risk", t, "--tag", t, "--body", t,
        "--author", t, "--path", f"src/{t}.py", "--commit", t,
    )  # fmt: skip
    run("decide", "B", "--why", "w", "--supersedes", t, ok=False)
    run("learn", f"title {t}", "--category", t, "--why", t, "--tag", t, "--body", t, "--author", t,
        "--path", t, "--commit", t)  # fmt: skip
    run("learn", "B", "--category", "c", "--supersedes", t, ok=False)
    run("log", f"act {t}", "--detail", f"{t}={t}", "--detail", f"k={t}", "--result", t,
        "--body", t, "--author", t, "--path", f"a/{t}", "--commit", t)  # fmt: skip
    run("note", f"title {t}", "--body", t, "--author", t)
    assert SECRET not in (root / "hot" / "context.json").read_text()
    run("session", "end", "--summary", t)
    monkeypatch.setenv("MEMSITE_AUTHOR", t)
    run("log", "signed by the environment")
    assert "[redacted: github token]" in _tree_text(root)
    assert [p for p in check_tree(root) if p.severity == "error"] == []
    run("log", "kept", "--result", t, "--allow-secrets")  # the control: the grep does see it
    assert SECRET in _tree_text(root)
