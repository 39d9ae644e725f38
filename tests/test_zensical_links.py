"""The links of a Zensical build, checked by memsite rather than by Zensical's own validation
(issue 38: Zensical's scanner reads every byte of every page in Python, about a third of a
cold build at a year). The oracle is the real Zensical: the same export built with its own
validation on says the same warnings, at the same places."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml
from click.testing import CliRunner

from memsite import Memory
from memsite.cli import cli
from memsite.site.publish import zensical
from memsite.site.publish.links import page_links
from tests.zensical_engine import on_path, zensical_bin

NOTE = """# Links

See [gone](nowhere.md) and [a decision](../decisions/index.md#no-such-entry).
Back to [the top](#links), [nowhere here](#no-such-heading), [home](../index.md).
`[in code](code.md)` and [outside](https://example.org/page.md).

[later]: ../missing/page.md

Use [it][later].

```text
[in a fence](fence.md)
```
"""


def _tree(root: Path) -> str:
    """A tree whose note and one decision link to pages and anchors that are not there, and
    to one that is; returns the decision's id."""
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "links.md").write_text(NOTE, "utf-8")
    memory = Memory(root, author="")
    kept = memory.decide("Keep the queue", why="It works.")
    memory.decide("Use the runbook", why=f"See [the runbook](runbook.md) and [kept](#{kept}).")
    return kept


def _zensicals_own(work: Path, binary: Path) -> list[str]:
    """What Zensical's own validation says of the export memsite handed it."""
    config = yaml.safe_load((work / "mkdocs.yml").read_text("utf-8"))
    del config["validation"]
    config["site_dir"] = "oracle-site"
    (work / "oracle.yml").write_text(yaml.safe_dump(config, allow_unicode=True), "utf-8")
    done = subprocess.run(
        [str(binary), "build", "--clean", "-f", "oracle.yml"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return zensical.problems(done.stdout + done.stderr)


def test_broken_links_warn_and_fail_strict_as_zensicals_own_validation_says(
    root: Path, tmp_path: Path
) -> None:
    binary = zensical_bin()
    _tree(root)
    site = tmp_path / "site"
    args = ["--root", str(root), "build", "--engine", "zensical", "--site-dir", str(site)]
    with on_path(binary):
        loose = CliRunner().invoke(cli, args)
        assert loose.exit_code == 0, loose.output
        said = [line.removeprefix("zensical: ") for line in loose.stderr.splitlines()]
        work = next((root.parent / ".memsite" / "zensical").iterdir())
        own = _zensicals_own(work, binary)
        strict = CliRunner().invoke(cli, [*args, "--strict"])
    assert sorted(said) == sorted(own)
    assert len(said) == 5  # two pages and two anchors of the note, the decision's page
    assert "notes/links.md:3:12: page does not exist" in said
    assert any(line.endswith(": anchor does not exist") for line in said)
    assert strict.exit_code == 1
    assert strict.stderr.startswith("Error: site not built: zensical: ")
    assert all(problem in strict.stderr for problem in said)
    assert (site / "notes" / "links.html").is_file()  # the loose build, left as it was


def test_zensicals_own_validation_is_off(root: Path, tmp_path: Path) -> None:
    with on_path(zensical_bin()):
        args = ["--root", str(root), "build", "--engine", "zensical", "--strict"]
        result = CliRunner().invoke(cli, [*args, "--site-dir", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    work = next((root.parent / ".memsite" / "zensical").iterdir())
    config = yaml.safe_load((work / "mkdocs.yml").read_text("utf-8"))
    assert config["validation"] is False


def test_the_links_zensical_validates_are_found_where_their_targets_start() -> None:
    found = [(link.line, link.column, link.target) for link in page_links("notes/x.md", NOTE)]
    lines = NOTE.split("\n")
    for line, column, target in found:
        assert lines[line - 1][column - 1 :].startswith(target)
    assert [target for _, _, target in found] == [
        "nowhere.md",
        "../decisions/index.md#no-such-entry",
        "#links",
        "#no-such-heading",
        "../index.md",
        "../missing/page.md",
    ]


def test_a_site_with_good_links_only_says_nothing(sample: Path, tmp_path: Path) -> None:
    shutil.rmtree(sample / ".memsite", ignore_errors=True)
    with on_path(zensical_bin()):
        args = ["--root", str(sample), "build", "--engine", "zensical", "--strict"]
        result = CliRunner().invoke(cli, [*args, "--site-dir", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_a_page_of_thousands_of_broken_links_fails_strict_in_one_line(
    root: Path, tmp_path: Path
) -> None:
    (root / "notes").mkdir(exist_ok=True)
    links = "\n".join(f"- [gone {n}](gone-{n}.md)" for n in range(3000))
    (root / "notes" / "many.md").write_text(f"# Many\n\n{links}\n", "utf-8")
    with on_path(zensical_bin()):
        args = ["--root", str(root), "build", "--engine", "zensical", "--strict"]
        result = CliRunner().invoke(cli, [*args, "--site-dir", str(tmp_path / "site")])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.count("page does not exist") == 12  # the first ones, in order
    assert "notes/many.md:3:12: page does not exist" in result.stderr
    assert not (tmp_path / "site").exists()
