"""Compare two versions of a system through one calibrated judge, and gate on regressions.

``calibrate compare --card CARD BASELINE CANDIDATE`` reads two verdict files of the card's judge
config on the same rows (matched by ``id``), combines each item's calls with the card's
aggregation rule, and reports the corrected pass rate of each version on the paired rows (the
card's answer, :func:`judges.outputs.gate.card_answer`, the same path as ``calibrate score``) and
their
paired difference (:func:`judges.calibration.paired_difference`: Fieller interval over the
paired change in the judge's pass indicator and the card's verdict-reweighted error rates, valid
however the calibration labels were drawn; exact McNemar test, per segment, document-clustered
when the files carry ``document_id``). A row the judge did not judge counts as "not pass", the
third outcome the error rates already include. Items present in one file only are counted and
left out.

``calibrate gate --card CARD --baseline OLD NEW --max-drop 0.02`` is the non-inferiority gate
(:func:`drop_gate`): it fails when the difference's lower bound is below ``-max_drop``.
``--min-pass-rate from-baseline`` takes the bar from the baseline's corrected lower bound
(:func:`baseline_bar`), the "measured gate".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from judges.aggregation import aggregate_calls
from judges.calibration import (
    CalibrationEvidence,
    PairedComparison,
    align_pairs,
    answer_difference,
)
from judges.outputs.card import CardError, JudgeCard, card_from_report
from judges.outputs.gate import (
    GateDecision,
    Score,
    VerdictsFile,
    VerdictsFileError,
    card_answer,
    check_config,
    verdicts_from_table,
)
from judges.reporting import JudgeReport
from judges.verdicts import export_frame
from judges.workspace import Workspace
from labels.reading import Table

COMPARE_SCHEMA_VERSION = 1


def _segment_json(s: PairedComparison) -> dict[str, Any]:
    return {
        "segment": s.segment,
        "n_paired": s.n_paired,
        "baseline": s.baseline.to_interval(),
        "candidate": s.candidate.to_interval(),
        "difference": s.difference.to_interval(),
        "mcnemar_p": s.mcnemar_p,
        "table": _table_json(s),
    }


def _table_json(s: PairedComparison) -> dict[str, int]:
    t = s.table
    return {"both_pass": t.both_pass, "baseline_only": t.baseline_only,
            "candidate_only": t.candidate_only, "both_fail": t.both_fail}


@dataclass(frozen=True)
class Comparison:
    """Two verdict files compared under one card.

    Attributes:
        card: The card.
        baseline: The baseline's verdicts file.
        candidate: The candidate's verdicts file.
        result: The paired statistics.
        n_baseline_only: Items only in the baseline file (left out).
        n_candidate_only: Items only in the candidate file (left out).
        verified: ``False`` when a file had no ``config_id`` and ``allow_unverified`` let it in.
        warnings: Caveats.
    """

    card: JudgeCard
    baseline: VerdictsFile
    candidate: VerdictsFile
    result: PairedComparison
    n_baseline_only: int
    n_candidate_only: int
    verified: bool
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (``docs/report-json.md``, section ``calibrate compare``)."""
        r = self.result
        return {
            "schema_version": COMPARE_SCHEMA_VERSION,
            "card": {
                "judge": self.card.judge.name,
                "config_id": self.card.judge.config_id,
                "dataset": self.card.calibration.dataset,
                "created_at": self.card.created_at.isoformat().replace("+00:00", "Z"),
            },
            "baseline_file": self.baseline.path,
            "candidate_file": self.candidate.path,
            "aggregation": self.card.judge.policy.aggregation,
            "confidence": self.card.metrics.confidence,
            "baseline": r.baseline.to_interval(),
            "candidate": r.candidate.to_interval(),
            "difference": r.difference.to_interval(),
            "observed_difference": r.difference.observed,
            "method": r.difference.method,
            "assumption": r.difference.assumption,
            "mcnemar_p": r.mcnemar_p,
            "mcnemar_method": r.mcnemar_method,
            "n_paired": r.n_paired,
            "table": _table_json(r),
            "excluded": {
                "baseline_only": self.n_baseline_only,
                "candidate_only": self.n_candidate_only,
                "not_pass_fail": r.table.n_excluded,
            },
            "documents": r.n_documents,
            "design_effect": r.design_effect,
            "segments": [_segment_json(s) for s in r.segments],
            "verified": self.verified,
            "warnings": list(self.warnings),
        }


def _labels(
    verdicts: VerdictsFile, other: VerdictsFile, ids: np.ndarray, attribute: str
) -> np.ndarray | None:
    """Per-item labels (segment or document) from whichever file carries them."""
    for source in (verdicts, other):
        mapping = getattr(source, attribute)
        if mapping:
            return np.array([mapping.get(i, "") for i in ids], dtype=object)
    return None


def compare_verdicts(
    card: JudgeCard, baseline: VerdictsFile, candidate: VerdictsFile, *,
    allow_unverified: bool = False,
) -> Comparison:
    """Corrected pass rates of two versions and their paired difference under ``card``.

    Args:
        card: A loaded, verified card.
        baseline: Verdicts of the card's judge config on the baseline's answers.
        candidate: Verdicts of the same config on the candidate's answers to the same rows.
        allow_unverified: Accept files without a ``config_id`` (the output says so).

    Returns:
        A :class:`Comparison`.

    Raises:
        VerdictsFileError: a file of another judge config, a file without ``config_id`` (unless
            ``allow_unverified``), or no item in both files.
        CardError: the card has no failing or no passing calibration row.
    """
    warnings: list[str] = []
    for name, file in (("baseline", baseline), ("candidate", candidate)):
        warnings += [f"{name}: {w}" for w in
                     check_config(card, file, allow_unverified=allow_unverified)]
    rule, conf = card.judge.policy.aggregation, card.metrics.confidence
    items_b, _ = aggregate_calls(baseline.calls, rule=rule, confidence=conf)
    items_c, _ = aggregate_calls(candidate.calls, rule=rule, confidence=conf)
    ids_b = items_b["item_id"].to_numpy(dtype=str)
    ids_c = items_c["item_id"].to_numpy(dtype=str)
    pairs = align_pairs(ids_b, ids_c)
    if pairs.n_paired == 0:
        raise VerdictsFileError(
            f"no item of {baseline.path} is in {candidate.path}: compare needs the same rows "
            "judged for both versions (matched by id)", path=candidate.path, column="id",
        )
    if pairs.n_baseline_only or pairs.n_candidate_only:
        warnings.append(
            f"{pairs.n_baseline_only} items only in the baseline file and "
            f"{pairs.n_candidate_only} only in the candidate file are left out (compared: "
            f"{pairs.n_paired} items in both)"
        )
    ids = ids_b[pairs.baseline_index]
    if card.evidence is None:
        raise CardError("the card carries no calibration evidence: re-export it with calibrate "
                        "card export", path=card.calibration.dataset)
    evidence = CalibrationEvidence.from_json(card.evidence)
    paired_b = items_b.iloc[pairs.baseline_index].reset_index(drop=True)
    paired_c = items_c.iloc[pairs.candidate_index].reset_index(drop=True)
    answers = (card_answer(card, paired_b, baseline.segments or candidate.segments),
               card_answer(card, paired_c, candidate.segments or baseline.segments))
    result = answer_difference(
        evidence, paired_b["verdict"].to_numpy(dtype=object),
        paired_c["verdict"].to_numpy(dtype=object), answers=answers,
        documents=_labels(baseline, candidate, ids, "documents"),
        segments=_labels(baseline, candidate, ids, "segments"), confidence=conf,
    )  # fmt: skip
    for name, answer in zip(("baseline", "candidate"), answers, strict=True):
        warnings += [f"{name}: {w}" for w in answer.warnings if f"{name}: {w}" not in warnings]
        if answer.kind == "segment_aware":
            warnings.append(
                f"{name}: the judge's accuracy differs by segment and the mix shifted, so its "
                "pass rate is the segment-aware correction; the difference uses the pooled "
                "error rates and is exact only at zero change (McNemar's test is unaffected)"
            )
    warnings += [w for w in result.warnings if w not in warnings]
    if result.difference.refused:
        warnings.append(f"difference refused: {result.difference.reason}")
    return Comparison(card, baseline, candidate, result, pairs.n_baseline_only,
                      pairs.n_candidate_only,
                      verified=not any(f.rows_without_config_id for f in (baseline, candidate)),
                      warnings=tuple(warnings))


def stored_verdicts(workspace: Workspace, dataset: str, judge: str) -> VerdictsFile:
    """A judge's stored verdicts on ``dataset``, as ``calibrate verdicts export`` writes them.

    The same rows (config id, segment, document id) a verdicts file exported from ``workspace``
    holds, read through the same parser, so a comparison made from the database equals
    ``calibrate compare`` on the exported files.
    """
    frame = export_frame(workspace, dataset, judge)
    records = [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]
    return verdicts_from_table(Table.from_records(dataset, records))


def compare_datasets(
    workspace: Workspace, report: JudgeReport, *, baseline: str, candidate: str
) -> Comparison:
    """Compare two target datasets judged by ``report``'s judge, calibrated by ``report``.

    ``report`` is the judge's calibration (:func:`judges.reporting.calibration_report` on the
    labelled dataset); its card (:func:`judges.outputs.card.card_from_report`) corrects both
    datasets'
    pass rates exactly as ``calibrate compare --card`` does with the exported card and verdicts.
    Rows are matched by id.

    Raises:
        VerdictsFileError: no row is in both datasets' verdicts.
        CardError: the calibration has no failing or no passing labelled row.
    """
    # An in-app comparison, not an exported card: the card rules (stand-in, small samples)
    # do not apply here; the page shows its own stand-in and small-sample warnings.
    card = card_from_report(workspace, report, force=True)
    config_id = report.judge.config_id
    return compare_verdicts(card, stored_verdicts(workspace, baseline, config_id),
                            stored_verdicts(workspace, candidate, config_id))


@dataclass(frozen=True)
class DropGateResult(GateDecision):
    """A non-inferiority decision: did the candidate lose more than ``max_drop``?

    Attributes:
        passed: ``True`` when the difference's lower bound is at or above ``-max_drop``.
        max_drop: The largest tolerated drop of the true pass rate.
        value: The difference's lower bound (``None`` when refused).
        reason: One sentence saying why.
    """

    passed: bool
    max_drop: float
    value: float | None
    reason: str


def drop_gate(comparison: Comparison, *, max_drop: float) -> DropGateResult:
    """Pass when the paired difference's lower bound is at or above ``-max_drop``.

    An uninformative difference (judge not shown to beat chance) has lower bound -1 and fails.

    Raises:
        ValueError: ``max_drop`` outside [0, 1].
        CardError: the difference is refused (the card cannot correct anything).
    """
    if not 0.0 <= max_drop <= 1.0:
        raise ValueError(f"max_drop must be in [0, 1], got {max_drop}")
    d = comparison.result.difference
    if d.refused or d.low is None or d.estimate is None or d.high is None:
        raise CardError(f"no corrected difference: {d.reason}",
                        path=comparison.card.calibration.dataset)
    conf = f"{d.confidence:.0%}"
    detail = (f"corrected difference candidate - baseline {d.estimate:+.3f} "
              f"[{d.low:+.3f}, {d.high:+.3f}] over {d.n} paired items")
    if d.uninformative:
        return DropGateResult(False, max_drop, d.low,
                              "the card's judge is not shown to be better than chance, so the "
                              f"size of the change is not identified: {detail}")
    if d.low >= -max_drop:
        return DropGateResult(True, max_drop, d.low,
                              f"lower {conf} bound {d.low:+.3f} >= -{max_drop:g}: {detail}")
    return DropGateResult(False, max_drop, d.low,
                          f"lower {conf} bound {d.low:+.3f} < -{max_drop:g} (a drop of more "
                          f"than {max_drop:g} is not ruled out): {detail}")


def baseline_bar(baseline: Score) -> float:
    """The measured bar: the baseline's corrected pass rate lower bound.

    Raises:
        VerdictsFileError: the baseline's corrected pass rate is refused or uninformative, so it
            cannot set a bar.
    """
    c = baseline.corrected
    if c.refused or c.low is None or c.uninformative:
        why = c.reason or "the card's judge is not shown to be better than chance"
        raise VerdictsFileError(f"the baseline's corrected pass rate cannot set a bar: {why}",
                                path=baseline.verdicts.path)
    return float(c.low)


__all__ = [
    "COMPARE_SCHEMA_VERSION",
    "Comparison",
    "DropGateResult",
    "baseline_bar",
    "compare_datasets",
    "compare_verdicts",
    "drop_gate",
    "stored_verdicts",
]
