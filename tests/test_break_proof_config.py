"""The break-proof review, round 3 (issue 22): the configuration files, as an attacker or an
accident would leave them.

``memory/memsite.toml`` is read through ``memsite.store.config`` and ``reading.read_inside``:
a link out of the tree, a FIFO, 10 MB, a 401-digit integer, 100,000 nested arrays, ``nan``
or a wrong type are each one line naming the file and the key, never a traceback, a hang or
a quote of the file refused. The repository's ``mkdocs.yml`` is escaped too: Material prints
``site_name``, ``repo_name``, ``repo_url``, ``site_url``, ``edit_uri``, ``copyright``,
``site_description`` and ``site_author`` raw into every page, so the plugin makes them safe,
and refuses a link that is not a web address. Each test failed on the code before the fix.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from memsite.cli import cli
from memsite.store import config, reading
from memsite.store.tree import init_tree
from tests.browsing import chromium, require_chromium, serve
from tests.test_site_safety import scan_site

SECRET = "s3cr3t_hunter2_root_hash"


@pytest.fixture
def budget(root: Path, monkeypatch: pytest.MonkeyPatch):
    """``memsite budget`` of ``root`` with ``text`` as its memsite.toml (None: leave it)."""
    monkeypatch.delenv("MEMSITE_ROOT", raising=False)

    def run(text: str | bytes | None):
        if isinstance(text, str):
            (root / "memsite.toml").write_text(text, "utf-8")
        elif text is not None:
            (root / "memsite.toml").write_bytes(text)
        return CliRunner().invoke(cli, ["--root", str(root), "budget", "--json"])

    return run


def one_line_error(done) -> str:
    """The error of a command that failed as it should: exit 1, one line, no traceback."""
    assert done.exit_code == 1, (done.exit_code, done.output, done.exception)
    assert isinstance(done.exception, SystemExit), done.exception  # not a traceback
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    return done.stderr


# -- where memsite.toml is, and what it is --------------------------------------------------


@pytest.mark.parametrize(
    "outside",
    [
        f"[budget]\nwindow = 200000\n{SECRET} = 1\n",  # valid TOML: its keys were listed
        f"root:$6${SECRET}:19000:0:99999:7:::\n",  # /etc/shadow: a parse position was given
    ],
)
def test_a_memsite_toml_linked_outside_the_tree_is_refused_and_never_quoted(
    budget, root: Path, tmp_path: Path, outside: str
) -> None:
    target = tmp_path / "outside" / "shadow"
    target.parent.mkdir()
    target.write_text(outside)
    (root / "memsite.toml").symlink_to(target)
    said = one_line_error(budget(None))
    assert "memsite.toml: resolves outside the memory tree" in said
    assert "replace the link with the file itself" in said
    assert SECRET not in said and "column" not in said and "line 1" not in said


def test_a_memsite_toml_linked_inside_the_tree_is_read(budget, root: Path) -> None:
    (root / "settings").mkdir()
    (root / "settings" / "memsite.toml").write_text("[budget]\nwindow = 100000\nhot = 20000\n")
    (root / "memsite.toml").symlink_to(Path("settings", "memsite.toml"))
    done = budget(None)
    assert done.exit_code == 0, done.output
    assert '"share": 40000' in done.stdout


def test_a_fifo_in_place_of_memsite_toml_answers_at_once(root: Path) -> None:
    """A FIFO blocked every command that read the budget, for ever."""
    os.mkfifo(root / "memsite.toml")
    env = {k: v for k, v in os.environ.items() if k != "MEMSITE_ROOT"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memsite", "--root", str(root), "budget"],
            capture_output=True,
            text=True,
            timeout=3,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("memsite budget still waits on the FIFO after 3 s")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"Error: {root / 'memsite.toml'}: a FIFO, not a regular file; not read, replace it "
        "with a file"
    ]


def test_read_inside_never_opens_a_fifo_for_reading(tmp_path: Path) -> None:
    """The storage door itself: a FIFO is refused before a byte is read (a thread, so a
    regression fails the test instead of hanging it: writing to the FIFO frees it)."""
    fifo = tmp_path / "hot.json"
    os.mkfifo(fifo)
    outcome: list[BaseException | bytes] = []

    def read() -> None:
        try:
            outcome.append(reading.read_inside(tmp_path, fifo))
        except BaseException as err:  # noqa: BLE001 - the test inspects it
            outcome.append(err)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(3)
    if thread.is_alive():
        with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        thread.join(3)
        pytest.fail("read_inside blocked on a FIFO")
    assert isinstance(outcome[0], reading.NotAFile), outcome
    assert "a FIFO, not a regular file" in str(outcome[0])


def test_a_folder_in_place_of_memsite_toml_is_one_line(budget, root: Path) -> None:
    (root / "memsite.toml").mkdir()
    assert "memsite.toml: a folder, not a regular file" in one_line_error(budget(None))


def test_a_10_mb_memsite_toml_is_refused_unread(budget) -> None:
    padding = ("# " + "x" * 98 + "\n") * 100_000  # valid TOML: it was parsed whole
    said = one_line_error(budget("[budget]\nhot = 20000\n" + padding))
    assert "memsite.toml: 10,100,021 bytes, over its 65,536-byte limit; not read; fix or" in said


# -- what memsite.toml holds ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "key", "what"),
    [
        ("hot = " + "9" * 401, "hot", "an integer from 0 to 10,000,000"),  # OverflowError
        ("window = " + "9" * 401, "window", "an integer from 1,000 to 10,000,000"),
        ("hot = nan", "hot", "an integer from 0 to 10,000,000"),
        ("window = inf", "window", "an integer from 1,000 to 10,000,000"),
        ("hot = -inf", "hot", "an integer from 0 to 10,000,000"),
        ("hot = 1e400", "hot", "an integer from 0 to 10,000,000"),
        ("window = 999", "window", "an integer from 1,000 to 10,000,000"),  # was accepted
        ("hot = 10_000_001", "hot", "an integer from 0 to 10,000,000"),  # was accepted
        ('hot = "20000"', "hot", "an integer from 0 to 10,000,000"),
        ("hot = true", "hot", "an integer from 0 to 10,000,000"),
        ("hot = 2.5e4", "hot", "an integer from 0 to 10,000,000"),
        ("window = [200000]", "window", "an integer from 1,000 to 10,000,000"),
        ("hot = {tokens = 1}", "hot", "an integer from 0 to 10,000,000"),
    ],
)
def test_a_number_is_checked_where_it_enters_and_the_key_named(
    budget, root: Path, line: str, key: str, what: str
) -> None:
    said = one_line_error(budget(f"[budget]\n{line}\n"))
    assert said == f"Error: {root / 'memsite.toml'}: [budget] {key} must be {what}\n"


@pytest.mark.parametrize("depth", [100_000, 20_000])  # over the size limit, and under it
def test_arrays_nested_deep_are_one_line(budget, depth: int) -> None:
    said = one_line_error(budget("[budget]\nhot = " + "[" * depth + "]" * depth + "\n"))
    assert "nested too deeply" in said or "65,536-byte limit" in said
    if depth * 2 < config.MAX_BYTES:
        assert "arrays or tables nested too deeply; fix or delete it" in said


def test_an_integer_of_thousands_of_digits_is_one_line(budget) -> None:
    """Past Python's 4,300-digit limit, ``int()`` inside the parser raises ValueError."""
    said = one_line_error(budget("[budget]\nhot = " + "9" * 5_000 + "\n"))
    assert "holds a number too long to read; fix or delete it" in said


def test_a_toml_error_gives_its_line_and_nothing_of_the_text(budget, root: Path) -> None:
    said = one_line_error(budget(f"[budget]\nhot = 1\n{SECRET} = = 3\n"))
    assert said == f"Error: {root / 'memsite.toml'}: not valid TOML at line 3; fix or delete it\n"


def test_bytes_that_are_not_utf8_are_one_line(budget) -> None:
    said = one_line_error(budget(b"[budget]\nhot = 1 # \xff\xfe\n"))
    assert said.endswith("memsite.toml: not UTF-8 text; fix or delete it\n")


def test_a_budget_that_is_not_a_table_or_has_an_unknown_key_is_named(budget) -> None:
    assert "budget must be a table, written [budget]" in one_line_error(budget("budget = 3\n"))
    said = one_line_error(budget(f'[budget]\n"{SECRET * 4}" = 1\n'))
    assert f"[budget] has no key '{(SECRET * 4)[:40]}…'; the keys are window, system," in said


def test_the_shares_come_from_the_file_only_when_it_sets_them(budget) -> None:
    import json

    assert json.loads(budget("# nothing set\n").stdout)["source"] == "defaults"
    table = json.loads(budget("[budget]\nwindow = 1000\nhot = 500\n").stdout)
    assert table["source"].endswith("memsite.toml")
    assert {row["tier"]: row["share"] for row in table["tiers"]}["hot"] == 100_000


def test_every_kind_of_key_refuses_what_it_cannot_use(root: Path) -> None:
    """The module's other kinds, for the settings that come next (per-tool capture
    switches, ``[records]``)."""
    table = config.Table(
        "t",
        {
            "share": config.Number(0, 1),
            "on": config.Flag(),
            "name": config.Text(longest=10),
            "mode": config.Choice(("fast", "full")),
        },
    )
    good = '[t]\nshare = 0.5\non = false\nname = "R&D"\nmode = "full"\n'
    (root / "memsite.toml").write_text(good)
    assert config.read(root, table) == {"share": 0.5, "on": False, "name": "R&D", "mode": "full"}
    bad = {
        "share = nan": "[t] share must be a number from 0 to 1",
        "share = inf": "[t] share must be a number from 0 to 1",
        "share = " + "9" * 401: "[t] share must be a number from 0 to 1",
        "on = 1": "[t] on must be true or false",
        'name = "a\\nb"': "[t] name must be one line of text of at most 10 characters",
        'name = "eleven char"': "[t] name must be one line of text of at most 10 characters",
        'mode = "slow"': "[t] mode must be one of 'fast', 'full'",
    }
    for line, message in bad.items():
        (root / "memsite.toml").write_text(f"[t]\n{line}\n")
        with pytest.raises(config.BadConfig) as caught:
            config.read(root, table)
        assert str(caught.value) == f"{root / 'memsite.toml'}: {message}", line


# -- mkdocs.yml: the repository's own config in every page ----------------------------------

SITE_NAME = (
    'R&D <notes> </title><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
)
HOSTILE_SETTINGS = {
    "site_name": SITE_NAME,
    "site_url": 'https://example.com/"><script>window.__pwned=3</script>',
    "repo_url": 'https://example.com/r"onmouseover="window.__pwned=4',
    "repo_name": '<img src=x onerror="window.__pwned=5">',
    "edit_uri": 'edit/main/docs/"onmouseover="window.__pwned=6',
    "copyright": (
        '&copy; Team <a href="https://example.com/team">us</a>'
        '<img src=x onerror="window.__pwned=7"><script>window.__pwned=8</script>'
    ),
    "site_description": '"><script>window.__pwned=9</script>',
    "site_author": '"><script>window.__pwned=10</script>',
}


def build_with(work: Path, settings: dict[str, object]) -> Path:
    """``memsite build`` of a tree with a ``mkdocs.yml`` holding ``settings`` and one page of
    the team's own (Material gives it an edit link)."""
    import yaml

    from memsite.site.builder import build

    init_tree(work / "memory")
    (work / "docs").mkdir()
    (work / "docs" / "guide.md").write_text("# Guide\n\nThe team's own page.\n")
    mkdocs = {
        **settings,
        "docs_dir": "docs",
        "theme": {"name": "material", "features": ["content.action.edit", "content.action.view"]},
        "plugins": ["search", {"memsite": {"root": "memory"}}],
    }
    (work / "mkdocs.yml").write_text(yaml.safe_dump(mkdocs), "utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NO_MKDOCS_2_WARNING", "1")
        patch.delenv("MEMSITE_SITE_ROOT", raising=False)
        patch.chdir(work)
        return build(None, site_dir=work / "site", config_file=work / "mkdocs.yml")


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_with(tmp_path_factory.mktemp("config-site"), HOSTILE_SETTINGS)


def test_no_setting_of_mkdocs_yml_is_live_in_any_page(hostile_site: Path) -> None:
    # the theme's own scripts hold site_url as the base of every link: percent-encoded, inert
    encoded = "/%22%3E%3Cscript%3Ewindow.__pwne"  # (a hit shows 60 characters)
    assert [hit for hit in scan_site(hostile_site) if encoded not in hit] == []
    for page in ("index.html", "guide/index.html", "decisions/index.html"):
        text = (hostile_site / page).read_text("utf-8")
        assert '"onmouseover=' not in text and "<script>window" not in text, page
        header = re.search(
            r'md-header__topic">\s*<span class="md-ellipsis">\s*(.*?)\s*</span>', text
        )
        assert header is not None and html.unescape(header.group(1)) == SITE_NAME, page
        title = re.search(r"<title>(.*?)</title>", text)  # escaped once, not twice
        assert title is not None and html.unescape(title.group(1)).endswith(SITE_NAME), page
    guide = (hostile_site / "guide" / "index.html").read_text("utf-8")
    assert 'href="https://example.com/r%22onmouseover=%22window.__pwned=4/edit/main/docs/' in guide
    assert '<a href="https://example.com/team">us</a>' in guide  # copyright keeps its link
    assert "© Team" in guide and "__pwned=7" not in guide and "__pwned=8" not in guide


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("repo_url", "javascript://example.com/%0Aalert(1)"),  # MkDocs took it: it has a host
        ("repo_url", "JavaScript://example.com/%0Aalert(1)"),
        ("repo_url", "ssh://git@example.com/team/repo.git"),
        ("site_url", "javascript://example.com/%0Aalert(1)/"),
        ("edit_uri", "javascript:alert(1)//"),
        ("edit_uri_template", "javascript:alert(1)//{path}"),
    ],
)
def test_a_link_setting_that_is_not_a_web_address_stops_the_build(
    tmp_path: Path, key: str, value: str
) -> None:
    from memsite.site.builder import BuildFailed

    settings = {"site_name": "Memory", "repo_url": "https://example.com/team/repo", key: value}
    with pytest.raises(BuildFailed) as caught:
        build_with(tmp_path, settings)
    said = str(caught.value)
    assert "\n" not in said
    assert f"mkdocs.yml: {key} must be a web address (" in said
    assert "Material makes a link of it on every page" in said and "fix or remove it" in said


def test_a_repo_url_mkdocs_refuses_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """``javascript:alert(1)`` has no host, so MkDocs refuses it while loading the config;
    ``build`` then failed on its own ``UnboundLocalError`` instead of saying so."""
    from memsite.site.builder import BuildFailed

    with pytest.raises(BuildFailed) as caught:
        build_with(tmp_path, {"site_name": "Memory", "repo_url": "javascript:alert(1)"})
    said = str(caught.value)
    assert said.startswith("site not built: ") and "Config value 'repo_url': " in said


# -- the same in Chromium -------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    require_chromium()
    with chromium() as launched:
        yield launched


@pytest.mark.browser
def test_no_setting_of_mkdocs_yml_runs_a_script_in_chromium(browser, hostile_site: Path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    tab = context.new_page()
    try:
        with serve(hostile_site) as url:
            for page in ("index.html", "guide/index.html", "decisions/index.html"):
                tab.goto(url + page)
                tab.wait_for_timeout(150)
                assert tab.evaluate("window.__pwned") is None, page
                assert tab.title().endswith(SITE_NAME), page  # the name, shown as text
                shown = tab.locator(".md-header__topic .md-ellipsis").first.inner_text()
                assert shown.strip() == SITE_NAME, page
                tab.hover(".md-source")  # the repository link in the header
                if tab.locator(".md-content__button").count():  # the team's page: edit link
                    tab.hover(".md-content__button")
                assert tab.evaluate("window.__pwned") is None, page
    finally:
        context.close()
