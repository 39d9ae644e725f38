"""The optional embedding model: offline, cached by text, and never required (issue 6)."""

from __future__ import annotations

import ast
import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import memsite
from memsite import Memory
from memsite.cli import cli
from memsite.search import meaning as semantic
from memsite.search.chunks import Chunk, chunk_file
from memsite.search.index.cache import SearchIndex
from memsite.search.meaning import vectors

MODEL_MODULES = ("wordllama", "numpy", "tokenizers", "safetensors")


def require_model() -> None:
    """Skip unless the semantic extra is installed (checked without importing it)."""
    if not semantic.available():
        pytest.skip('needs pip install "memsite[semantic]"')


@pytest.fixture
def without_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behave as if `pip install memsite[semantic]` was never run."""
    monkeypatch.setitem(sys.modules, "wordllama", None)
    semantic.load.cache_clear()
    yield
    semantic.load.cache_clear()


@pytest.fixture
def model() -> semantic.Embedder:
    require_model()
    return semantic.load()


def run_python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    # An empty home: no user-level model cache can stand in for the packaged files.
    env["HOME"] = str(tmp_path)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_model_loads_and_answers_with_the_network_forbidden(tmp_path: Path) -> None:
    require_model()
    # A fresh process, so the import and the load both happen under the guard.
    result = run_python(
        """
        import socket

        def refuse(*args, **kwargs):
            raise AssertionError("network access attempted")

        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse

        from memsite.search import meaning as semantic

        model = semantic.load()
        vectors = model.embed(["Replace MongoDB with Postgres", "why did we stop using mongo"])
        print(round(float(vectors[0] @ vectors[1]), 2) > 0.1)

        # wordllama configures root logging when imported; memsite must not, so a host's
        # info messages stay silent.
        import logging
        logging.getLogger("host").info("should stay silent")
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    assert result.stderr == ""
    assert not (tmp_path / "cache").exists()


def test_vectors_match_what_wordllama_itself_computes(model: semantic.Embedder) -> None:
    import logging

    np = pytest.importorskip("numpy")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        from wordllama import WordLlama
    finally:  # wordllama configures the root logger when imported
        root.handlers[:] = handlers
        root.setLevel(level)
    # The documented workaround: its load() looks for the packaged tokenizer in the wrong
    # folder; the package folder passed as cache_dir holds it under tokenizers/.
    reference = WordLlama.load(
        config=semantic.CONFIG,
        dim=semantic.DIM,
        cache_dir=semantic.package_folder(),
        disable_download=True,
    )
    texts = ["Replace MongoDB with Postgres", "why did we stop using mongo?", "x " * 300]
    expected = reference.embed(texts, norm=True)
    assert np.allclose(model.embed(texts), expected, atol=1e-5)


def test_a_paraphrase_is_closer_than_an_unrelated_entry(model: semantic.Embedder) -> None:
    question, answer, unrelated = model.embed(
        [
            "why did we stop using mongo",
            "Replace MongoDB with Postgres",
            "Render the changelog with towncrier on release",
        ]
    )
    assert (
        semantic.cosine(question, answer[None, :])[0]
        > semantic.cosine(question, unrelated[None, :])[0]
    )


def test_a_weighed_question_counts_each_token_as_its_word(model: semantic.Embedder) -> None:
    np = pytest.importorskip("numpy")
    text = "postgres and the weather"
    # one weight over the whole text: the model's own mean
    assert np.allclose(model.embed_weighted(text, [(0, len(text), 2.0)]), model.embed_one(text))
    # a word weighed 0 (or not at all) leaves no trace
    only = model.embed_weighted(text, [(0, 8, 1.0), (17, 24, 0.0)])
    assert np.allclose(only, model.embed_one("postgres"), atol=1e-6)
    # nothing weighed: the plain mean rather than a zero vector
    assert np.allclose(model.embed_weighted(text, []), model.embed_one(text))
    # a heavier word pulls the vector its way
    heavy = model.embed_weighted(text, [(0, 8, 1.0), (17, 24, 3.0)])
    light = model.embed_weighted(text, [(0, 8, 3.0), (17, 24, 1.0)])
    weather = model.embed_one("weather")
    assert float(heavy @ weather) > float(light @ weather)


def test_vectors_are_unit_length_and_empty_text_is_zero(model: semantic.Embedder) -> None:
    vectors = model.embed(["Postgres migration", "", "x" * 50_000])
    assert vectors.shape == (3, semantic.DIM)
    assert abs(float(vectors[0] @ vectors[0]) - 1.0) < 1e-4
    assert not vectors[1].any()


DECISIONS = """# Decisions

## 2026-11-03 — Keep sessions in MongoDB for now
- **Id:** keep-mongo
- **Why:** Moving storage and restructuring at once is too much change.

## 2026-11-05 — Move the session store from MongoDB to Postgres
- **Id:** move-to-postgres
- **Why:** One cluster to patch for one collection, and sessions were lost in the failover.
"""
APPENDED = """
## 2026-11-06 — Render the changelog with towncrier on release
- **Id:** towncrier
- **Why:** Fragments merge without conflicts.
"""
NOTE = """# Runbook

## Login is slow

Check the hasher parameters first.

## Contacts

Maria owns auth.
"""


class Tree:
    """Files as the index sees them: path → text, with the hash state.json would record."""

    def __init__(self, **files: str) -> None:
        self.files = {
            path.replace("__", "/").replace("_", "-") + ".md": t for path, t in files.items()
        }
        self.reads: list[str] = []

    def hashes(self) -> dict[str, str]:
        return {p: hashlib.sha1(t.encode()).hexdigest() for p, t in self.files.items()}

    def read(self, path: str) -> list[Chunk] | None:
        self.reads.append(path)
        text = self.files.get(path)
        return None if text is None else chunk_file(path, text)

    def update(self, store: Path, embedder: semantic.Embedder | None) -> semantic.Update:
        return semantic.update(store, self.hashes(), self.read, embedder)


def test_an_up_to_date_store_embeds_nothing_and_an_append_embeds_only_the_new_entry(
    model: semantic.Embedder, tmp_path: Path
) -> None:
    tree = Tree(cold__decisions=DECISIONS, notes__runbook=NOTE)
    store = tmp_path / "vectors.npz"
    first = tree.update(store, model)
    assert first.embedded == 4
    assert sorted(first.store.record_ids) == [
        "keep-mongo",
        "move-to-postgres",
        "note-notes-runbook",
    ]
    again = tree.update(store, model)
    assert (again.embedded, again.files) == (0, 0)
    tree.files["cold/decisions.md"] += APPENDED
    appended = tree.update(store, model)
    assert (appended.embedded, appended.files) == (1, 1)
    assert len(appended.store) == 5
    for uid in ("keep-mongo", "move-to-postgres"):
        assert (appended.store.vector(uid) == first.store.vector(uid)).all()


def test_a_deleted_file_leaves_the_store(model: semantic.Embedder, tmp_path: Path) -> None:
    tree = Tree(cold__decisions=DECISIONS, notes__runbook=NOTE)
    store = tmp_path / "vectors.npz"
    tree.update(store, model)
    del tree.files["notes/runbook.md"]
    after = tree.update(store, model)
    assert after.embedded == 0
    assert set(after.store.paths) == {"cold/decisions.md"}
    assert semantic.read_store(store).record_ids == ("keep-mongo", "move-to-postgres")


@pytest.mark.parametrize("damage", [b"", b"not a zip file", b"PK\x03\x04 truncated"])
def test_a_damaged_store_is_rebuilt(
    model: semantic.Embedder, tmp_path: Path, damage: bytes
) -> None:
    tree = Tree(cold__decisions=DECISIONS)
    store = tmp_path / "vectors.npz"
    tree.update(store, model)
    store.write_bytes(damage)
    assert tree.update(store, model).embedded == 2
    assert tree.update(store, model).embedded == 0


def test_a_store_from_another_model_is_rebuilt(
    model: semantic.Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = Tree(cold__decisions=DECISIONS)
    store = tmp_path / "vectors.npz"
    monkeypatch.setattr(vectors, "MODEL", "some/other/model")
    tree.update(store, model)
    monkeypatch.undo()
    assert tree.update(store, model).embedded == 2


def test_a_cache_that_cannot_be_written_costs_time_not_the_answer(
    model: semantic.Embedder, tmp_path: Path
) -> None:
    (tmp_path / "not-a-folder").write_text("")
    store = tmp_path / "not-a-folder" / "vectors.npz"
    tree = Tree(cold__decisions=DECISIONS)
    assert tree.update(store, model).embedded == 2
    assert tree.update(store, model).embedded == 2  # nothing kept, nothing broken


def test_an_up_to_date_store_never_loads_the_model(
    model: semantic.Embedder, tmp_path: Path, without_extra: None
) -> None:
    tree = Tree(cold__decisions=DECISIONS)
    store = tmp_path / "vectors.npz"
    tree.update(store, model)
    assert tree.update(store, None).embedded == 0


def test_a_question_in_other_words_finds_the_record_that_answers_it(
    model: semantic.Embedder, tmp_path: Path
) -> None:
    tree = Tree(cold__decisions=DECISIONS + APPENDED, notes__runbook=NOTE)
    store = tree.update(tmp_path / "vectors.npz", model).store
    meaning = semantic.Meaning(store, model.embed_one("why did we stop using mongo"))
    assert meaning.best_records(1, floor=-1) == [("cold/decisions.md", "move-to-postgres")]
    assert meaning.best_sections(1, floor=-1) == [("cold/decisions.md", "move-to-postgres")]
    meaning = semantic.Meaning(store, model.embed_one("what tool builds the release notes"))
    assert meaning.best_records(1, floor=-1) == [("cold/decisions.md", "towncrier")]


def test_the_signal_scales_cosines_to_zero_one_among_the_candidates(
    model: semantic.Embedder, tmp_path: Path
) -> None:
    tree = Tree(cold__decisions=DECISIONS + APPENDED, notes__runbook=NOTE)
    store = tree.update(tmp_path / "vectors.npz", model).store
    meaning = semantic.Meaning(store, model.embed_one("why did we stop using mongo"))
    candidates = [c for p in tree.files for c in tree.read(p) or ()]
    signal = meaning.signal(candidates)
    assert max(signal.sections.values()) == 1.0
    assert min(signal.sections.values()) == 0.0
    assert signal.sections["towncrier"] < signal.sections["move-to-postgres"]
    assert set(signal.records) == {
        "keep-mongo",
        "move-to-postgres",
        "towncrier",
        "note-notes-runbook",
    }


def test_without_the_extra_it_is_reported_unavailable_with_the_fix(without_extra: None) -> None:
    assert not semantic.available()
    with pytest.raises(semantic.ModelUnavailable, match=r"memsite\[semantic\].*--lexical"):
        semantic.load()


def test_importing_memsite_loads_no_model_code(tmp_path: Path) -> None:
    result = run_python(
        """
        import sys
        import memsite, memsite.search.meaning.vectors
        print(sorted(m for m in MODULES if m in sys.modules))
        """.replace("MODULES", repr(MODEL_MODULES)),
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_minmax_maps_to_zero_one_and_flat_to_zero() -> None:
    np = pytest.importorskip("numpy")
    assert semantic.minmax(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert semantic.minmax(np.array([3.0, 3.0])).tolist() == [0.0, 0.0]


# -- hybrid ranking through Memory and the CLI ------------------------------------------


def ids(hits: list) -> list[str]:
    return [hit.id for hit in hits]


def test_hybrid_search_finds_what_a_question_in_other_words_means(sample: Path) -> None:
    require_model()
    memory = Memory(sample)
    # not one content word in common with "Purge expired sessions in a nightly batch job"
    question = "why do old rows get removed overnight rather than inline on the hot path"
    answer = "2026-11-24-purge-expired-sessions-in-a-nightly-batch-job-not-on-each"
    assert answer in ids(memory.search(question, limit=3))
    memory.close()


def test_the_rare_word_of_a_question_outweighs_its_everyday_ones(tmp_path: Path) -> None:
    require_model()
    from memsite.store.tree import init_tree

    root = tmp_path / "memory"
    init_tree(root)
    memory = Memory(root, cache_dir=tmp_path / "cache")
    everyday = {
        "Each team gets its own AWS accounts": "Teams deploy their services into accounts "
        "they own, so a team's mistakes stay in its own accounts.",
        "Deploy from CI, never from a laptop": "Every team deploys through the pipeline so "
        "that we know what runs in our accounts.",
        "Shared accounts for platform tooling": "Tooling that every team uses is deployed "
        "in shared accounts run by the platform team.",
        "Teams may create their own accounts": "A team can ask for a new account when a "
        "service needs to be kept apart.",
    }
    for title, why in everyday.items():
        memory.decide(title, why=why)
    memory.decide(
        "Host LLMs on the analytics platform",
        why="Large language models need GPUs, data controls and a sandbox that the "
        "analytics platform already has.",
    )
    question = "can my team deploy a large language model in our accounts?"
    lexical = [hit.heading for hit in memory.search(question, limit=2, lexical=True)]
    hybrid = [hit.heading for hit in memory.search(question, limit=2)]
    memory.close()
    # the words alone rank the records about teams and accounts first; meaning, led by the
    # question's rare words rather than by "team" and "accounts", finds the one it is about
    assert not any("LLMs" in heading for heading in lexical)
    assert any("LLMs" in heading for heading in hybrid)


def test_without_the_extra_search_recall_and_related_are_the_lexical_ones(
    sample: Path, without_extra: None
) -> None:
    memory = Memory(sample)
    question = "why did we stop using mongo"
    assert ids(memory.search(question)) == ids(memory.search(question, lexical=True))
    assert memory.recall(question).markdown == memory.recall(question, lexical=True).markdown
    entry = "2026-11-05-move-the-session-store-from-mongodb-to-postgres"
    assert ids(memory.related(entry)) == ids(memory.related(entry, lexical=True))
    assert not list(sample.parent.glob(".memsite/index/*.vectors.npz"))
    memory.close()


def test_a_word_no_entry_is_about_returns_nothing(sample: Path) -> None:
    require_model()
    memory = Memory(sample)
    assert memory.search("zebrafish kumquats") == []
    memory.close()


def test_filters_hold_for_what_meaning_adds(sample: Path) -> None:
    require_model()
    memory = Memory(sample)
    hits = memory.search("why did we stop using mongo", kind="learning")
    assert hits and {hit.kind for hit in hits} == {"learning"}
    memory.close()


def test_an_entry_written_a_moment_ago_has_its_meaning_at_once(sample: Path) -> None:
    require_model()
    memory = Memory(sample, author="")
    memory.search("anything")
    entry = memory.learn(
        "Kubernetes evicts pods that exceed their ephemeral storage",
        category="ops",
        at="2026-11-28T10:00:00",
    )
    # no word in common with the entry: only its vector can find it
    assert entry in ids(memory.search("container thrown out for filling the local disk"))
    memory.close()


def test_related_fuses_meaning_and_keeps_its_promises(sample: Path) -> None:
    require_model()
    memory = Memory(sample)
    entry = "2026-11-05-move-the-session-store-from-mongodb-to-postgres"
    related = memory.related(entry, limit=5)
    assert len(related) == 5
    assert entry not in ids(related)
    assert {hit.kind for hit in related} <= {"decision", "learning", "note"}
    assert "note-cold-adr-0001-session-storage" in ids(related)
    memory.close()


SPY = """\
import atexit, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write("\\n".join(sorted(sys.modules))))
sys.argv[0] = "memsite"
from memsite.cli import main
main()
"""


@pytest.mark.parametrize(
    ("args", "loads"),
    [
        (("search", "why did we stop using mongo"), True),
        (("recall", "why did we move sessions from MongoDB to Postgres?"), True),
        # recall's floor weighs how far the prompt is from everyday requests in meaning, so
        # chatter sharing a word with the memory loads the model too (issue 24); with
        # --lexical nothing does, and neither does a prompt below the coverage rule, which a
        # lexical search asks first
        (("recall", "thanks, that works!"), True),
        (("recall", "thanks, that works!", "--lexical"), False),
        (("recall", "tell me a joke"), False),
        (
            ("recall", "Please write a short poem about autumn leaves on a quiet lake at dawn."),
            False,
        ),
        (("search", "why did we stop using mongo", "--lexical"), False),
        (("recall", "mongo", "--lexical"), False),
        (("check",), False),
        (("log", "ran tests", "--result", "ok"), False),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else str(v),
)
def test_the_model_loads_only_for_commands_that_rank(
    sample: Path, tmp_path: Path, args: tuple[str, ...], loads: bool
) -> None:
    require_model()
    listing = tmp_path / "modules.txt"
    done = subprocess.run(
        [sys.executable, "-c", SPY, str(listing), "--root", str(sample), *args],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("MEMSITE_")},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = set(listing.read_text().split())
    assert ("tokenizers" in loaded) is loads
    if not loads:
        assert "numpy" not in loaded


def test_the_cli_takes_lexical_on_every_ranking_command(sample: Path) -> None:
    runner = CliRunner()
    entry = "2026-11-05-move-the-session-store-from-mongodb-to-postgres"
    for args in (
        ["search", "mongo", "--lexical"],
        ["recall", "why did we move sessions from MongoDB to Postgres?", "--lexical"],
        ["prime", "--task", "sessions", "--lexical"],
        ["related", entry, "--lexical"],
    ):
        result = runner.invoke(cli, ["--root", str(sample), *args])
        assert result.exit_code == 0, result.output
        assert result.stdout


def test_only_the_meaning_modules_import_the_model_or_numpy() -> None:
    package = Path(memsite.__file__).parent
    offenders = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            if any(n.split(".")[0] in MODEL_MODULES for n in names):
                offenders.append(path.relative_to(package).parent.as_posix())
    assert offenders and set(offenders) == {"search/meaning"}


@pytest.mark.parametrize("lexical", [True, False], ids=["lexical", "hybrid"])
def test_related_many_gives_each_entry_what_related_gives_it(sample: Path, lexical: bool) -> None:
    if not lexical:
        require_model()
    wanted = [e.id for e in Memory(sample).entries() if e.kind in ("decision", "learning")]
    with SearchIndex(sample) as index:
        batch = index.related_many([*wanted, "no-such-entry"], limit=5, lexical=lexical)
        one_by_one = {entry: index.related(entry, limit=5, lexical=lexical) for entry in wanted}
    assert list(batch) == wanted  # an id the index does not know is left out
    assert batch == one_by_one  # same hits, same order, same scores
    # most entries have related ones; those that share only common words with any other
    # have none rather than noise (issue 13)
    assert sum(bool(hits) for hits in batch.values()) >= 0.9 * len(batch)
