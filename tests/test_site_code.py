"""The code entries govern, on the site (issue 14): each decision's and learning's paths and
commit, the Code page, the commits of a day, and a commit link once ``repo_url`` is set."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.site.pages import build_site
from memsite.site.search_index import read_documents
from memsite.store.tree import init_tree

NOW = dt.datetime(2026, 3, 25, 9, 0)
HASH = "0123456789abcdef0123456789abcdef01234567"
SHOWN = f'`{HASH[:10]}`{{ title="{HASH}" }}'  # ten characters, the whole hash on hover
REPO_URL = "https://github.com/example/shop"
HOSTILE_PATH = 'src/<img src=x onerror="window.PWNED=1">.py'


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, author="ana")
    ids = {
        "mongo": memory.decide(
            "Keep sessions in MongoDB",
            why="Less change.",
            paths=["services/auth/store/"],
            commit=HASH,
            at="2026-03-01T10:00:00",
        ),  # fmt: skip
        "learn": memory.learn(
            "Bulk deletes bloat the table",
            category="database",
            why="Vacuum.",
            paths=["migrations/**"],
            commit="v1.2",
            at="2026-03-02T10:00:00",
        ),  # fmt: skip
    }
    ids["pg"] = memory.decide(
        "Move sessions to Postgres", why="One database.", supersedes=ids["mongo"],
        paths=["services/auth/store/", "services/auth/store/postgres.py", HOSTILE_PATH],
        at="2026-03-20T10:00:00",
    )  # fmt: skip
    ids["ran"] = memory.log("ran the migration", commit=HASH, at="2026-03-20T11:00:00")
    return root, ids


def test_entries_show_their_paths_and_commit_linked_when_repo_url_is_set(tree) -> None:
    root, ids = tree
    site = build_site(root, NOW, related=False, repo_url=REPO_URL + "/")
    timeline = site.page("decisions/index.md").markdown
    mongo = timeline[timeline.index(f"{{#{ids['mongo']}}}") :]
    assert "**Paths:** `services/auth/store/`\n{: .ms-paths }" in mongo
    assert f"**Commit:** [{SHOWN}]({REPO_URL}/commit/{HASH})\n{{: .ms-commit }}" in mongo
    learning = site.page("learnings/database.md").markdown
    assert "**Paths:** `migrations/**`" in learning
    assert "**Commit:** `v1.2`" in learning  # not a hash: shown, never linked
    plain = build_site(root, NOW, related=False).page("decisions/index.md").markdown
    assert f"**Commit:** {SHOWN}" in plain and "/commit/" not in plain


def test_a_path_holding_html_is_a_code_span(tree) -> None:
    root, ids = tree
    timeline = build_site(root, NOW, related=False).page("decisions/index.md").markdown
    assert f"`{HOSTILE_PATH}`" in timeline
    assert timeline.count("<img") == timeline.count(f"`{HOSTILE_PATH}`")


def test_the_code_page_lists_each_path_with_its_decisions_newest_first(
    tree, tmp_path: Path
) -> None:
    root, ids = tree
    site = build_site(root, NOW, related=False, repo_url=REPO_URL)
    assert {"Code": "code/index.md"} in site.nav
    page = site.page("code/index.md").markdown
    sections = page.split("\n## ")[1:]
    assert [s.split("\n", 1)[0] for s in sections] == [
        "`services/auth/store/`",
        "`services/auth/store/postgres.py`",
        f"`{HOSTILE_PATH}`",
    ]  # decisions' paths only: the learning's glob is not a decision's
    store = [line for line in sections[0].strip().splitlines()[1:] if line]
    assert len(store) == 2
    assert store[0].startswith(
        '- <span class="ms-badge ms-badge--current">current</span> [Move sessions to Postgres]'
        f"(../decisions/index.md#{ids['pg']})"
    )
    assert store[1].startswith(
        '- <span class="ms-badge ms-badge--superseded">superseded</span> [Keep sessions in '
        f"MongoDB](../decisions/index.md#{ids['mongo']})"
    )
    assert store[1].endswith(f"· [{SHOWN}]({REPO_URL}/commit/{HASH})")
    # a tree whose decisions name no path has no Code page
    bare = tmp_path / "bare" / "memory"
    init_tree(bare)
    Memory(bare, author="").decide("Plain", why="w", at="2026-03-01T10:00:00")
    plain = build_site(bare, NOW, related=False)
    assert all(page.uri != "code/index.md" for page in plain.pages)
    assert all("Code" not in item for item in plain.nav if isinstance(item, dict))


def test_a_day_page_shows_the_commits_of_its_entries(tree) -> None:
    root, ids = tree
    day = build_site(root, NOW, related=False, repo_url=REPO_URL).page("activity/2026-03-20.md")
    commits = (
        day.markdown.split("## Commits {: .ms-nav }\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    )
    assert commits == [
        f"- [{SHOWN}]({REPO_URL}/commit/{HASH}) [ran the migration](2026-03-20.md#{ids['ran']})"
    ]
    other = build_site(root, NOW, related=False).page("activity/2026-03-02.md").markdown
    learned = f"../learnings/database.md#{ids['learn']}"
    assert (
        f"## Commits {{: .ms-nav }}\n\n- `v1.2` [Bulk deletes bloat the table]({learned})\n"
        in other
    )


def test_mkdocs_repo_url_reaches_the_built_pages(tree, tmp_path: Path, monkeypatch) -> None:
    from memsite.site.builder import default_config

    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    root, ids = tree
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    shutil.copytree(root, work / "memory")
    config = default_config(Path("memory"), Path("docs"), Path("site"))
    config["plugins"][-1] = {"memsite": {"root": "memory"}}
    config["repo_url"] = REPO_URL
    (work / "mkdocs.yml").write_text(yaml.safe_dump(config), "utf-8")
    monkeypatch.chdir(work)
    result = CliRunner().invoke(cli, ["build", "--strict"])
    assert result.exit_code == 0, result.output
    html = (work / "site" / "code" / "index.html").read_text("utf-8")
    assert f'href="{REPO_URL}/commit/{HASH}"' in html
    assert "&lt;img src=x" in html and "<img" not in html  # the path shows as text, inert
    # a day's lists of commits and of what was decided repeat its entries: not searched
    day = [
        d for d in read_documents(work / "site") if d["location"].startswith("activity/2026-03-20")
    ]
    assert any(ids["ran"] in d["location"] for d in day)  # the log entry itself is
    assert not any(d["title"] in ("Commits", "Decided and learned") for d in day)
    assert HASH[:10] not in json.dumps(day)
