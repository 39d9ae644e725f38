"""How close a question is to a record: by the record's closest section (issue 16)."""

from __future__ import annotations

import pytest

from memsite.search import meaning as semantic


def store_of(vectors: dict[tuple[str, str], list[float]], sizes: list[int]) -> semantic.Store:
    """A store of hand-made section vectors (``(record, uid)`` → vector, padded to DIM)."""
    np = pytest.importorskip("numpy")
    matrix = np.zeros((len(vectors), semantic.DIM), dtype=np.float32)
    for row, values in enumerate(vectors.values()):
        matrix[row, : len(values)] = values
    records = tuple(record for record, _ in vectors)
    return semantic.Store(
        files={"notes/a.md": "x"},
        uids=tuple(uid for _, uid in vectors),
        records=records,
        paths=("notes/a.md",) * len(records),
        keys=tuple(uid for _, uid in vectors),
        sizes=np.array(sizes, dtype=np.float32),
        matrix=semantic.normalise_rows(matrix),
    )


def test_a_long_record_is_as_close_as_its_section_that_answers() -> None:
    if not semantic.available():
        pytest.skip('needs pip install "memsite[semantic]"')
    import numpy as np

    store = store_of(
        {
            # a long record: one section answers, two long ones are about other things
            ("long", "long#answer"): [1.0, 0.0, 0.0],
            ("long", "long#other"): [0.0, 1.0, 0.0],
            ("long", "long#more"): [0.0, 0.0, 1.0],
            # a one-section record, somewhat close as a whole
            ("short", "short"): [0.6, 0.8, 0.0],
        },
        sizes=[300, 2_000, 2_000, 500],
    )
    query = np.zeros(semantic.DIM, dtype=np.float32)
    query[0] = 1.0
    by_mean = semantic.Meaning(store, query)
    assert [r for _, r in by_mean.best_records(2, floor=0.0)] == ["short", "long"]
    by_best = semantic.Meaning(store, query).by_best_section()
    assert [r for _, r in by_best.best_records(2, floor=0.0)] == ["long", "short"]
    assert by_best.scaled_records(["long", "short"]) == {"long": 1.0, "short": 0.0}
    # sections keep their own closeness
    assert by_best.sections.tolist() == by_mean.sections.tolist()
