"""Path patterns are data (issue 22): a ``Paths`` glob is refused at write when it cannot be
compiled, reported by ``check`` and skipped by every reader when it arrives by hand, and
matched in time linear in the path whatever it holds.

The globs that broke memsite before: a reversed range (``[z-a]``) and a negated class with
no member (``[!]x]``) crashed every ``why``, ``prime``, hook and MCP ``why`` with
``re.error``; ``src/**a**a…b`` backtracked for 92 s on a 40-character path.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from memsite import Memory
from memsite.cli import cli
from memsite.errors import InvalidInput
from memsite.search.payloads.tokens import estimate_tokens
from memsite.store import code
from memsite.store.code import globs
from memsite.store.tree import init_tree

BROKEN = {
    "src/[z-a]/x.py": "has the reversed range 'z-a' in '[z-a]'; write it low to high: '[a-z]'",
    "src/[!]x]": (
        "has the empty class '[!]' (a ']' right after '[!' or '[^' closes it); "
        "name a character in it, as in '[!x]'"
    ),
    "src/[unclosed": (
        "has an unclosed '[' (character 5); close it with ']', or write '[[]' for a literal '['"
    ),
}

# Each answered in exponential time by the regular expression the old matcher made.
BACKTRACKING = [
    ("src/**a**a**a**a**a**a**a**a**a**a**a**a**b", "src/" + "a" * 40),
    ("src/*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "src/" + "a" * 40),
    ("**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/b", "a/" * 30 + "c"),
    ("src/**?a**[a]**[!b]**a?**[a-c]**a**?**[ab]a**a**?a**b", "src/" + "a" * 40),
]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder (the repository root, no git needed) with a memory tree in it."""
    for name in ("MEMSITE_AUTHOR", "MEMSITE_ROOT"):
        monkeypatch.delenv(name, raising=False)
    init_tree(tmp_path / "memory")
    return tmp_path


def cli_run(root: Path, *args: str, stdin: str | None = None):
    return CliRunner().invoke(cli, ["--root", str(root), *args], input=stdin)


def one_line_error(result) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def hand_written(root: Path, title: str, paths: str) -> str:
    """Append a decision as a person (or a git merge) writes it; its id."""
    entry_id = "2026-06-20-" + title.lower().replace(" ", "-")
    with (root / "cold" / "decisions.md").open("a", encoding="utf-8") as out:
        out.write(
            f"\n## 2026-06-20 — {title}\n- **Why:** written by hand\n- **Paths:** {paths}\n\n"
            f"<!-- id: {entry_id} -->\n"
        )
    return entry_id


@pytest.mark.parametrize("pattern", BROKEN)
def test_a_glob_that_cannot_compile_is_refused_at_write(repo: Path, pattern: str) -> None:
    root = repo / "memory"
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    for args in (("decide", "X", "--why", "w"), ("learn", "X", "--category", "c"), ("log", "X")):
        result = cli_run(root, *args, "--path", "src/ok.py", "--path", pattern)
        assert result.exit_code == 1
        assert one_line_error(result) == f"Error: --path {pattern!r} {BROKEN[pattern]}"
    with pytest.raises(InvalidInput, match=re.escape(f"paths {pattern!r} {BROKEN[pattern]}")):
        Memory(root, author="").decide("X", why="w", paths=[pattern])
    with pytest.raises(InvalidInput, match=re.escape(f"glob {pattern!r} {BROKEN[pattern]}")):
        globs.compile(pattern)
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before


def test_a_glob_that_cannot_compile_is_a_one_line_mcp_tool_error(repo: Path) -> None:
    pytest.importorskip("mcp")
    from memsite.agents.tools import MemoryTools

    tools = MemoryTools(Memory(repo / "memory", author=""))
    for tool, arguments in (("decide", {"why": "w"}), ("learn", {"category": "c"})):
        refused = getattr(tools, tool)(title="X", paths=["src/[z-a]/x.py"], **arguments)
        assert refused.is_error
        (content,) = refused.content
        assert content.text == f"paths 'src/[z-a]/x.py' {BROKEN['src/[z-a]/x.py']}"
    assert Memory(repo / "memory").entries("decision") == []


def test_a_broken_glob_written_by_hand_is_reported_by_check_and_skipped_by_readers(
    sample: Path,
) -> None:
    """A glob that arrives in cold/decisions.md by hand or a merge: ``check`` names it, and
    why, prime, the hook and MCP ``why`` skip it while the good path beside it still
    governs its file."""
    broken = ", ".join(BROKEN)
    entry_id = hand_written(sample, "Hand merged globs", f"{broken}, src/good.py")
    other = hand_written(sample, "Another source rule", "src/**")
    entry = Memory(sample).entry(entry_id)

    result = cli_run(sample, "check")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"cold/decisions.md:{entry.line}: error: path {pattern!r} of {entry_id} {reason}"
        for pattern, reason in BROKEN.items()
    ]

    found = json.loads(cli_run(sample, "why", "src/good.py", "--json").stdout)
    assert [
        (i["id"], i["match"], i["pattern"]) for i in found["items"] if i["match"] != "mentions"
    ] == [
        (entry_id, "file", "src/good.py"),
        (other, "glob", "src/**"),
    ]
    for path in ("src/z/x.py", "src/x", "src/[unclosed", "src/a/b.py"):
        result = cli_run(sample, "why", path, "--json")
        assert result.exit_code == 0, result.output
        items = json.loads(result.stdout)["items"]
        assert [i["id"] for i in items if i["match"] != "mentions"] == [other]

    assert cli_run(sample, "session", "start", "Fix the sources").exit_code == 0
    assert cli_run(sample, "progress", "editing", "--file", "src/good.py").exit_code == 0
    primed = cli_run(sample, "prime", "--lexical")
    assert primed.exit_code == 0, primed.output
    assert "- Hand merged globs (`2026-06-20-hand-merged-globs`): governs `src/good.py`" in (
        primed.stdout
    )
    edit = {
        "session_id": "s",
        "cwd": str(sample.parent),
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": str(sample.parent / "src" / "z" / "x.py")},
    }
    hooked = cli_run(sample, "hook", stdin=json.dumps(edit))
    assert hooked.exit_code == 0 and hooked.stderr == ""
    context = json.loads(hooked.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"cold/decisions.md#{other}" in context and entry_id not in context

    pytest.importorskip("mcp")
    from memsite.agents.tools import MemoryTools

    answered = MemoryTools(Memory(sample, author="")).why(path="src/good.py")
    items = answered.structured_content["items"]
    assert [i["id"] for i in items if i["match"] != "mentions"] == [entry_id, other]


def test_the_site_code_page_and_missing_paths_skip_a_broken_glob(tmp_path: Path) -> None:
    from memsite.site.code import code_page

    root = tmp_path / "memory"
    init_tree(root)
    hand_written(root, "Hand merged globs", "gone/[z-a]/x.py, src/good.py")
    pages: dict[str, dict] = {}

    class Builder:
        def add(self, uri: str, template: str, **values: object) -> None:
            pages[uri] = values

    assert code_page(Builder(), Memory(root).entries("decision")) == "code/index.md"
    assert [path for path, _ in pages["code/index.md"]["paths"]] == ["src/good.py"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "good.py").write_text("")
    assert code.missing_paths(root, Memory(root).entries()) == []


def test_a_session_file_that_cannot_be_a_glob_is_left_out_of_paths_from_session(repo: Path) -> None:
    """The live session's touched files become ``Paths`` with ``--paths-from-session``: one
    that cannot be stored as a glob is left out with a notice, not refused."""
    memory = Memory(repo / "memory", author="")
    memory.start_session("Edit")
    memory.progress("editing", files=["src/[z-a].py", "src/ok.py"])
    entry_id = memory.decide("From the session", why="w", paths_from_session=True)
    assert memory.entry(entry_id).paths == ["src/ok.py"]
    assert any("src/[z-a].py" in notice for notice in memory.notices)


@pytest.mark.parametrize(("pattern", "path"), BACKTRACKING)
def test_a_backtracking_glob_is_answered_at_once_by_why_and_the_hook(
    repo: Path, pattern: str, path: str
) -> None:
    root = repo / "memory"
    memory = Memory(root, author="")
    memory.decide("Pathological", why="w", paths=[pattern])
    memory.decide("Everything", why="w", paths=["**"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")}
    memsite = [sys.executable, "-m", "memsite", "--root", str(root)]
    # the index is built before the clock starts: the timeout is the matcher's
    subprocess.run([*memsite, "search", "x"], env=env, capture_output=True, check=False)
    for asked, governed in ((path, ["**"]), (path[:-1] + "b", ["**", pattern])):
        why = subprocess.run(
            [*memsite, "why", asked, "--json"], env=env, capture_output=True, text=True,
            timeout=3,
        )  # fmt: skip
        assert why.returncode == 0, why.stderr
        items = json.loads(why.stdout)["items"]
        assert sorted(i["pattern"] for i in items if i["match"] == "glob") == sorted(governed)

    memory.start_session("Edit")
    edit = {
        "session_id": "s",
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(repo / path)},
    }
    hooked = subprocess.run(
        [*memsite, "hook"], input=json.dumps(edit), env=env, capture_output=True, text=True,
        timeout=3,
    )  # fmt: skip
    assert hooked.returncode == 0 and hooked.stderr == ""
    assert "Everything" in json.loads(hooked.stdout)["hookSpecificOutput"]["additionalContext"]


def test_why_holds_its_budget_on_a_path_of_40000_characters(repo: Path) -> None:
    root = repo / "memory"
    Memory(root, author="").decide("Sources are typed", why="mypy strict", paths=["src/**"])
    path = "src/" + "a" * 40_000
    for budget in (10, 300):
        result = cli_run(root, "why", path, "--budget", str(budget), "--json")
        assert result.exit_code == 0, result.output
        found = json.loads(result.stdout)
        assert found["tokens"] == estimate_tokens(found["markdown"]) <= budget
        text = cli_run(root, "why", path, "--budget", str(budget))
        assert estimate_tokens(text.stdout) <= budget
    # a budget that holds the entry gets it, under a heading that shortens the path
    assert [i["match"] for i in found["items"]] == ["glob"]
    heading = found["markdown"].splitlines()[0]
    assert heading.startswith("## Memory about `src/aaa") and "…" in heading
    assert len(heading) < 200


def reference(pattern: str) -> tuple[re.Pattern[str], str | None]:
    """The regular expression the matcher before issue 22 made of a glob (the meaning the new
    matcher keeps, with ``**`` also spanning a newline), and what in it the new matcher
    refuses although the regular expression compiled: an ``unclosed`` ``[`` (read as a
    literal), an ``empty class`` ``[!]`` or ``[^]`` (whose ``]`` the regular expression
    took as a member, running the class on into the text after it)."""
    out, i, refused = [], 0, None
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            inner = pattern[i + 1 : end].replace("\\", "\\\\")
            refused = refused or ("empty class" if inner in ("!", "^") else None)
            out.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner) + "]")
            i = end + 1
        else:
            refused = refused or ("unclosed" if pattern[i] == "[" else None)
            out.append(re.escape(pattern[i]))
            i += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "possible nested set": still literal
        return re.compile("".join(out), re.DOTALL), refused


# the pieces globs are made of, good and broken, so that classes, ranges and runs of
# wildcards are common (arbitrary text alone seldom closes a class)
PIECES = ["*", "**", "**/", "/**", "/", "?", "a", "b", ".", "[", "]", "!", "^", "-", "\\"]
PIECES += ["[ab]", "[!a]", "[^/]", "[a-c]", "[c-a]", "[]a]", "[!]", "[]", "[a-]", "[--/]"]
patterns = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=80).map("".join),
)
paths = st.one_of(
    st.text(max_size=4096),
    st.builds(
        lambda unit, times: (unit * times)[:4096],
        st.text(alphabet="ab/.-[]", min_size=1, max_size=6),
        st.integers(0, 4096),
    ),
)


@settings(max_examples=300, deadline=1000)
@given(pattern=patterns, path=paths)
def test_any_glob_is_refused_at_compile_or_answered_within_a_bound(pattern: str, path: str) -> None:
    try:
        glob = globs.compile(pattern)
    except InvalidInput as err:
        assert str(err).startswith(f"glob {pattern!r} ") and "\n" not in str(err)
        assert code.match(pattern, path) is None  # every reader skips it
        return
    assert glob.matches(path) in (True, False)
    code.match(pattern, path)


@settings(max_examples=2000, deadline=None)
@given(
    pattern=st.text(alphabet="ab/*?[]!^-z", max_size=12),
    path=st.text(alphabet="ab/-z!^]\n", max_size=12),
)
def test_the_matcher_keeps_the_meaning_of_the_regular_expression_it_replaces(
    pattern: str, path: str
) -> None:
    try:
        expected, refused = reference(pattern)
    except re.error:
        with pytest.raises(InvalidInput):  # what the old matcher crashed on is refused
            globs.compile(pattern)
        return
    if refused:
        with pytest.raises(InvalidInput, match=refused):
            globs.compile(pattern)
        return
    assert globs.compile(pattern).matches(path) == bool(expected.fullmatch(path)), (pattern, path)
