"""The optional embedding model: offline, cached by text, and never required (issue 6)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memsite import semantic


@pytest.fixture
def without_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behave as if `pip install memsite[semantic]` was never run."""
    monkeypatch.setitem(sys.modules, "wordllama", None)
    semantic.load.cache_clear()
    yield
    semantic.load.cache_clear()


@pytest.fixture
def model() -> semantic.Embedder:
    pytest.importorskip("wordllama")
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
    pytest.importorskip("wordllama")
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

        from memsite import semantic

        model = semantic.load()
        vectors = model.embed(["Replace MongoDB with Postgres", "why did we stop using mongo"])
        print(round(float(vectors[0] @ vectors[1]), 2) > 0.1)

        # wordllama configures root logging at import; loading it must not make a host's
        # info messages start printing.
        import logging
        logging.getLogger("host").info("should stay silent")
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    assert result.stderr == ""
    assert not (tmp_path / "cache").exists()


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


def test_vectors_are_unit_length_and_empty_text_is_zero(model: semantic.Embedder) -> None:
    vectors = model.embed(["Postgres migration", "", "x" * 50_000])
    assert vectors.shape == (3, semantic.DIM)
    assert abs(float(vectors[0] @ vectors[0]) - 1.0) < 1e-4
    assert not vectors[1].any()


def test_a_second_sync_embeds_nothing_and_an_append_embeds_only_the_new_chunk(
    model: semantic.Embedder, tmp_path: Path
) -> None:
    texts = ["Replace MongoDB with Postgres", "Keep the CI under ten minutes", "Pin whoosh"]
    first = semantic.sync(tmp_path, texts, model)
    assert first.embedded == 3
    again = semantic.sync(tmp_path, texts, model)
    assert again.embedded == 0
    appended = semantic.sync(tmp_path, [*texts, "Use uv for local installs"], model)
    assert appended.embedded == 1
    assert len(appended.vectors) == 4
    for text in texts:
        key = semantic.text_key(text)
        assert (appended.vectors.get(key) == first.vectors.get(key)).all()


def test_removed_chunks_leave_the_cache(model: semantic.Embedder, tmp_path: Path) -> None:
    semantic.sync(tmp_path, ["kept", "dropped"], model)
    semantic.sync(tmp_path, ["kept"], model)
    cached = semantic.read_cache(tmp_path)
    assert cached.keys == (semantic.text_key("kept"),)


@pytest.mark.parametrize("damage", [b"", b"not a zip file", b"PK\x03\x04 truncated"])
def test_a_corrupt_cache_is_rebuilt(
    model: semantic.Embedder, tmp_path: Path, damage: bytes
) -> None:
    texts = ["Replace MongoDB with Postgres", "Pin whoosh"]
    semantic.sync(tmp_path, texts, model)
    (tmp_path / semantic.CACHE_FILE).write_bytes(damage)
    rebuilt = semantic.sync(tmp_path, texts, model)
    assert rebuilt.embedded == 2
    assert semantic.sync(tmp_path, texts, model).embedded == 0


def test_a_cache_from_another_model_is_rebuilt(
    model: semantic.Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "MODEL", "some/other/model")
    semantic.sync(tmp_path, ["Pin whoosh"], model)
    monkeypatch.undo()
    assert semantic.sync(tmp_path, ["Pin whoosh"], model).embedded == 1


def test_an_up_to_date_cache_never_loads_the_model(
    model: semantic.Embedder, tmp_path: Path, without_extra: None
) -> None:
    semantic.sync(tmp_path, ["Pin whoosh"], model)
    assert semantic.sync(tmp_path, ["Pin whoosh"]).embedded == 0


def test_without_the_extra_it_is_reported_unavailable_with_the_fix(without_extra: None) -> None:
    assert not semantic.available()
    with pytest.raises(semantic.ModelUnavailable, match=r"memsite\[semantic\].*--lexical"):
        semantic.load()


def test_importing_memsite_loads_no_model_code(tmp_path: Path) -> None:
    result = run_python(
        """
        import sys
        import memsite, memsite.semantic
        print(sorted(m for m in ("numpy", "wordllama") if m in sys.modules))
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_minmax_maps_to_zero_one_and_flat_to_zero() -> None:
    np = pytest.importorskip("numpy")
    assert semantic.minmax(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert semantic.minmax(np.array([3.0, 3.0])).tolist() == [0.0, 0.0]
