"""The a / b / tie shares of a pairwise judge's run from labels drawn in that same run.

The strata (judge a / judge b / judge tie / not judged, with one-order and flipped rows apart
where they must be) and the same-run estimators over them: verdict-stratified shares, or
inverse-probability weighted ones for labels the active queue drew, each share the one-vs-rest
pass rate of :func:`~judges.calibration.stratified_run_pass_rate_from_counts`. The formulas and
their coverage are described in :mod:`judges.calibration.pairwise_answer`, which chooses
between this estimator and :mod:`judges.calibration.pairwise_transport`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from ._results import PassRateEstimate, _refused, _ToDict, interval_json
from .active import active_pass_rate_from_strata
from .pairwise import CLASSES
from .pairwise_evidence import PW_NOT_JUDGED, PW_NOT_RUN, PairwiseEvidence, PairwiseLabelledRows
from .pass_rate import labels_only_pass_rate
from .strata import (
    OUTCOME_FAIL,
    OUTCOME_NOT_JUDGED,
    OUTCOME_PASS,
    counts_of_strata,
    stratified_run_pass_rate_from_counts,
)
from .vocabulary import SELECTIONS

__all__ = ["PairwiseStratum", "WinShares"]

_K = len(CLASSES)
_SELECTION_INDEX = {name: i for i, name in enumerate(SELECTIONS)}
_BASE_NAMES = ("judge a", "judge b", "judge tie", "not judged")

ASSUMPTION_SAME_RUN = (
    "the labelled rows are rows of this run, drawn at random within each judge-verdict stratum "
    "(judge a / judge b / judge tie / not judged; one-order and flipped rows apart where they "
    "are strata of their own) in any proportions; stratum sizes come from the judge's verdicts "
    "on every row of the run"
)
ASSUMPTION_ACTIVE = (
    "each labelled row was drawn from this run with the recorded inclusion probability (> 0 "
    "for every row; active labelling); within each judge-verdict stratum rows are weighted by "
    "its inverse"
)


@dataclass(frozen=True)
class WinShares(_ToDict):
    """The a / b / tie shares of one estimator.

    Attributes:
        a: True share of rows where A wins, with its interval.
        b: True share of rows where B wins.
        tie: True share of ties.
        method: The estimator (``verdict_stratified``, ``active_ipw``, ``matrix_stratified``,
            ``labels_only``; ``+unsure_bounds`` when a share is the human-unsure bound).
        assumption: The sampling assumption its intervals rest on.
        refused: No shares can be given; see ``reason``.
        reason: Why (``None`` unless refused).
        clipped: The matrix solution left the simplex and was projected back.
        warnings: The estimator's caveats.
        params: Intermediate quantities (misclassification matrix, unsure bounds, ...).
    """

    a: PassRateEstimate
    b: PassRateEstimate
    tie: PassRateEstimate
    method: str
    assumption: str = ""
    refused: bool = False
    reason: str | None = None
    clipped: bool = False
    warnings: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def shares(self) -> dict[str, PassRateEstimate]:
        """``{"a": ..., "b": ..., "tie": ...}``."""
        return {"a": self.a, "b": self.b, "tie": self.tie}

    @property
    def claims(self) -> bool:
        """Every share makes a claim (none refused or uninformative)."""
        return not self.refused and all(s.claims for s in self.shares().values())

    @property
    def width(self) -> float:
        """Sum of the three interval widths (``inf`` when refused)."""
        widths = [s.width for s in self.shares().values()]
        return math.inf if self.refused or None in widths else float(sum(w or 0.0 for w in widths))

    def to_json(self) -> dict[str, Any]:
        """``{a, b, tie (intervals), method, assumption, refused, reason, clipped}``."""
        return {**{k: interval_json(v) for k, v in self.shares().items()}, "method": self.method,
                "assumption": self.assumption, "refused": self.refused, "reason": self.reason,
                "clipped": self.clipped}


@dataclass(frozen=True)
class PairwiseStratum(_ToDict):
    """One judge-verdict stratum of the calibration rows.

    Attributes:
        name: e.g. ``judge a``, ``judge tie, flipped``, ``judge b, one order only``.
        outcome: The judge outcome code of its rows (a, b, tie or not judged).
        decided: Its rows carry a decided verdict (they enter the misclassification matrix).
        population: Rows of the calibration dataset in it.
        labelled: Labelled rows with a decided human consensus.
        human: Of those, rows per human verdict (a, b, tie).
        human_unsure: Labelled rows without a decided human consensus.
    """

    name: str
    outcome: int
    decided: bool
    population: int
    labelled: int
    human: tuple[int, int, int]
    human_unsure: int




# --------------------------------------------------------------------------- strata


@dataclass(frozen=True)
class _Strata:
    """The strata of one estimate and each labelled row's stratum (-1: left out)."""

    strata: tuple[PairwiseStratum, ...]
    of_labelled: npt.NDArray[np.int64]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.strata)

    @property
    def population(self) -> tuple[int, ...]:
        return tuple(s.population for s in self.strata)


def _strata(evidence: PairwiseEvidence, *, same_run: bool, split_flips: bool) -> _Strata:
    """Judge-verdict strata of the calibration rows.

    Judge a, judge b, judge tie and not judged (with the rows the judge never ran on in the
    same run: the whole run is the estimand). Under ``all_agree`` the one-order rows of each
    verdict are a stratum of their own that is not decided; with ``split_flips`` the flipped
    rows of each verdict are (labels drawn flips first over-sample them).
    """
    pop = evidence.population.counts.sum(axis=3)  # (outcome, flipped, one order)
    all_agree = evidence.rule == "all_agree"
    table = np.full(pop.shape, -1, dtype=np.int64)
    specs: list[tuple[str, int, bool]] = []

    def add(name: str, outcome: int, decided: bool, cells: list[tuple[int, int, int]]) -> None:
        for cell in cells:
            table[cell] = len(specs)
        specs.append((name, outcome, decided))

    for v, name in enumerate(_BASE_NAMES[:3]):
        one = all_agree and pop[v, :, 1].sum() > 0
        orders = [0] if one else [0, 1]
        if split_flips and pop[v, 1, orders].sum() > 0:
            add(name, v, True, [(v, 0, o) for o in orders])
            add(f"{name}, flipped", v, True, [(v, 1, o) for o in orders])
        else:
            add(name, v, True, [(v, f, o) for f in (0, 1) for o in orders])
        if one:
            add(f"{name}, one order only", v, False, [(v, f, 1) for f in (0, 1)])
    not_judged = [PW_NOT_JUDGED, *([PW_NOT_RUN] if same_run else [])]
    add(_BASE_NAMES[3], PW_NOT_JUDGED, False,
        [(o, f, k) for o in not_judged for f in (0, 1) for k in (0, 1)])
    lab = evidence.labelled
    of = table[lab.outcome.astype(np.int64), lab.flipped.astype(np.int64),
               lab.one_order.astype(np.int64)]
    strata = []
    for s, (name, outcome, decided) in enumerate(specs):
        rows = of == s
        h = lab.human[rows]
        per = np.bincount(h[h >= 0].astype(np.int64), minlength=_K)
        strata.append(PairwiseStratum(
            name=name, outcome=outcome, decided=decided, population=int(pop[table == s].sum()),
            labelled=int((h >= 0).sum()), human=(int(per[0]), int(per[1]), int(per[2])),
            human_unsure=int((h < 0).sum())))  # fmt: skip
    return _Strata(tuple(strata), of)


def _base_counts(evidence: PairwiseEvidence, same_run: bool
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Labelled and population rows per base stratum (judge a / b / tie / not judged)."""
    lab = evidence.labelled
    o = lab.outcome.astype(np.int64)
    keep = o != PW_NOT_RUN if not same_run else np.ones(o.shape, dtype=bool)
    labelled = np.bincount(np.minimum(o[keep], PW_NOT_JUDGED), minlength=4)[:4]
    by = evidence.population.by_outcome()
    population = np.array([by[0], by[1], by[2],
                           by[PW_NOT_JUDGED] + (by[PW_NOT_RUN] if same_run else 0)])
    return labelled.astype(np.int64), population.astype(np.int64)


def _refused_shares(reason: str, method: str, conf: float, lab: PairwiseLabelledRows,
                    n_target: int, assumption: str = "") -> WinShares:
    r = _refused(PassRateEstimate, reason, method=method, confidence=conf,
                 n_labelled=int((lab.human >= 0).sum()), n_target=n_target,
                 assumption=assumption)
    return WinShares(r, r, r, method, assumption=assumption, refused=True, reason=reason)


# --------------------------------------------------------------------------- same run


def _same_run(strata: _Strata, lab: PairwiseLabelledRows, estimator: str, *, conf: float,
              seed: int, n_boot: int, n_draws: int) -> WinShares:
    """Verdict-stratified (or active IPW) shares: one one-vs-rest pass rate per class."""
    kept = strata.of_labelled >= 0
    s_lab = strata.of_labelled[kept]
    h = lab.human[kept]
    method = "active_ipw" if estimator == "active_ipw" else "verdict_stratified"
    assumption = ASSUMPTION_ACTIVE if estimator == "active_ipw" else ASSUMPTION_SAME_RUN
    if not (h >= 0).any():
        return _refused_shares("no labelled row with a decided human verdict (a, b or tie)",
                               method, conf, lab, sum(strata.population), assumption)
    docs = lab.document[kept]
    has_docs = bool((docs >= 0).any())
    not_judged = [not s.decided for s in strata.strata]
    shares: list[PassRateEstimate] = []
    for c in range(_K):
        binary = np.where(h < 0, -1, (h == c).astype(np.int8)).astype(np.int8)
        if estimator == "active_ipw":
            pi = np.minimum(1.0, n_draws * lab.share[kept])
            est = active_pass_rate_from_strata(binary, s_lab, pi, strata.population,
                                               names=strata.names, not_judged=not_judged,
                                               confidence=conf)  # fmt: skip
        else:
            outcomes = tuple(
                OUTCOME_NOT_JUDGED if not s.decided else
                OUTCOME_PASS if s.outcome == c else OUTCOME_FAIL for s in strata.strata)
            counts = counts_of_strata(binary, s_lab, strata.population, outcomes=outcomes,
                                      names=strata.names)
            est = stratified_run_pass_rate_from_counts(
                counts, confidence=conf, human=binary if has_docs else None,
                strata=s_lab if has_docs else None, doc_ids=docs if has_docs else None,
                rng=np.random.default_rng([seed, c]) if has_docs else None, n_boot=n_boot,
                prior=1.0 / _K, unbiased_variance=True,
            )  # fmt: skip
        shares.append(replace(est, assumption=assumption))
    refused = [s for s in shares if s.refused]
    if refused:
        return _refused_shares(str(refused[0].reason), method, conf, lab,
                               sum(strata.population), refused[0].assumption)
    warnings: list[str] = []
    missing = [s.name for s in strata.strata if s.population and not s.labelled]
    if missing:
        share = sum(s.population for s in strata.strata if s.population and not s.labelled)
        warnings.append(
            f"not identified: no labelled rows in stratum {', '.join(missing)} "
            f"({share / max(sum(strata.population), 1):.1%} of the run); each share's interval "
            "is a bound over every possible verdict of those rows")
    warnings += [w for s in shares for w in s.warnings if "cluster" in w]
    n_unsure = sum(s.human_unsure for s in strata.strata)
    params: dict[str, Any] = {
        "clustered": any(s.method.endswith("_clustered") for s in shares),
        "identified": not missing,
    }
    if n_unsure:
        params["human_unsure_bounds"] = {
            side: {"if_all": b["if_all_pass"], "if_none": b["if_all_fail"], "low": b["low"],
                   "high": b["high"]}
            for side, s in zip(CLASSES, shares, strict=True)
            if (b := s.params.get("human_unsure_bounds")) is not None
        }
        warnings.append(f"{n_unsure} labelled rows without a decided human verdict: left out "
                        "and bounded")
    methods = sorted({s.method for s in shares})
    return WinShares(shares[0], shares[1], shares[2], "+".join(methods),
                     assumption=shares[0].assumption, warnings=tuple(dict.fromkeys(warnings)),
                     params=MappingProxyType(params))


def _labels_only(human: npt.NDArray[np.int8], conf: float) -> WinShares:
    shares = []
    for c in range(_K):
        words = np.where(human < 0, "unsure", np.where(human == c, "pass", "fail"))
        shares.append(labels_only_pass_rate(words.astype(object), confidence=conf))
    if any(s.refused for s in shares):
        reason = "no labelled row with a decided human verdict (a, b or tie)"
        r = _refused(PassRateEstimate, reason, method="labels_only", confidence=conf,
                     n_labelled=0, n_target=0)
        return WinShares(r, r, r, "labels_only", refused=True, reason=reason)
    return WinShares(shares[0], shares[1], shares[2], "labels_only",
                     assumption=shares[0].assumption)


def _bounded(shares: WinShares, bounds: Mapping[str, Mapping[str, float]]
             ) -> tuple[WinShares, list[str]]:
    """``shares`` with each share the unsure rows could move beyond its interval bounded."""
    out = dict(shares.shares())
    moved = []
    for side, est in shares.shares().items():
        b = bounds.get(side)
        if b is None or est.low is None or est.high is None:
            continue
        if b["if_all"] > est.high or b["if_none"] < est.low:
            moved.append(side)
            out[side] = replace(est, low=float(b["low"]), high=float(b["high"]),
                                method=f"{est.method}+unsure_bounds",
                                warnings=(*est.warnings, "bounded over the human-unsure rows"))
    if not moved:
        return shares, []
    return replace(shares, a=out["a"], b=out["b"], tie=out["tie"],
                   method=f"{shares.method}+unsure_bounds"), moved
