"""Hostile decision records (issue 26): each bad record is read as far as it goes or skipped,
``memsite check`` names its file and its problem in one line, and search, recall, the hooks
and the site go on."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.site.pages import build_site
from memsite.store.records import parse_record

NOW = dt.datetime(2026, 6, 8, 14, 30, 5)
GOOD = "# 1. Cache sessions in Valkey\n\nDate: 2025-01-04\n\n## Status\n\nAccepted\n\n## Decision\n\nValkey.\n"

# file name -> (content, the problem check names for it)
HUGE = b"# 8. Huge\n\n" + b"All work and no play makes a record a dull read. " * 110_000
HOSTILE: dict[str, tuple[bytes, str]] = {
    "0002-no-title.md": (
        b"Date: 2025-02-01\n\n## Status\n\nAccepted\n\n## Decision\n\nKeep the cron job.\n",
        "error: no title (# line); named after its file",
    ),
    "0003-two-titles.md": (
        b"# 3. Rotate keys monthly\n\nDate: 2025-03-01\n\n# 3. Rotate keys weekly\n",
        "5: error: a second title (# line; the first is line 1)",
    ),
    "0004-broken-front-matter.md": (
        b"---\nstatus: accepted\ndate: 2025-04-01\n# 4. Use Terraform workspaces\n\nText.\n",
        "error: front matter opened by '---' is never closed; read as text",
    ),
    "0005-names-a-missing-record.md": (
        b"# 5. Drop the VPN\n\nDate: 2025-05-01\n\n## Status\n\n"
        b"Superseded by [42. Zero trust](0042-zero-trust.md)\n",
        "error: status names record '0042-zero-trust', which does not exist",
    ),
    "0006-cycle-one.md": (
        b"# 6. Deploy with Argo\n\nDate: 2025-06-01\n\n## Status\n\n"
        b"Superseded by [7. Flux](0007-cycle-two.md)\n",
        "error: supersession cycle",
    ),
    "0007-cycle-two.md": (
        b"# 7. Deploy with Flux\n\nDate: 2025-07-01\n\n## Status\n\n"
        b"Superseded by [6. Argo](0006-cycle-one.md)\n",
        "error: supersession cycle",
    ),
    "0008-huge.md": (
        HUGE,
        f"error: {len(HUGE):,} bytes, over the 1,048,576-byte limit of a record; not read",
    ),
    "0009-latin1.md": (
        "# 9. Café rules\n\nDate: 2025-09-01\n".encode("latin-1"),
        "error: not valid UTF-8 (byte 0xe9); record skipped",
    ),
}


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "project"
    adr = repo / "docs" / "adr"
    adr.mkdir(parents=True)
    (repo / ".git").mkdir()
    (adr / "0001-cache-sessions.md").write_text(GOOD, "utf-8")
    for name, (raw, _) in HOSTILE.items():
        (adr / name).write_bytes(raw)
    secret = tmp_path / "elsewhere" / "0010-secret.md"
    secret.parent.mkdir()
    secret.write_text("# 10. A file of the machine, not of the repository\n", "utf-8")
    (adr / "0010-link-out.md").symlink_to(secret)
    root = repo / "memory"
    done = CliRunner().invoke(cli, ["init", str(root), "--records", str(adr)])
    assert done.exit_code == 0, done.output
    return repo, root


def test_check_names_each_bad_record_and_its_problem_in_one_line(
    project: tuple[Path, Path],
) -> None:
    done = CliRunner().invoke(cli, ["--root", str(project[1]), "check"])
    assert done.exit_code == 1  # errors among them
    lines = done.output.splitlines()
    for name, (_, problem) in {
        **HOSTILE,
        "0010-link-out.md": (b"", "error: symbolic link points outside the repository; not read"),
    }.items():
        said = [line for line in lines if line.startswith(f"../docs/adr/{name}:")]
        assert any(problem in line for line in said), (name, said)
    assert not any(line.startswith("../docs/adr/0001-cache-sessions.md") for line in lines)
    assert "Traceback" not in done.output


def test_bad_records_are_read_as_far_as_they_go(project: tuple[Path, Path]) -> None:
    decisions = {e.id: e for e in Memory(project[1]).entries("decision")}
    assert decisions["0002-no-title"].title == "0002 no title"
    assert decisions["0003-two-titles"].title == "Rotate keys monthly"
    assert decisions["0005-names-a-missing-record"].fields["status"] == "superseded"
    # the cycle is cut where it closes: the newer record holds
    assert decisions["0006-cycle-one"].fields["superseded-by"] == "0007-cycle-two"
    assert "superseded-by" not in decisions["0007-cycle-two"].fields
    for skipped in ("0008-huge", "0009-latin1", "0010-link-out"):
        assert skipped not in decisions


def test_search_recall_hook_and_site_go_on(project: tuple[Path, Path]) -> None:
    root = project[1]
    memory = Memory(root, cache_dir=project[0] / ".cache")
    hits = memory.search("deploy argo flux sessions valkey", lexical=True)
    statuses = {h.record: h.status for h in hits}
    assert statuses["0007-cycle-two"] == "current"
    assert statuses["0006-cycle-one"] == "superseded"
    assert "0001-cache-sessions" in statuses
    assert not any("secret" in h.text or "dull read" in h.text for h in hits)
    recalled = memory.recall("where do we cache sessions? valkey?")
    assert recalled.hits and recalled.hits[0].record == "0001-cache-sessions"
    prompt = {
        "session_id": "s",
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": str(project[0]),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "where do we cache sessions? valkey?",
    }
    done = CliRunner().invoke(cli, ["--root", str(root), "hook"], input=json.dumps(prompt))
    assert done.exit_code == 0 and "Cache sessions in Valkey" in done.stdout
    site = build_site(root, NOW, related=False)
    timeline = site.page("decisions/index.md").markdown
    assert "Cache sessions in Valkey" in timeline and "A file of the machine" not in timeline


def test_a_megabyte_of_brackets_where_a_link_is_looked_for_is_read_at_once() -> None:
    """The patterns that find a status's links see at most a few thousand characters of a
    line (a pattern over a megabyte of ``[`` took time in its square)."""
    text = "# 11. " + "[" * 400_000 + "\n\n## Status\n\nSuperseded by " + "[" * 500_000 + "\n"
    record = parse_record("0011-brackets.md", text)
    assert record.state == "superseded" and record.superseded_by == ()
    assert len(record.title) <= 202 and record.title.endswith(" …")
