"""The annotators of a report: each one's progress, and the annotator × annotator agreement.

Both read a report's own numbers (:meth:`~judges.reporting.JudgeReport.to_json` and its human
labels), so the Calibration page and ``calibrate report`` show the same matrix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judges.calibration import describe_interval


def agreement_matrix(human_agreement: Mapping[str, Any] | None) -> pd.DataFrame:
    """Cohen's kappa of every pair of annotators as a symmetric table of text cells.

    Args:
        human_agreement: A report's ``human_agreement`` (None: fewer than two annotators
            share a row).

    Returns:
        One row and one column per annotator; each cell ``kappa [low, high] (n rows)`` of the
        rows both labelled, ``—`` where they share none or kappa is undefined; the diagonal
        empty. An empty frame without agreement.
    """
    if not human_agreement:
        return pd.DataFrame()
    pairs = human_agreement["pairs"]
    names = sorted({p["a"] for p in pairs} | {p["b"] for p in pairs})
    table = pd.DataFrame("", index=names, columns=names, dtype=object)
    for p in pairs:
        k = p["kappa"]
        text = describe_interval(k, agreement=True) if k.get("estimate") is not None else "—"
        cell = f"{text} (n {k.get('n', 0)})"
        table.loc[p["a"], p["b"]] = cell
        table.loc[p["b"], p["a"]] = cell
    return table


def annotator_progress(labels: pd.DataFrame, n_rows: int,
                       assignments: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Each annotator's current labels: how many, of the dataset's rows, and their verdicts.

    Args:
        labels: The current labels (one per row, annotator and criterion), with ``annotator``,
            ``item_id`` and ``verdict`` columns.
        n_rows: The dataset's rows.
        assignments: annotator → the rows assigned to them (team mode), if any.

    Returns:
        One row per annotator (most labels first): ``labels``, ``share`` of the rows, with
        assignments ``assigned`` and ``assigned labelled`` (an annotator with an assignment
        and no label yet has a row of zeros), and the count of each verdict.
    """
    if labels.empty and not assignments:
        return pd.DataFrame(columns=["labels", "share"])
    counts = pd.crosstab(labels["annotator"].astype(str), labels["verdict"].astype(str))
    out = pd.DataFrame({"labels": counts.sum(axis=1)})
    if assignments:
        done: dict[str, set[str]] = {}
        for who, item in zip(labels["annotator"].astype(str), labels["item_id"].astype(str),
                             strict=True):
            done.setdefault(who, set()).add(item)
        extra = sorted(set(assignments) - set(out.index))
        out = pd.concat([out, pd.DataFrame({"labels": 0}, index=extra)])
        out["assigned"] = [len(assignments.get(a, ())) for a in out.index]
        out["assigned labelled"] = [
            sum(1 for i in assignments.get(a, ()) if i in done.get(a, set())) for a in out.index]
    out["share"] = out["labels"] / max(n_rows, 1)
    out = out.join(counts).fillna({c: 0 for c in counts.columns})
    front = ["labels", "share", *(["assigned", "assigned labelled"] if assignments else [])]
    out = out[front + [c for c in out.columns if c not in front]]
    return out.sort_values(["labels"], ascending=False, kind="stable")


__all__ = ["agreement_matrix", "annotator_progress"]
