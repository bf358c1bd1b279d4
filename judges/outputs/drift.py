"""``calibrate drift``: does a judge card still hold, and if not, did the judge or the system drift?

:func:`drift_check` takes a card, the judge's verdicts on new rows, optionally the card's anchor
rows re-scored by the same judge (judge config) and expert labels on new rows, and runs the
anytime-valid tests of :func:`judges.calibration.drift.drift_test`:

* the **anchor rows** (the card's labelled calibration rows, recorded in the card as id hashes
  with the judge's verdict, :class:`judges.outputs.card.CardAnchor`): re-scored differently beyond
  the judge's own noise means the judge changed;
* the judge's **pass rate on the new rows** against the card's calibration rows (or a
  ``baseline`` run): moved, with the anchor rows holding, means the answers changed;
* with **expert labels** on new rows, the judge's sensitivity and specificity there against the
  card's lower bounds (the card's correction no longer holds on the new answers).

Rows are tested in the order of their id hash (fixed before any verdict is read, and
independent of it: a file sorted by verdict would otherwise look like drift), or in file order
when the file is in time order (``in_file_order``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judges.aggregation import aggregate_calls
from judges.calibration import CalibrationEvidence, transferred_error_rates
from judges.calibration.drift import DriftResult, drift_test
from judges.outputs.card import CardError, JudgeCard, anchor_hash
from judges.outputs.gate import VerdictsFile, VerdictsFileError, card_reference, check_config
from labels.errors import ImportFileError
from labels.models import POINTWISE_VERDICTS
from labels.reading import read_table
from labels.verdict_words import parse_optional_verdict, spellings

__all__ = ["DriftReport", "drift_check", "read_labels_file"]

DRIFT_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class DriftReport:
    """The answer of ``calibrate drift``.

    Attributes:
        card: The card.
        result: Who drifted, with every e-process.
        counts: ``new_rows``, ``new_judged``, ``anchor_rows`` (matched), ``anchor_unknown``
            (rows of the anchor file that are not anchors of the card), ``labelled`` (new rows
            with an expert pass/fail label and a judge verdict).
        order: ``id hash`` or ``file``.
        warnings: Caveats.
    """

    card: JudgeCard
    result: DriftResult
    counts: Mapping[str, int]
    order: str
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (``docs/report-json.md``, ``calibrate drift``)."""
        r = self.result
        return {
            "schema_version": DRIFT_SCHEMA_VERSION,
            "card": card_reference(self.card),
            "which": r.which,
            "drifted": r.drifted,
            "sentence": r.sentence,
            "alpha": r.alpha,
            "order": self.order,
            "counts": dict(self.counts),
            "reference": dict(r.reference),
            "tests": [t.to_dict() for t in r.tests],
            "warnings": list(self.warnings),
        }


def read_labels_file(path: str | Path) -> dict[str, str]:
    """Expert labels of new rows: ``id`` (or ``item_id``) and ``label`` (or ``verdict``).

    Returns:
        Item id -> ``pass``/``fail``/``unsure`` (the consensus when an id has several rows).

    Raises:
        ImportFileError: a missing column or a label that is not pass/fail/unsure.
    """
    table = read_table(str(path))
    id_col = next((c for c in ("id", "item_id") if c in table.columns), None)
    label_col = next((c for c in ("label", "verdict") if c in table.columns), None)
    if id_col is None or label_col is None:
        raise ImportFileError(
            f"missing required column {'id' if id_col is None else 'label'} (columns: "
            f"{', '.join(table.columns)})", path=table.path)
    votes: dict[str, list[str]] = {}
    for i in range(table.n_rows):
        item_id = str(table.data[id_col][i] or "").strip()
        try:
            word = parse_optional_verdict(table.data[label_col][i], POINTWISE_VERDICTS)
        except ValueError:
            raise ImportFileError(f"{table.data[label_col][i]!r} is not a label "
                                  f"({spellings(POINTWISE_VERDICTS)})", path=table.path,
                                  row=i + 1, column=label_col) from None
        if item_id and word:
            votes.setdefault(item_id, []).append(word)
    out = {}
    for item_id, words in votes.items():
        p, f = words.count("pass"), words.count("fail")
        out[item_id] = "pass" if p > f else "fail" if f > p else "unsure"
    return out


def _items(card: JudgeCard, verdicts: VerdictsFile) -> pd.DataFrame:
    items, _ = aggregate_calls(verdicts.calls, rule=card.judge.policy.aggregation)
    return items


def _ordered(items: pd.DataFrame, in_file_order: bool) -> pd.DataFrame:
    if in_file_order:
        return items.reset_index(drop=True)
    key = items["item_id"].astype(str).map(anchor_hash)
    return items.assign(_key=key).sort_values("_key", kind="stable").drop(
        columns="_key").reset_index(drop=True)


def drift_check(
    card: JudgeCard,
    new: VerdictsFile | None,
    *,
    anchor: VerdictsFile | None = None,
    labels: Mapping[str, str] | None = None,
    baseline: VerdictsFile | None = None,
    alpha: float = 0.05,
    tolerance: float | None = None,
    in_file_order: bool = False,
    allow_unverified: bool = False,
) -> DriftReport:
    """Test ``card`` for judge and system drift (see the module docstring).

    Args:
        card: A pass/fail card with anchor rows.
        new: The judge's verdicts on new rows (``None``: only the anchor rows are tested).
        anchor: The card's anchor rows re-scored by the judge (same config).
        labels: Expert labels of new rows (item id -> pass/fail/unsure).
        baseline: Verdicts of an earlier run to compare the new pass rate with (default: the
            card's calibration rows).
        alpha: The chance of any false alarm, at any stopping time.
        tolerance: The share of anchor rows that may re-score differently without drift
            (default: the card's, from the judge's own flips at calibration).
        in_file_order: Test rows in file order (a file in time order) instead of id-hash order.
        allow_unverified: Accept verdicts without a ``config_id`` (see
            :func:`judges.outputs.gate.check_config`).

    Returns:
        The :class:`DriftReport`.

    Raises:
        CardError: a pairwise card, or one without anchor rows (written before them).
        VerdictsFileError: verdicts of another judge config, an anchor file with no anchor row
            of the card, labels on no judged new row, or nothing to test.
    """
    if card.judge.kind != "pointwise":
        raise CardError("calibrate drift tests pass/fail judge cards", path=card.judge.name)
    if card.anchor is None:
        raise CardError("the card carries no anchor rows (it was written before calibrate "
                        "drift): re-export it with calibrate card export",
                        path=card.calibration.dataset)
    warnings: list[str] = []
    for f in (new, anchor, baseline):
        if f is not None:
            warnings += check_config(card, f, allow_unverified=allow_unverified)
    counts: dict[str, int] = {}
    options: dict[str, Any] = {"alpha": alpha}
    if anchor is not None:
        recorded = {h: v for h, v, _ in card.anchor.rows}
        items = _ordered(_items(card, anchor), in_file_order)
        hashes = items["item_id"].astype(str).map(anchor_hash)
        known = hashes.isin(recorded.keys()).to_numpy()
        counts.update(anchor_rows=int(known.sum()), anchor_unknown=int((~known).sum()))
        if not known.any():
            raise VerdictsFileError(
                "none of these rows is an anchor row of the card (its labelled calibration "
                f"rows of {card.calibration.dataset!r}): re-score those rows", path=anchor.path)
        options.update(
            anchor_recorded=np.array([recorded[h] for h in hashes[known]], dtype=object),
            anchor_rescored=items["verdict"].astype(str).to_numpy(dtype=object)[known],
            tolerance=card.anchor.tolerance if tolerance is None else tolerance)
        if counts["anchor_unknown"]:
            warnings.append(f"{counts['anchor_unknown']} rows of the anchor file are not anchor "
                            "rows of the card: left out")
    if new is not None:
        items = _ordered(_items(card, new), in_file_order)
        verdict = items["verdict"].astype(str)
        judged = verdict.isin(["pass", "fail"]).to_numpy()
        counts.update(new_rows=len(items), new_judged=int(judged.sum()))
        if judged.any():
            options["new_pass"] = verdict.to_numpy()[judged] == "pass"
            ref = card.anchor.reference
            reference = (int(ref["pass"]), int(ref["judged"]))
            if baseline is not None:
                base = _items(card, baseline)["verdict"].astype(str)
                reference = (int(base.eq("pass").sum()), int(base.isin(["pass", "fail"]).sum()))
                counts["baseline_judged"] = reference[1]
            options["reference"] = reference
        if labels is not None:
            human = verdict.index.map(lambda i: labels.get(str(items["item_id"].iloc[i])))
            h = np.asarray(human, dtype=object)
            both = judged & np.isin(h, ["pass", "fail"])
            counts["labelled"] = int(both.sum())
            if not both.any():
                raise VerdictsFileError("no labelled row is a new row with a judge verdict: "
                                        "label rows of the new verdicts file", path=new.path)
            rates = transferred_error_rates(CalibrationEvidence.from_json(card.evidence or {}))
            if rates is None:
                raise CardError("the card's error rates cannot be estimated, so they cannot be "
                                "tested", path=card.calibration.dataset)
            v = verdict.to_numpy()
            options.update(
                human_pass_judged_pass=(v[both & (h == "pass")] == "pass"),
                human_fail_judged_fail=(v[both & (h == "fail")] == "fail"),
                sensitivity=(float(rates.a), float(np.sqrt(rates.cov[0, 0]))),
                specificity=(float(1.0 - rates.b), float(np.sqrt(rates.cov[1, 1]))),
            )  # fmt: skip
    elif labels is not None:
        raise VerdictsFileError("expert labels of new rows need the new rows' verdicts",
                                path="--labels")
    if len(options) == 1:
        raise VerdictsFileError("nothing to test: give the new verdicts and/or --anchor",
                                path=card.calibration.dataset)
    result = drift_test(**options)
    return DriftReport(card, result, counts, "file" if in_file_order else "id hash",
                       tuple(dict.fromkeys(warnings)))
