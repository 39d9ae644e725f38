"""The site's sharded search index, without a browser (issue 12): what is indexed, what the
browser is given, and that the files read back."""

from __future__ import annotations

import json
from pathlib import Path

from memsite.site.search_index import (
    Document,
    exclude_navigation,
    read_documents,
    read_terms,
    shard_file,
    trim,
    write_index,
)
from memsite.store.markup import LONG_BODY_CHARS

REPO = Path(__file__).resolve().parent.parent


def _site(tmp_path: Path, docs: list[dict[str, str]]) -> Path:
    site = tmp_path / "site"
    (site / "search").mkdir(parents=True)
    index = {"config": {"lang": ["en"]}, "docs": docs}
    (site / "search" / "search_index.json").write_text(json.dumps(index), "utf-8")
    return site


def test_a_long_text_is_trimmed_to_the_documented_size_never_inside_a_tag():
    text = "a" * (LONG_BODY_CHARS - 3) + "<code>b</code> &amp; more"
    cut = trim(text)
    assert len(cut) <= LONG_BODY_CHARS + 2 and cut.endswith(" …")
    assert "<co" not in cut and trim("short") == "short"
    assert trim("x" * (LONG_BODY_CHARS - 2) + "&amp; tail").endswith("x …")


def test_generated_navigation_is_marked_for_materials_search_to_leave_out():
    html = (
        '<p class="ms-related"><span>Related:</span> <a href="#x">Other</a></p>'
        '<p class="ms-supersedes">Supersedes <a href="#y">Old</a></p>'
        '<p class="ms-muted">kept</p><p class="ms-daynav">← previous</p>'
        '<ul class="ms-nav"><li><a href="#z">Listed</a></li></ul>'
    )
    marked = exclude_navigation(html)
    assert marked.count("data-search-exclude") == 4
    assert '<p class="ms-muted">kept</p>' in marked
    assert exclude_navigation(marked) == marked  # marked once only


def test_the_browser_is_given_trimmed_documents_with_their_page_titles(tmp_path):
    body = "wombatstart " + "ledger rollup " * (LONG_BODY_CHARS // 14 + 10) + "quokkaend"
    docs = [
        {"location": "decisions/index.html", "title": "Decision timeline", "text": ""},
        {"location": "decisions/index.html#d1", "title": "Cache </script> totals", "text": body},
    ]
    site = _site(tmp_path, docs)
    write_index(site)
    index = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    assert index["docs"] == [] and index["config"] == {"lang": ["en"]}  # nothing to fetch
    shown = read_documents(site)
    assert [d["location"] for d in shown] == ["decisions/index.html", "decisions/index.html#d1"]
    assert shown[1]["page_title"] == "Decision timeline"
    assert shown[1]["title"] == "Cache </script> totals"  # as Material wrote it, read back
    assert "</script>" not in (site / "search" / "memsite" / "d" / "0.js").read_text("utf-8")
    terms = read_terms(site)
    assert terms["wombatstart"] == [1] and terms["ledger"] == [1]
    assert "quokkaend" not in terms  # past LONG_BODY_CHARS: not searchable
    assert "the" not in terms and (site / "search/memsite" / shard_file("cac")).is_file()


def test_without_shards_materials_index_holds_the_trimmed_documents(tmp_path):
    body = "wombatstart " + "x " * LONG_BODY_CHARS + "quokkaend"
    site = _site(tmp_path, [{"location": "a.html#b", "title": "B", "text": body}])
    write_index(site, sharded=False)
    (doc,) = read_documents(site)
    assert "wombatstart" in doc["text"] and "quokkaend" not in doc["text"]
    assert not (site / "search" / "memsite").exists()


def test_labels_are_marked_for_materials_search_to_leave_out():
    html = (
        "<p><strong>Why:</strong> bcrypt is slow by design.</p>"
        "<ul><li><strong>bcrypt_cost:</strong> 12</li></ul>"
        "<p><strong>Not a label</strong> and <strong>Why: not one either</strong></p>"
    )
    marked = exclude_navigation(html)
    assert marked.count("<strong data-search-exclude>") == 2
    assert "<strong data-search-exclude>Why:</strong> bcrypt is slow" in marked
    assert "<strong>Not a label</strong>" in marked
    assert "<strong>Why: not one either</strong>" in marked


def test_a_built_site_indexes_no_label_and_knows_what_holds(tmp_path):
    import shutil

    from click.testing import CliRunner

    from memsite.cli import cli

    root = tmp_path / "memory"
    shutil.copytree(Path(__file__).resolve().parent.parent / "memory", root)
    site = tmp_path / "site"
    result = CliRunner().invoke(cli, ["--root", str(root), "build", "--site-dir", str(site)])
    assert result.exit_code == 0, result.output
    docs = read_documents(site)
    terms = read_terms(site)
    decisions = {n for n, d in enumerate(docs) if d["location"].startswith("decisions/index")}
    assert len(decisions) > 20
    # every decision had these labels: a few say the word in their text
    for label in ("why", "risk", "paths", "commit"):
        assert len(decisions & set(terms.get(label, []))) < len(decisions) // 5, label
    assert not any(d["location"].startswith("tags/") for d in docs)  # lists of links only
    source = (site / "search" / "memsite" / "keys.js").read_text("utf-8")
    meta = json.loads(source[source.index("(") + 1 : -1])
    holders = {docs[old]["location"]: docs[new]["location"] for old, new in meta["successors"]}
    timeline = "decisions/index.html#"
    tuned = timeline + "2026-11-13-tune-argon2id-to-m-19-mib-t-2-p-1"
    for replaced in (
        "2026-11-03-hash-new-passwords-with-bcrypt-at-cost-12",
        "2026-11-09-switch-password-hashing-to-argon2id-instead-of-bcrypt",
    ):
        assert holders[timeline + replaced] == tuned  # the end of the chain, for both
    assert tuned not in holders
    # issue 39.6: the pointer a learning or decision leaves in a day log was a second result
    # beside it, holding its title; a file path's underscores made a bold "init"
    title = "Inject the clock into token validation instead of freezing time"
    holding = [d["location"] for d in docs if title in d["title"] + d["text"]]
    assert holding == [
        "learnings/testing.html#2026-11-03-inject-the-clock-into-token-validation-instead-of-freezing"
    ]
    day = (site / "activity" / "2026-11-03.html").read_text("utf-8")
    assert "<code>app/auth/__init__.py</code>" in day and "app/auth/<strong>init" not in day


def test_the_worker_drops_the_words_the_index_leaves_out():
    # the worker's STOP and the index's STOP_WORDS are one list: a word the index drops and
    # the worker keeps would match nothing and empty every query holding it
    import re

    from memsite.site.search_index import STOP_WORDS

    worker = (REPO / "memsite" / "site" / "assets" / "search-worker.js").read_text("utf-8")
    listed = worker[worker.index("const STOP") : worker.index(".split(")]
    assert set(re.findall(r"[a-z]+", listed.split("(", 2)[2])) == STOP_WORDS


def test_the_words_for_leaving_a_choice_are_indexed_as_one_term_and_titles_are_marked(tmp_path):
    # issue 39.6: "why did we drop mongo" holds no word of "Move the session store from MongoDB
    # to Postgres"; the worker reads "drop" as its group when it meets no other query word
    from memsite.site.search_index import GROUPS, postings

    docs = [
        {"location": "d.html#move", "title": "Move the session store", "text": "<p>mongodb</p>"},
        {"location": "d.html#dual", "title": "Dual-write to Mongo", "text": "<p>both</p>"},
        {"location": "l.html#reset", "title": "make db-reset", "text": "<p>it drops it</p>"},
    ]
    site = _site(tmp_path, docs)
    write_index(site)
    terms = read_terms(site)
    assert terms["~leave"] == [0, 2] and "drop" not in terms
    source = (site / "search" / "memsite" / "keys.js").read_text("utf-8")
    meta = json.loads(source[source.index("(") + 1 : -1])
    assert {"drop", "move", "instead", "decommission"} <= set(meta["groups"]["~leave"])
    assert set(meta["groups"]) == set(GROUPS)
    found = postings([Document(d["location"], d["title"], d["text"]) for d in docs])
    assert found["move"][1] % 2 == 1 and found["mongodb"][1] % 2 == 0  # title, text
    assert found["~leave"][1] % 2 == 1 and found["~leave"][3] % 2 == 0
