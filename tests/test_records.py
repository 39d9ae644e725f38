"""Decision records read in place (issue 26): a team's ADR folder, named in ``[records]``,
is read as decisions, with their status and supersession, and is never written.

The records below are written for these tests, one per format memsite reads: adr-tools and
Nygard (``# N. Title``, ``Date:``, ``## Status``), MADR 2 (status and date as list items, the
``[Superseded by …]`` title prefix), MADR 3-4 and log4brains (front matter)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.errors import NotFound
from memsite.site.pages import build_site
from memsite.store.check import check_tree
from memsite.store.records import parse_day, parse_record

NOW = dt.datetime(2026, 6, 8, 14, 30, 5)

NYGARD_OLD = """\
# 2. Queue thumbnail jobs in Redis

Date: 2025-04-10

## Status

Superseded by [5. Queue thumbnail jobs in Postgres](0005-queue-jobs-in-postgres.md)

## Context

Uploads need thumbnails rendered off the request path. We already run Redis for the rate
limiter, so a list per queue costs nothing new.

## Decision

Render thumbnails from a Redis list, popped with BLMOVE into a processing list.

## Consequences

A Redis restart without persistence loses queued jobs.
"""

NYGARD_NEW = """\
# 5. Queue thumbnail jobs in Postgres

Date: 2025-11-03

## Status

Accepted

Supersedes [2. Queue thumbnail jobs in Redis](0002-queue-jobs-in-redis.md)

## Context

The Redis queue lost 900 jobs when the cache node was replaced during the October upgrade.

## Decision

Keep the job queue in a Postgres table, claimed with SELECT … FOR UPDATE SKIP LOCKED, so a
job and the upload it belongs to commit together.
"""

MADR_REJECTED = """\
---
status: rejected
date: 2025-05-20
deciders: Ana, Tomás
---

# Expose the public API through GraphQL

## Context and Problem Statement

Partners asked for fewer round trips when they sync invoices with their line items.

## Decision Outcome

Rejected. Query cost cannot be bounded per partner without a cost analyser we would have to
build, caching by URL at the CDN stops working, and the three partners who asked are served
by an `include=lines` parameter on the REST endpoint.
"""

MADR2_SUPERSEDED = """\
# [Superseded by [ADR-0007](0007-sign-webhooks-with-ed25519.md)] Sign webhooks with HMAC-SHA1

* Status: superseded by [ADR-0007](0007-sign-webhooks-with-ed25519.md)
* Deciders: platform team
* Date: 2025-06-01

## Context and Problem Statement

Webhook receivers must be able to tell our calls from forged ones.

## Decision Outcome

Chosen option: a shared secret per receiver and an HMAC-SHA1 of the body in a header.
"""

MADR2_NEW = """\
# Sign webhooks with Ed25519

* Status: accepted
* Deciders: platform team, security
* Date: 2025-09-14

## Context and Problem Statement

SHA-1 is being retired by two of our largest receivers' compliance teams, and sharing a secret
per receiver means a leak on their side lets anyone sign as us.

## Decision Outcome

Sign the body with an Ed25519 key and publish the public key at a well-known URL.
"""

LOG4BRAINS_DEPRECATED = """\
---
date: 2025-02-11
tags: [observability, logging]
status: deprecated
---

# Ship logs with Fluentd

## Context and Problem Statement

Every service writes JSON lines to stdout; something has to carry them to the log store.

## Decision Outcome

Run Fluentd as a DaemonSet.
"""

ZOONIVERSE_STYLE = """\
# ADR 9: Subject viewer selection

June 19, 2018

## Context

The classifier shows one of several viewers depending on the subject's media.

## Status

Approved by the front-end team

## Decision

Pick the viewer from the subject's media types in one function.
"""

PROPOSED = """\
# 8. Run the nightly export on spot instances

Date: 14/10/2025

## Status

🤔 Proposed

## Context

The nightly export runs for four hours on on-demand instances.
"""


def _repository(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a memory tree and a ``docs/adr`` folder named in ``[records]``."""
    repo = tmp_path / "project"
    adr = repo / "docs" / "adr"
    adr.mkdir(parents=True)
    (repo / ".git").mkdir()  # found as the repository's top without running git
    files = {
        "0002-queue-jobs-in-redis.md": NYGARD_OLD,
        "0005-queue-jobs-in-postgres.md": NYGARD_NEW,
        "0003-graphql-public-api.md": MADR_REJECTED,
        "0006-sign-webhooks-with-hmac-sha1.md": MADR2_SUPERSEDED,
        "0007-sign-webhooks-with-ed25519.md": MADR2_NEW,
        "20250211-ship-logs-with-fluentd.md": LOG4BRAINS_DEPRECATED,
        "0008-spot-instances-for-export.md": PROPOSED,
        "README.md": "# Architecture decisions\n\nOne file per decision.\n",
        "template.md": "# NUMBER. TITLE\n\nDate: DATE\n\n## Status\n\nProposed\n",
    }
    for name, text in files.items():
        (adr / name).write_text(text, "utf-8")
    root = repo / "memory"
    result = CliRunner().invoke(cli, ["init", str(root), "--records", str(adr)])
    assert result.exit_code == 0, result.output
    return repo, root


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if not p.is_symlink()
    }


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    return _repository(tmp_path)


@pytest.fixture
def memory(project: tuple[Path, Path], clock) -> Memory:  # type: ignore[no-untyped-def]
    return Memory(project[1], author="", clock=clock, cache_dir=project[0] / ".cache")


# -- each format -------------------------------------------------------------------------


def test_adr_tools_record_gives_number_title_date_state_and_successor() -> None:
    record = parse_record("../docs/adr/0002-queue-jobs-in-redis.md", NYGARD_OLD)
    assert (record.id, record.number, record.title) == (
        "0002-queue-jobs-in-redis",
        2,
        "Queue thumbnail jobs in Redis",
    )
    assert record.date == dt.date(2025, 4, 10)
    assert record.state == "superseded"
    assert record.superseded_by == ("0005-queue-jobs-in-postgres",)
    newer = parse_record("0005-queue-jobs-in-postgres.md", NYGARD_NEW)
    assert (newer.state, newer.supersedes) == ("accepted", ("0002-queue-jobs-in-redis",))


def test_madr_front_matter_gives_status_and_date() -> None:
    record = parse_record("0003-graphql-public-api.md", MADR_REJECTED)
    assert (record.title, record.state, record.date) == (
        "Expose the public API through GraphQL",
        "rejected",
        dt.date(2025, 5, 20),
    )
    assert record.problems == ()


def test_madr2_title_prefix_and_list_items_say_superseded_and_by_whom() -> None:
    record = parse_record("0006-sign-webhooks-with-hmac-sha1.md", MADR2_SUPERSEDED)
    assert record.title == "Sign webhooks with HMAC-SHA1"
    assert record.state == "superseded"
    assert record.superseded_by == ("0007-sign-webhooks-with-ed25519",)
    assert record.date == dt.date(2025, 6, 1)
    accepted = parse_record("0007-sign-webhooks-with-ed25519.md", MADR2_NEW)
    assert (accepted.state, accepted.date) == ("accepted", dt.date(2025, 9, 14))


def test_log4brains_front_matter_gives_tags_and_deprecated() -> None:
    record = parse_record("20250211-ship-logs-with-fluentd.md", LOG4BRAINS_DEPRECATED)
    assert (record.state, record.tags) == ("deprecated", ("observability", "logging"))
    assert record.date == dt.date(2025, 2, 11)


def test_status_below_the_context_and_a_written_out_date_are_found() -> None:
    record = parse_record("adr-09.md", ZOONIVERSE_STYLE)
    assert (record.number, record.title) == (9, "Subject viewer selection")
    assert (record.state, record.date) == ("accepted", dt.date(2018, 6, 19))
    proposed = parse_record("0008-spot-instances-for-export.md", PROPOSED)
    assert (proposed.state, proposed.date) == ("proposed", dt.date(2025, 10, 14))


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("2024-02-29", dt.date(2024, 2, 29)),
        ("7 April 2020", dt.date(2020, 4, 7)),
        ("8th June 2023", dt.date(2023, 6, 8)),
        ("May 2023", dt.date(2023, 5, 1)),
        ("2024-13-05", None),
        ("31/02/2021", None),
    ],
)
def test_dates_in_the_forms_records_use(text: str, day: dt.date | None) -> None:
    assert parse_day(text) == day


# -- one record, one decision ---------------------------------------------------------------


def test_every_record_of_the_folder_is_a_decision_and_the_rest_are_not(memory: Memory) -> None:
    decisions = {e.id: e for e in memory.entries("decision")}
    assert set(decisions) == {
        "0002-queue-jobs-in-redis",
        "0003-graphql-public-api",
        "0005-queue-jobs-in-postgres",
        "0006-sign-webhooks-with-hmac-sha1",
        "0007-sign-webhooks-with-ed25519",
        "0008-spot-instances-for-export",
        "20250211-ship-logs-with-fluentd",
    }
    redis = decisions["0002-queue-jobs-in-redis"]
    assert redis.path == "../docs/adr/0002-queue-jobs-in-redis.md"
    assert redis.fields["superseded-by"] == "0005-queue-jobs-in-postgres"
    assert decisions["0007-sign-webhooks-with-ed25519"].supersedes == (
        "0006-sign-webhooks-with-hmac-sha1"
    )


def test_hits_carry_status_and_successor_and_current_leaves_out_what_does_not_hold(
    memory: Memory,
) -> None:
    hits = {h.record: h for h in memory.search("thumbnail jobs queue redis", lexical=True)}
    old = hits["0002-queue-jobs-in-redis"]
    assert old.status == "superseded"
    assert old.superseded_by.id == "0005-queue-jobs-in-postgres"
    assert hits["0005-queue-jobs-in-postgres"].status == "current"
    statuses = {h.record: h.status for h in memory.search("graphql webhooks fluentd spot")}
    assert statuses["0003-graphql-public-api"] == "rejected"
    assert statuses["20250211-ship-logs-with-fluentd"] == "deprecated"
    assert statuses["0008-spot-instances-for-export"] == "proposed"
    current = {h.record for h in memory.search("graphql webhooks fluentd queue", current=True)}
    assert "0003-graphql-public-api" not in current
    assert "20250211-ship-logs-with-fluentd" not in current
    assert "0006-sign-webhooks-with-hmac-sha1" not in current
    assert "0007-sign-webhooks-with-ed25519" in current


def test_search_json_names_the_successor_of_a_record(project: tuple[Path, Path]) -> None:
    root = project[1]
    done = CliRunner().invoke(
        cli, ["--root", str(root), "search", "HMAC-SHA1 webhooks", "--json", "--lexical"]
    )
    assert done.exit_code == 0, done.output
    rows = {row["id"]: row for row in json.loads(done.stdout)}
    old = rows["0006-sign-webhooks-with-hmac-sha1"]
    assert old["status"] == "superseded"
    assert old["superseded_by"]["id"] == "0007-sign-webhooks-with-ed25519"


def test_recall_about_a_superseded_record_holds_its_successor_first(memory: Memory) -> None:
    recalled = memory.recall("how do we queue thumbnail jobs? Redis lists?", budget=3000)
    records = [h.record for h in recalled.hits]
    assert "0002-queue-jobs-in-redis" in records
    assert records.index("0005-queue-jobs-in-postgres") < records.index("0002-queue-jobs-in-redis")
    assert "**Superseded** by Queue thumbnail jobs in Postgres" in recalled.markdown


def test_prime_puts_the_record_that_holds_first_and_the_replaced_one_as_a_line(
    memory: Memory,
) -> None:
    primed = memory.prime("queue thumbnail jobs in redis", lexical=True).markdown
    holds = primed.index("Queue thumbnail jobs in Postgres")
    replaced = primed.index(
        "Superseded: 2. Queue thumbnail jobs in Redis (0002-queue-jobs-in-redis), replaced by "
        "Queue thumbnail jobs in Postgres (0005-queue-jobs-in-postgres)"
    )
    assert holds < replaced


def test_a_rejected_record_is_recalled_as_rejected_with_its_reasons(memory: Memory) -> None:
    recalled = memory.recall("should the public API use GraphQL for partners?", budget=3000)
    assert recalled.hits[0].record == "0003-graphql-public-api"
    assert recalled.hits[0].status == "rejected"
    assert "**Rejected**" in recalled.markdown
    assert "caching by URL at the CDN stops working" in recalled.markdown


def test_get_finds_a_record_by_id_with_its_status(memory: Memory) -> None:
    found = memory.get("0006-sign-webhooks-with-hmac-sha1")
    assert found.status == "superseded"
    assert found.superseded_by.id == "0007-sign-webhooks-with-ed25519"
    assert found.markdown == MADR2_SUPERSEDED
    same = memory.get("../docs/adr/0006-sign-webhooks-with-hmac-sha1.md")
    assert same.entry.id == found.entry.id


def test_decide_supersedes_a_record_without_touching_it(
    memory: Memory, project: tuple[Path, Path]
) -> None:
    adr = project[0] / "docs" / "adr"
    before = _digests(adr)
    new = memory.decide(
        "Queue thumbnail jobs in the object store's events",
        why="the uploads bucket emits an event per object",
        supersedes="0005-queue-jobs-in-postgres",
        at="2026-06-01",
    )
    assert _digests(adr) == before
    hits = {h.record: h for h in memory.search("queue thumbnail jobs postgres", lexical=True)}
    assert hits["0005-queue-jobs-in-postgres"].superseded_by.id == new
    assert hits["0002-queue-jobs-in-redis"].superseded_by.id == new  # the end of its chain
    with pytest.raises(NotFound):
        memory.decide("Another", why="x", supersedes="0099-no-such-record", at="2026-06-02")


def test_record_files_are_byte_identical_after_search_recall_check_and_build(
    project: tuple[Path, Path],
) -> None:
    repo, root = project
    adr = repo / "docs" / "adr"
    before = _digests(adr)
    runner = CliRunner()
    for args in (
        ["search", "webhooks"],
        ["recall", "how do we sign webhooks?"],
        ["check"],
        ["build", "--docs-only", str(repo / "built")],
    ):
        done = runner.invoke(cli, ["--root", str(root), *args])
        assert done.exit_code == 0, (args, done.output)
    assert _digests(adr) == before
    assert not list(adr.glob(".*"))  # nothing left beside them either


def test_site_puts_records_on_the_timeline_and_tag_pages_with_their_badges(
    project: tuple[Path, Path],
) -> None:
    site = build_site(project[1], NOW, related=False)
    timeline = site.page("decisions/index.md").markdown
    for record, badge in (
        ("0003-graphql-public-api", "rejected"),
        ("20250211-ship-logs-with-fluentd", "deprecated"),
        ("0008-spot-instances-for-export", "proposed"),
        ("0006-sign-webhooks-with-hmac-sha1", "superseded"),
        ("0007-sign-webhooks-with-ed25519", "current"),
    ):
        at = timeline.index(f"{{#{record}}}")
        assert f'ms-badge--{badge}">{badge}' in timeline[at : at + 300], record
    assert "Superseded** by [Sign webhooks with Ed25519]" in timeline
    # each status counted on its own (issue 39.6: "5 superseded, proposed, rejected or ...")
    assert (
        "7 decisions, newest first: 2 current, 2 superseded, 1 proposed, 1 rejected, 1 deprecated."
    ) in timeline
    tag = site.page("tags/observability.md").markdown
    assert 'ms-badge--deprecated">deprecated</span>' in tag
    assert "Ship logs with Fluentd" in tag


# -- dates git knows ------------------------------------------------------------------------


def _git(repo: Path, *args: str, day: str = "2024-03-09T10:00:00") -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": day,
        "GIT_COMMITTER_DATE": day,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def test_a_record_without_a_real_date_takes_the_day_git_first_saw_it(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    adr = repo / "docs" / "decisions"
    adr.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (adr / "0001-use-rabbitmq.md").write_text(
        "# 1. Use RabbitMQ\n\nDate: 2024-13-05\n\n## Status\n\nAccepted\n", "utf-8"
    )
    (adr / "0002-use-nats.md").write_text("# 2. Use NATS\n\n## Status\n\nProposed\n", "utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "records")
    root = repo / "memory"
    assert CliRunner().invoke(cli, ["init", str(root), "--records", str(adr)]).exit_code == 0
    dates = {e.id: e.date for e in Memory(root).entries("decision")}
    assert dates == {"0001-use-rabbitmq": dt.date(2024, 3, 9), "0002-use-nats": dt.date(2024, 3, 9)}
    said = [str(p) for p in check_tree(root)]
    assert (
        "../docs/decisions/0001-use-rabbitmq.md:1: warning: date '2024-13-05' is not a real date; "
        "the date git first saw the file is used" in said
    )
    assert (
        "../docs/decisions/0002-use-nats.md:1: warning: no date; the date git first saw the file "
        "is used" in said
    )


# -- memsite init --records ---------------------------------------------------------------


def test_init_records_names_the_folder_relative_to_the_tree(project: tuple[Path, Path]) -> None:
    repo, root = project
    assert (root / "memsite.toml").read_text("utf-8") == (
        '[records]\n# decision records read in place as decisions\npaths = ["../docs/adr"]\n'
    )
    before = (root / "memsite.toml").read_bytes()
    again = CliRunner().invoke(cli, ["init", str(root), "--records", str(repo / "docs" / "adr")])
    assert again.exit_code == 0 and "are read as decisions" not in again.output
    assert (root / "memsite.toml").read_bytes() == before  # named once, never twice


@pytest.mark.parametrize("where", ["outside", "inside", "missing"])
def test_init_records_refuses_a_folder_it_cannot_read_as_usage_error(
    tmp_path: Path, where: str
) -> None:
    repo = tmp_path / "project"
    (repo / ".git").mkdir(parents=True)
    folder = {
        "outside": tmp_path,
        "inside": repo / "memory" / "cold",
        "missing": repo / "docs" / "nowhere",
    }[where]
    folder.mkdir(parents=True, exist_ok=True) if where != "missing" else None
    done = CliRunner().invoke(cli, ["init", str(repo / "memory"), "--records", str(folder)])
    assert done.exit_code == 2
    assert "--records" in done.output and "Traceback" not in done.output
    assert not (repo / "memory" / "memsite.toml").exists()


def test_a_records_folder_inside_the_tree_is_a_problem_not_a_second_reading(
    root: Path,
) -> None:
    (root / "notes").mkdir()
    (root / "notes" / "0001-x.md").write_text(NYGARD_NEW, "utf-8")
    (root / "memsite.toml").write_text('[records]\npaths = ["notes"]\n', "utf-8")
    said = [str(p) for p in check_tree(root)]
    assert any("[records] paths 'notes' is inside the memory tree" in line for line in said)
    kinds = {e.path: e.kind for e in Memory(root).entries()}
    assert kinds["notes/0001-x.md"] == "note"


def test_the_mcp_get_tool_reads_a_record_by_its_id(project: tuple[Path, Path]) -> None:
    pytest.importorskip("mcp")
    from test_mcp import talk  # the MCP SDK's own stdio client against `memsite mcp`

    repo = project[0]
    (repo / "src").mkdir()

    async def scenario(session):  # type: ignore[no-untyped-def]
        return await session.call_tool("get", {"id": "0003-graphql-public-api"})

    got = talk(repo, scenario)
    assert not got.is_error, got
    assert got.structured_content["status"] == "rejected"
    assert got.structured_content["markdown"] == MADR_REJECTED
    assert got.structured_content["path"] == "../docs/adr/0003-graphql-public-api.md"


def test_globs_and_several_folders_with_a_duplicate_id_named_by_check(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    (repo / ".git").mkdir(parents=True)
    (repo / "services" / "billing" / "adr").mkdir(parents=True)
    (repo / "services" / "billing" / "adr" / "0001-invoices-in-cents.md").write_text(
        "# 1. Keep invoice amounts in cents\n\nDate: 2025-01-10\n\n## Status\n\nAccepted\n",
        "utf-8",
    )
    (repo / "services" / "search" / "adr").mkdir(parents=True)
    (repo / "services" / "search" / "adr" / "0001-invoices-in-cents.md").write_text(
        "# 1. A copy in the wrong folder\n\nDate: 2025-02-10\n", "utf-8"
    )
    (repo / "services" / "search" / "adr" / "0002-use-opensearch.md").write_text(
        "# 2. Use OpenSearch\n\nDate: 2025-03-01\n\n## Status\n\nAccepted\n", "utf-8"
    )
    root = repo / "memory"
    CliRunner().invoke(cli, ["init", str(root)])
    (root / "memsite.toml").write_text(
        '[records]\npaths = ["../services/*/adr/*.md", "../../elsewhere"]\n', "utf-8"
    )
    titles = {e.path: e.title for e in Memory(root).entries("decision")}
    assert titles == {
        "../services/billing/adr/0001-invoices-in-cents.md": "Keep invoice amounts in cents",
        "../services/search/adr/0002-use-opensearch.md": "Use OpenSearch",
    }
    said = [str(p) for p in check_tree(root)]
    assert (
        "../services/search/adr/0001-invoices-in-cents.md:1: error: duplicate record id "
        "'0001-invoices-in-cents' (also ../services/billing/adr/0001-invoices-in-cents.md); "
        "skipped" in said
    )
    assert (
        "memsite.toml:1: error: [records] paths '../../elsewhere' is outside the repository; "
        "not read" in said
    )
