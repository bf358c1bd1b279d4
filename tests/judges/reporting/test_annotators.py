"""The annotators' progress and agreement matrix, from a report's own numbers."""

from __future__ import annotations

import pandas as pd

from judges.reporting.annotators import agreement_matrix, annotator_progress


def test_the_matrix_is_symmetric_with_each_pairs_interval_and_n() -> None:
    def k(estimate: float | None, n: int) -> dict[str, object]:
        return {"estimate": estimate, "low": None if estimate is None else estimate - 0.1,
                "high": None if estimate is None else estimate + 0.1, "n": n}

    matrix = agreement_matrix({"pairs": [
        {"a": "ann", "b": "bob", "kappa": k(0.5, 20)},
        {"a": "ann", "b": "cy", "kappa": k(None, 0)},
        {"a": "bob", "b": "cy", "kappa": k(0.25, 7)},
    ]})
    assert list(matrix.index) == ["ann", "bob", "cy"] == list(matrix.columns)
    assert matrix.loc["ann", "bob"] == matrix.loc["bob", "ann"] == "0.500 [0.400, 0.600] (n 20)"
    assert matrix.loc["cy", "ann"] == "— (n 0)"
    assert matrix.loc["cy", "bob"] == "0.250 [0.150, 0.350] (n 7)"
    assert [matrix.loc[n, n] for n in matrix.index] == ["", "", ""]
    assert agreement_matrix(None).empty


def test_progress_counts_each_annotators_labels_and_verdicts() -> None:
    labels = pd.DataFrame({"annotator": ["a", "a", "a", "b"],
                           "verdict": ["pass", "fail", "pass", "unsure"]})
    out = annotator_progress(labels, 10)
    assert list(out.index) == ["a", "b"]
    assert out["labels"].tolist() == [3, 1]
    assert out["share"].tolist() == [0.3, 0.1]
    assert (out.loc["a", "pass"], out.loc["a", "fail"], out.loc["b", "unsure"]) == (2, 1, 1)
    assert annotator_progress(labels.iloc[:0], 10).empty


def test_progress_counts_each_annotators_assignment() -> None:
    labels = pd.DataFrame({"annotator": ["a", "a", "b"], "item_id": ["r1", "r9", "r3"],
                           "verdict": ["pass", "fail", "pass"]})
    out = annotator_progress(labels, 10, {"a": ["r1", "r2"], "b": ["r4"], "c": ["r5", "r6"]})
    assert list(out.index) == ["a", "b", "c"]
    assert out["assigned"].tolist() == [2, 1, 2]
    assert out["assigned labelled"].tolist() == [1, 0, 0]  # r9 and r3 were not assigned
    assert out.loc["c", "labels"] == 0 and out.loc["c", "pass"] == 0
