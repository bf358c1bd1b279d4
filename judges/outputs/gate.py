"""Score new judge verdicts with a judge card, and gate CI on the corrected pass rate.

A card (:mod:`judges.outputs.card`) carries the calibration evidence of its judge. New verdicts of
the
*same* judge config give the judge's outcomes on the new rows, and :func:`card_answer` asks the
one estimation path (:func:`judges.calibration.answer_pass_rate`) for their true pass rate, as
``calibrate report --target`` does: the judge's verdict-reweighted error rates transferred to the
new rows (label shift allowed), segment-aware when the transfer check fires, refused with the
reason when the evidence cannot support a number. Verdicts of the calibration run itself get
the report's same-run estimate.

:func:`gate` compares the chosen bound (``lower``, the default, or the point ``estimate``)
with a bar. Exit codes of ``calibrate gate``: 0 the bar is met, 1 it is not (with the reason),
2 bad input — an unreadable card or verdicts file, verdicts of another judge config than the
card's, no scored verdict, or a card whose counts cannot correct anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from judges.aggregation import aggregate_calls
from judges.calibration import (
    CalibrationEvidence,
    PassRateAnswer,
    PassRateEstimate,
    TargetRun,
    answer_pass_rate,
    interval_json,
)
from judges.card_model import CardError, JudgeCard
from judges.reporting.evidence import run_counts_of_items, verdicts_fingerprint
from judges.verdicts import UNSCORED
from labels.errors import ImportFileError
from labels.models import PAIRWISE_VERDICTS, POINTWISE_VERDICTS
from labels.reading import Table, read_table
from labels.verdict_words import parse_optional_verdict, spellings

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

GateOn = Literal["lower", "estimate"]
SCORE_SCHEMA_VERSION = 1



class VerdictsFileError(ImportFileError):
    """A verdicts file cannot be scored; the message names the file, row and column."""


@dataclass(frozen=True)
class VerdictsFile:
    """Verdicts read from a file, one row per (item, repeat, order).

    Attributes:
        path: The file.
        calls: Columns ``item_id``, ``repeat``, ``order``, ``verdict`` (``pass``/``fail``/
            ``unsure``/``unscored``), and ``reasoning`` when the file has that column.
        config_ids: Distinct non-empty ``config_id`` values in the file (empty when the file
            has no such column, e.g. a plain ``id,verdict`` CSV).
        rows_without_config_id: Rows with an empty ``config_id`` (all rows without the column).
        segments: Item id -> ``segment`` when the file has that column (``verdicts export``
            writes it), else empty.
        documents: Item id -> ``document_id`` when the file has that column, else empty.
    """

    path: str
    calls: pd.DataFrame
    config_ids: tuple[str, ...]
    rows_without_config_id: int = 0
    segments: Mapping[str, str] = field(default_factory=dict)
    documents: Mapping[str, str] = field(default_factory=dict)


def _cell_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def read_verdicts_file(path: str | Path, *, format: str | None = None,
                       kind: str = "pointwise") -> VerdictsFile:
    """Read verdicts to score: CSV, JSONL, JSON or Parquet.

    Columns: ``id`` or ``item_id``; ``verdict`` (``pass``/``fail``/``unsure``, ``1``/``0``,
    ``true``/``false``; empty or ``unscored`` for no verdict); optionally ``repeat``, ``order``
    (``original``/``swapped``), ``config_id`` (written by ``calibrate verdicts export``; checked
    against the card), ``segment`` and ``document_id`` (per item, for ``calibrate compare``).
    Extra columns are ignored. ``kind="pairwise"`` reads ``a``/``b``/``tie`` verdicts instead.

    Raises:
        VerdictsFileError: a missing column, an unknown verdict, a bad repeat/order, or a
            duplicated (id, repeat, order), naming the row and column.
    """
    name = str(path)
    try:
        table = read_table(name, format=format)
    except ImportFileError as error:
        raise VerdictsFileError(error.reason, path=error.path or name, row=error.row,
                                column=error.column) from None
    return verdicts_from_table(table, kind=kind)


def verdicts_from_table(table: Table, *, kind: str = "pointwise") -> VerdictsFile:
    """The verdicts of a table already read (a file, or stored verdicts as records).

    See :func:`read_verdicts_file` for the columns; ``table.path`` names the source in
    messages and in :attr:`VerdictsFile.path`.

    Raises:
        VerdictsFileError: as :func:`read_verdicts_file`.
    """
    name = table.path
    allowed = PAIRWISE_VERDICTS if kind == "pairwise" else POINTWISE_VERDICTS
    id_col = next((c for c in ("id", "item_id") if c in table.columns), None)
    if id_col is None or "verdict" not in table.columns:
        missing = "id (or item_id)" if id_col is None else "verdict"
        raise VerdictsFileError(
            f"missing required column {missing} (columns: {', '.join(table.columns)})", path=name
        )
    ids: list[str] = []
    verdicts: list[str] = []
    repeats: list[int] = []
    orders: list[str] = []
    config_ids: dict[str, None] = {}
    without_config_id = 0
    per_item: dict[str, dict[str, str]] = {"segment": {}, "document_id": {}}
    seen: dict[tuple[str, int, str], int] = {}
    col = table.data
    for i in range(table.n_rows):
        item_id = _cell_text(col[id_col][i])
        if not item_id:
            raise VerdictsFileError("is empty but is required", path=name, row=i + 1,
                                    column=id_col)
        try:
            verdict = parse_optional_verdict(col["verdict"][i], allowed) or UNSCORED
        except ValueError:
            raise VerdictsFileError(
                f"{col['verdict'][i]!r} is not a verdict "
                f"({spellings(allowed, missing_ok=True)})",
                path=name, row=i + 1, column="verdict",
            ) from None
        repeat_text = _cell_text(col["repeat"][i]) if "repeat" in col else ""
        if repeat_text and not repeat_text.isdigit():
            raise VerdictsFileError(f"{repeat_text!r} is not a repeat index (0, 1, 2, ...)",
                                    path=name, row=i + 1, column="repeat")
        repeat = int(repeat_text or 0)
        order = (_cell_text(col["order"][i]) if "order" in col else "").lower() or "original"
        if order not in ("original", "swapped"):
            raise VerdictsFileError(f"{order!r} is not an order (original or swapped)",
                                    path=name, row=i + 1, column="order")
        key = (item_id, repeat, order)
        if key in seen:
            raise VerdictsFileError(
                f"duplicates row {seen[key] + 1} (same id {item_id!r}, repeat {repeat}, "
                f"order {order})", path=name, row=i + 1, column=id_col,
            )
        seen[key] = i
        cid = _cell_text(col["config_id"][i]) if "config_id" in col else ""
        if cid:
            config_ids[cid] = None
        else:
            without_config_id += 1
        for column, values in per_item.items():
            text = _cell_text(col[column][i]) if column in col else ""
            if text:
                values.setdefault(item_id, text)
        ids.append(item_id)
        verdicts.append(verdict)
        repeats.append(repeat)
        orders.append(order)
    calls = pd.DataFrame({"item_id": ids, "repeat": repeats, "order": orders,
                          "verdict": verdicts})
    if "reasoning" in table.columns:
        # The judge's reasoning travels along: a claim-split judge's holds each claim's p_yes,
        # the verdict-probability signal of a card's acceptance rule (judges.selective).
        calls["reasoning"] = [_cell_text(col["reasoning"][i]) or None
                              for i in range(table.n_rows)]
    return VerdictsFile(name, calls, tuple(config_ids), without_config_id,
                        per_item["segment"], per_item["document_id"])


def card_reference(card: JudgeCard) -> dict[str, Any]:
    """``{judge, config_id, dataset, created_at}``: which card a score was made with."""
    return {
        "judge": card.judge.name,
        "config_id": card.judge.config_id,
        "dataset": card.calibration.dataset,
        "created_at": card.created_at.isoformat().replace("+00:00", "Z"),
    }


@dataclass(frozen=True)
class Score:
    """The corrected pass rate of new verdicts under a card.

    Attributes:
        card: The card.
        verdicts: The scored file.
        items: Per-item aggregated verdicts (the card's aggregation rule).
        n: Items with a pass/fail verdict.
        k: Of those, items the judge passed.
        unscored: Items with no verdict.
        unsure: Items whose verdict is ``unsure`` (incl. flips under ``all_agree``).
        observed: Observed judge pass rate ``k/n`` (Wilson).
        corrected: The headline corrected pass rate (``answer.headline``).
        swap_flip_rate: Flip rate of the new verdicts across orders (``interval`` dict).
        repeat_flip_rate: Flip rate across repeats (``interval`` dict).
        warnings: Caveats.
        verified: ``False`` when rows without a ``config_id`` were let in by
            ``allow_unverified``.
        answer: The answer of the one estimation path.
        selection: The card's acceptance rule applied to these verdicts
            (:func:`judges.selective.apply_selection`), or ``None`` when the card has none.
    """

    card: JudgeCard
    verdicts: VerdictsFile
    items: pd.DataFrame
    n: int
    k: int
    unscored: int
    unsure: int
    observed: PassRateEstimate
    corrected: PassRateEstimate
    swap_flip_rate: dict[str, Any]
    repeat_flip_rate: dict[str, Any]
    warnings: tuple[str, ...]
    verified: bool = True
    answer: PassRateAnswer | None = None
    selection: Mapping[str, Any] | None = None

    def accepted(self) -> pd.DataFrame:
        """``id,verdict`` of the rows the card's acceptance rule accepts (empty without one)."""
        ids = [] if self.selection is None else list(self.selection["accepted_ids"])
        verdict = self.items.set_index(self.items["item_id"].astype(str))["verdict"]
        return pd.DataFrame({"id": ids, "verdict": [verdict[i] for i in ids]})

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (``docs/report-json.md``, section ``calibrate score``)."""
        m = self.card.metrics
        answer = {} if self.answer is None else self.answer.to_json()
        return {
            **answer,
            "schema_version": SCORE_SCHEMA_VERSION,
            "card": card_reference(self.card),
            "verdicts_file": self.verdicts.path,
            "aggregation": self.card.judge.policy.aggregation,
            "confidence": m.confidence,
            "n": self.n,
            "m0": m.m0,
            "m1": m.m1,
            "confusion": m.confusion.model_dump(),
            "sensitivity": m.sensitivity.model_dump(),
            "specificity": m.specificity.model_dump(),
            "fpr": m.fpr.model_dump(),
            "kappa": m.kappa.model_dump(),
            "observed_pass_rate": self.observed.to_interval(),
            "corrected_pass_rate": self.corrected.to_interval(),
            "method": self.corrected.method,
            "assumption": self.corrected.assumption,
            "unscored": self.unscored,
            "unsure": self.unsure,
            "swap_flip_rate": self.swap_flip_rate,
            "repeat_flip_rate": self.repeat_flip_rate,
            "verified": self.verified,
            "selection": None if self.selection is None else {
                k: v for k, v in self.selection.items() if k != "accepted_ids"},
            "warnings": list(self.warnings),
        }


JUDGE_CHANGED = (
    "the judge (its config or rubric) changed, and a card's error rates only hold for its own "
    "config: rerun the baseline under the new judge and recalibrate (calibrate card export) "
    "before scoring, gating or comparing"
)


def check_config(
    card: JudgeCard, verdicts: VerdictsFile, *, allow_unverified: bool = False
) -> list[str]:
    """Refuse verdicts of another judge config than the card's, and unverifiable ones.

    Args:
        card: The card.
        verdicts: The verdicts file.
        allow_unverified: Accept rows without a ``config_id`` (a plain ``id,verdict`` file);
            the returned warning says the file is unverified.

    Returns:
        Warnings (empty when every row names the card's config).

    Raises:
        VerdictsFileError: the file's ``config_id`` differs from the card's, or rows have none
            and ``allow_unverified`` is false.
    """
    expected = card.judge.config_id
    others = [c for c in verdicts.config_ids if c != expected]
    if others:
        raise VerdictsFileError(
            f"verdicts come from judge config {', '.join(others)} but the card calibrates "
            f"{card.judge.name!r} ({expected}): {JUDGE_CHANGED}",
            path=verdicts.path, column="config_id",
        )
    missing = verdicts.rows_without_config_id
    if not missing:
        return []
    what = ("the file has no config_id" if not verdicts.config_ids
            else f"{missing} rows have no config_id")
    if not allow_unverified:
        raise VerdictsFileError(
            f"{what}, so these verdicts cannot be checked against the card's judge config "
            f"({expected}): export them with calibrate verdicts export, or pass "
            "--allow-unverified to use them anyway", path=verdicts.path, column="config_id",
        )
    return [
        f"UNVERIFIED: {what}, so it was not checked that these verdicts come from the card's "
        f"judge config ({expected}); used anyway because of --allow-unverified"
    ]


def score_verdicts(
    card: JudgeCard, verdicts: VerdictsFile, *, allow_unverified: bool = False
) -> Score:
    """Corrected pass rate of ``verdicts`` with the card's confusion counts (Lee et al. 2025).

    Args:
        card: A loaded, verified card.
        verdicts: New verdicts of the card's judge config.
        allow_unverified: Accept rows without a ``config_id`` (see :func:`check_config`).

    Returns:
        A :class:`Score`.

    Raises:
        VerdictsFileError: the verdicts belong to another config, have no config id (unless
            ``allow_unverified``), or none is pass/fail.
    """
    warnings = check_config(card, verdicts, allow_unverified=allow_unverified)
    items, consistency = aggregate_calls(
        verdicts.calls, rule=card.judge.policy.aggregation, confidence=card.metrics.confidence
    )
    verdict = items["verdict"]
    k = int(verdict.eq("pass").sum())
    n = k + int(verdict.eq("fail").sum())
    unscored = int(verdict.eq("unscored").sum())
    unsure = int(verdict.eq("unsure").sum())
    if n == 0:
        raise VerdictsFileError(
            f"no pass/fail verdict to score ({unscored} unscored, {unsure} unsure)",
            path=verdicts.path,
        )
    answer = card_answer(card, items, verdicts.segments)
    corrected, observed = answer.headline, answer.observed
    for w in answer.warnings:
        if w not in warnings:
            warnings.append(w)
    swap = interval_json(consistency.flip_rate_order if consistency is not None else None)
    repeat = interval_json(consistency.flip_rate_repeat if consistency is not None else None)
    selection = None
    if card.selection is not None:
        from judges.selective import apply_selection

        selection = apply_selection(card.selection, verdicts.calls, items)
        if not selection["applied"]:
            warnings.append(f"acceptance rule not applied: {selection['reason']}")
    return Score(card, verdicts, items, n, k, unscored, unsure, observed, corrected, swap,
                 repeat, tuple(warnings), verified=verdicts.rows_without_config_id == 0,
                 answer=answer, selection=selection)


def card_answer(
    card: JudgeCard, items: pd.DataFrame, segments: Mapping[str, str] | None = None
) -> PassRateAnswer:
    """The card's answer for a run's aggregated verdicts: the one estimation path.

    The card's evidence and estimation options go to
    :func:`judges.calibration.answer_pass_rate` with the run's outcomes. Verdicts whose
    fingerprint is the card's calibration run are that run: the same-run estimate applies, as
    in the report on the calibration dataset.

    Args:
        card: A pass/fail card with evidence.
        items: Aggregated verdicts (``item_id``, ``verdict``, ``flipped``).
        segments: Item id -> segment, when the verdicts carry them.

    Raises:
        CardError: a card without evidence.
    """
    if card.evidence is None or card.estimation is None:
        raise CardError("the card carries no calibration evidence: re-export it with calibrate "
                        "card export", path=card.calibration.dataset)
    evidence = CalibrationEvidence.from_json(card.evidence)
    est = card.estimation
    fingerprint = verdicts_fingerprint(items["item_id"].to_numpy(dtype=object),
                                       items["verdict"].to_numpy(dtype=object))
    same = evidence.fingerprint is not None and fingerprint == evidence.fingerprint
    target = (TargetRun(evidence.population, same_run=True) if same
              else TargetRun(run_counts_of_items(items, dict(segments or {}))))
    return answer_pass_rate(evidence, target, design=est.design if same else None,
                            confidence=est.confidence, seed=est.seed, n_boot=est.n_boot)


class GateDecision:
    """Mixin of the gate decisions: ``to_json`` of a dataclass whose fields are JSON-safe."""

    def to_json(self: DataclassInstance) -> dict[str, Any]:
        """JSON-safe form: the fields in their declared order."""
        return asdict(self)


@dataclass(frozen=True)
class GateResult(GateDecision):
    """A gate decision.

    Attributes:
        passed: ``True`` when the chosen bound is at or above the bar.
        on: ``lower`` (the interval's lower bound) or ``estimate`` (the point estimate).
        min_pass_rate: The bar.
        value: The compared number (``None`` when it could not be computed).
        reason: One sentence saying why it passed or failed.
    """

    passed: bool
    on: str
    min_pass_rate: float
    value: float | None
    reason: str


def gate(score: Score, *, min_pass_rate: float, on: GateOn = "lower") -> GateResult:
    """Decide whether the corrected pass rate clears ``min_pass_rate``.

    An uninformative correction (judge not shown to beat chance) never passes: its interval is
    [0, 1] and its point estimate is not a claim.

    Raises:
        ValueError: ``min_pass_rate`` outside [0, 1] or an unknown ``on``.
    """
    if not 0.0 <= min_pass_rate <= 1.0:
        raise ValueError(f"min_pass_rate must be in [0, 1], got {min_pass_rate}")
    if on not in ("lower", "estimate"):
        raise ValueError(f"on must be 'lower' or 'estimate', got {on!r}")
    c = score.corrected
    conf = f"{c.confidence:.0%}"
    if c.refused or c.estimate is None or c.low is None:
        return GateResult(False, on, min_pass_rate, None,
                          f"no corrected pass rate: {c.reason}")
    if c.uninformative:
        return GateResult(
            False, on, min_pass_rate, c.low if on == "lower" else c.estimate,
            "the card's judge is not shown to be better than chance, so the corrected pass "
            "rate is not identified; recalibrate or use a better judge",
        )
    value = float(c.low if on == "lower" else c.estimate)
    what = f"lower {conf} bound" if on == "lower" else "point estimate"
    detail = (f"corrected pass rate {c.estimate:.3f} [{c.low:.3f}, {c.high:.3f}] over "
              f"{score.n} verdicts")
    if value >= min_pass_rate:
        return GateResult(True, on, min_pass_rate, value,
                          f"{what} {value:.3f} >= {min_pass_rate:g}: {detail}")
    return GateResult(False, on, min_pass_rate, value,
                      f"{what} {value:.3f} < {min_pass_rate:g}: {detail}")


def accepted_share_gate(score: Score, *, min_share: float) -> GateResult:
    """Pass when the card's acceptance rule accepts at least ``min_share`` of the verdicts.

    The accepted verdicts' error is at most the rule's ``alpha`` with probability
    ``1 - delta``; the rest go to experts, so the share is what the judge saves them.

    Raises:
        ValueError: ``min_share`` outside [0, 1].
    """
    if not 0.0 <= min_share <= 1.0:
        raise ValueError(f"min_share must be in [0, 1], got {min_share}")
    sel = score.selection
    if sel is None:
        return GateResult(False, "accepted_share", min_share, None,
                          "the card has no acceptance rule (calibrate card export --alpha)")
    if not sel["applied"]:
        return GateResult(False, "accepted_share", min_share, None,
                          f"the card's acceptance rule cannot be applied: {sel['reason']}")
    share = float(sel["accepted_share"])
    detail = (f"the rule accepts {sel['accepted']} of {sel['rows']} verdicts ({share:.1%}), "
              f"at most {sel['alpha']:g} of them wrong with probability {1 - sel['delta']:.0%}")
    verb = ">=" if share >= min_share else "<"
    return GateResult(share >= min_share, "accepted_share", min_share, share,
                      f"accepted share {share:.3f} {verb} {min_share:g}: {detail}")


def score_file(card: JudgeCard, path: str | Path, *, allow_unverified: bool = False) -> Score:
    """:func:`read_verdicts_file` then :func:`score_verdicts`."""
    return score_verdicts(card, read_verdicts_file(path), allow_unverified=allow_unverified)


__all__ = [
    "JUDGE_CHANGED",
    "GateDecision",
    "GateResult",
    "Score",
    "VerdictsFile",
    "VerdictsFileError",
    "accepted_share_gate",
    "card_answer",
    "card_reference",
    "check_config",
    "gate",
    "read_verdicts_file",
    "score_file",
    "score_verdicts",
    "verdicts_from_table",
]
