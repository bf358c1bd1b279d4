"""Verdict-stratified estimation: valid for any allocation of labels between judge-verdict strata.

The app's Label queue orders (random, stratified by judge verdict, flips first, ...) differ only
in how many labels each *judge-verdict stratum* receives. Conditioning on the judge's verdict
makes every estimator here valid for any such allocation, because within a stratum the rows are
still drawn at random and the stratum sizes come from the judge's verdicts on the whole dataset.

Strata (:data:`~judges.calibration.vocabulary.STRATA`): judge pass, judge fail, and not judged
(unscored or unsure). The estimand is the whole run: rows the judge did not judge are a stratum,
never silently dropped.

* :func:`stratified_run_pass_rate` — same run: ``theta = sum_s W_s r_s`` with ``W_s = N_s / N``
  from the judge's verdicts on every row and ``r_s`` the human pass share among labelled rows of
  stratum ``s``; per-stratum variances with a finite-population correction; a stratum without
  labels gives explicit bounds (its pass rate anywhere in [0, 1]); with document ids, a
  studentised document bootstrap when the design effect is material
  (:mod:`judges.calibration.clustered`).
* :func:`~judges.calibration.population_rates` and
  :func:`~judges.calibration.transported_pass_rate` (module ``transport``) reweight the
  within-stratum rates for error rates and for a separate calibration set.

References:
    Cochran, W. G. (1977). Sampling Techniques, 3rd ed., ch. 5 (stratified random sampling) and
    5A.9 (post-stratification).
    Agresti, A. & Caffo, B. (2000). Am. Stat. 54, 280-288 (the +1/+2 smoothing).
    Kish, L. (1965). Survey Sampling (design effect).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, PassRateEstimate, _refused, _ToDict
from ._verdicts import FAIL, PASS, PerRow, labelled_codes, normalize_verdicts
from .clustered import document_counts
from .rates import check_confidence, z_value
from .resampling import group_codes
from .vocabulary import STRATA, population_statement

__all__ = [
    "DESIGN_EFFECT_THRESHOLD",
    "OUTCOME_FAIL",
    "OUTCOME_NOT_JUDGED",
    "OUTCOME_PASS",
    "StratumCounts",
    "counts_of_strata",
    "not_judged_rows",
    "stratified_run_pass_rate",
    "stratified_run_pass_rate_from_counts",
    "stratum_counts",
    "verdict_strata",
]

#: A design effect above this makes the cluster-robust variance the headline (Kish 1965:
#: 10 % more variance than the row-level formula assumes is already a visible under-coverage).
DESIGN_EFFECT_THRESHOLD = 1.1

ASSUMPTION_RUN = (
    "the labelled rows are rows of this run, drawn at random within each judge-verdict stratum "
    "(judge pass / judge fail / not judged) in any proportions; stratum sizes come from the "
    "judge's verdicts on every row of the run"
)


def verdict_strata(judge: PerRow) -> npt.NDArray[np.int8]:
    """Map judge verdicts to stratum codes: 0 = judge pass, 1 = judge fail, 2 = not judged.

    Args:
        judge: Judge verdicts (strings, 1/0/bool or codes; see ``normalize_verdicts``).

    Returns:
        An ``int8`` array of stratum codes (names in
        :data:`~judges.calibration.vocabulary.STRATA`).

    Examples:
        >>> verdict_strata(["pass", "fail", "unsure", "unscored"]).tolist()
        [0, 1, 2, 2]
    """
    c = normalize_verdicts(judge)
    return _strata_from_codes(c)


def _strata_from_codes(c: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    return np.where(c == PASS, 0, np.where(c == FAIL, 1, 2)).astype(np.int8)


#: Judge outcome of a stratum: the judge passed its rows, failed them, or did not judge them.
OUTCOME_PASS, OUTCOME_FAIL, OUTCOME_NOT_JUDGED = 0, 1, 2
_DEFAULT_OUTCOMES = (OUTCOME_PASS, OUTCOME_FAIL, OUTCOME_NOT_JUDGED)


@dataclass(frozen=True)
class StratumCounts(_ToDict):
    """Per-stratum counts of a calibration set.

    The default three strata are judge pass, judge fail and not judged (index 0, 1, 2, as
    :data:`~judges.calibration.vocabulary.STRATA`); a design may split them further (e.g. rows
    whose verdict flipped across repeats apart from the others), each stratum keeping the judge
    outcome of its rows in ``outcomes``.

    Attributes:
        population: Rows of the dataset in each stratum (the judge's verdicts on every row).
        labelled: Labelled rows with a human pass/fail verdict in each stratum.
        human_pass: Of those, rows the human passed.
        human_unsure: Labelled rows whose human verdict is unsure/unscored.
        outcomes: The judge outcome of each stratum (:data:`OUTCOME_PASS`,
            :data:`OUTCOME_FAIL` or :data:`OUTCOME_NOT_JUDGED`); default the three base strata.
        names: A name per stratum, for messages (default :data:`STRATA`).
    """

    population: tuple[int, ...]
    labelled: tuple[int, ...]
    human_pass: tuple[int, ...]
    human_unsure: tuple[int, ...]
    outcomes: tuple[int, ...] = _DEFAULT_OUTCOMES
    names: tuple[str, ...] = STRATA

    def __post_init__(self) -> None:
        """Validate the counts."""
        k = len(self.outcomes)
        if len(self.names) != k or k == 0:
            raise CalibrationInputError(
                f"outcomes and names must name every stratum: {k} outcomes, {len(self.names)} "
                "names"
            )
        if any(o not in _DEFAULT_OUTCOMES for o in self.outcomes):
            raise CalibrationInputError(f"unknown stratum outcomes {self.outcomes}")
        for name in ("population", "labelled", "human_pass", "human_unsure"):
            v = getattr(self, name)
            if len(v) != k or min(v) < 0:
                raise CalibrationInputError(
                    f"{name} must be {k} non-negative counts, got {v}"
                )
        if any(c > m for c, m in zip(self.human_pass, self.labelled, strict=True)):
            raise CalibrationInputError("human_pass cannot exceed labelled in a stratum")

    @property
    def k(self) -> int:
        """Number of strata."""
        return len(self.outcomes)

    def by_name(self) -> dict[str, dict[str, int]]:
        """Counts keyed by stratum name."""
        return {
            name: {
                "population": self.population[s],
                "labelled": self.labelled[s],
                "human_pass": self.human_pass[s],
                "human_unsure": self.human_unsure[s],
            }
            for s, name in enumerate(self.names)
        }

    def resolved(self, *, as_pass: bool) -> StratumCounts:
        """The counts with every human-unsure labelled row counted as a pass (or a fail)."""
        lab = tuple(a + b for a, b in zip(self.labelled, self.human_unsure, strict=True))
        passed = self.human_pass
        if as_pass:
            passed = tuple(a + b for a, b in zip(passed, self.human_unsure, strict=True))
        return StratumCounts(self.population, lab, passed, (0,) * self.k, self.outcomes,
                             self.names)


def stratum_counts(
    human: PerRow, judge_labelled: PerRow, judge_population: PerRow,
) -> StratumCounts:
    """Count labelled rows and population rows per judge-verdict stratum.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same rows (define each row's stratum).
        judge_population: Judge verdicts on every row of the dataset the labels were drawn from
            (labelled rows included).

    Returns:
        A :class:`StratumCounts` over the three base strata.
    """
    h, sl = labelled_codes(human, judge_labelled, judge_codes=verdict_strata)
    sp = verdict_strata(judge_population)
    return _counts(h, sl, sp)


def counts_of_strata(
    h: npt.NDArray[np.int8], strata_labelled: npt.NDArray[np.int64], population: Sequence[int],
    *, outcomes: tuple[int, ...] = _DEFAULT_OUTCOMES, names: tuple[str, ...] = STRATA,
) -> StratumCounts:
    """:class:`StratumCounts` of labelled rows given their stratum codes and the stratum sizes.

    Args:
        h: Human verdict codes of the labelled rows (``PASS``, ``FAIL``, below 0 = unsure).
        strata_labelled: Stratum code (index into ``outcomes``) of each labelled row.
        population: Rows of the dataset in each stratum.
        outcomes: Judge outcome of each stratum.
        names: Stratum names.
    """
    k = len(outcomes)
    decided = h >= 0
    s = np.asarray(strata_labelled, dtype=np.int64)

    def count(mask: npt.NDArray[np.bool_]) -> tuple[int, ...]:
        return tuple(int(v) for v in np.bincount(s[mask], minlength=k)[:k])

    return StratumCounts(
        population=tuple(int(v) for v in population),
        labelled=count(decided),
        human_pass=count(decided & (h == PASS)),
        human_unsure=count(~decided),
        outcomes=outcomes,
        names=names,
    )


def _counts(
    h: npt.NDArray[np.int8], sl: npt.NDArray[np.int8], sp: npt.NDArray[np.int8]
) -> StratumCounts:
    pop = np.bincount(sp, minlength=3)
    return counts_of_strata(h, sl.astype(np.int64), [int(pop[0]), int(pop[1]), int(pop[2])])


# --------------------------------------------------------------------------- same run


@dataclass(frozen=True)
class _Core:
    estimate: float
    center: float
    var: float
    unknown_weight: float  # population share of strata with rows but no labels


def _run_core(
    big_n: npt.NDArray[np.float64], m: npt.NDArray[np.float64], k: npt.NDArray[np.float64],
    prior: float = 0.5, unbiased_variance: bool = False,
    transferred: npt.NDArray[np.bool_] | None = None,
) -> _Core:
    w = big_n / big_n.sum()
    has = m > 0
    r = np.divide(k, m, out=np.zeros(m.shape), where=has)
    # Finite-population correction: the run is the estimand, so a fully labelled stratum is
    # known exactly. The Agresti-Caffo shrinkage of the centre fades with it. A transferred
    # stratum's labels are rows of another run: no correction (they are a sample of the
    # distribution the run's rows are drawn from, not of the run's rows).
    keep = np.clip(1.0 - np.divide(m, big_n, out=np.ones(m.shape), where=big_n > 0), 0.0, 1.0)
    if transferred is not None:
        keep = np.where(transferred, 1.0, keep)
    r_s = (k + 2.0 * prior) / (m + 2.0)
    r_c = r + keep * (r_s - r)
    known = has | (big_n == 0)
    est = float((w * r)[known].sum())
    center = float((w * r_c)[known].sum())
    # (m + 2): the Agresti-Caffo form; (m - 1): the unbiased variance of a mean drawn without
    # replacement, with the smoothed rate in place of the sample one.
    den = np.maximum(m - 1.0, 1.0) if unbiased_variance else m + 2.0
    var = float((w**2 * r_s * (1.0 - r_s) / den * keep)[has].sum())
    return _Core(est, center, var, float(w[~known].sum()))


def stratified_run_pass_rate(
    human: PerRow, judge_labelled: PerRow, judge_population: PerRow,
    *, doc_ids: PerRow | None = None, confidence: float = 0.95,
    design_effect_threshold: float = DESIGN_EFFECT_THRESHOLD,
    rng: np.random.Generator | None = None, n_boot: int = 2000,
) -> PassRateEstimate:
    """True pass rate of the whole run, estimated within judge-verdict strata.

    ``theta = sum_s W_s r_s`` over strata judge pass / judge fail / not judged, with
    ``W_s = N_s / N`` from the judge's verdicts on every row and ``r_s`` the human pass share of
    the labelled rows in stratum ``s``. Valid for any allocation of labels between strata
    (random, by verdict, flips first): only within-stratum randomness is assumed. Variance
    ``sum_s W_s^2 r~_s (1 - r~_s) / (m_s + 2) (1 - m_s / N_s)`` with Agresti-Caffo smoothing
    ``r~ = (k + 1) / (m + 2)`` and a finite-population correction (a fully labelled run gives
    its exact pass rate with zero width). A stratum with rows but no labels is not identified:
    the interval becomes explicit bounds (its pass rate anywhere in [0, 1]).

    With ``doc_ids``, the CR1 cluster-robust variance is compared with the row-level one; when
    the design effect exceeds ``design_effect_threshold``, the headline interval is a
    studentised document bootstrap (see :mod:`judges.calibration.clustered`).

    Human-unsure labelled rows are left out of ``r_s`` (assumed like the other labelled rows of
    their stratum) and bounded: ``params["human_unsure_bounds"]`` gives the interval union if
    they were all pass or all fail.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the labelled rows.
        judge_population: Judge verdicts on every row of the run (labelled rows included).
        doc_ids: Source-document id per labelled row (optional).
        confidence: Two-sided confidence level.
        design_effect_threshold: Design effect above which the clustered interval is used.
        rng: Random generator of the document bootstrap (default: seeded from the data, so the
            same labels always give the same interval).
        n_boot: Document bootstrap replicates.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``method="verdict_stratified"``;
        ``params`` holds the strata, the design effect and the population statement.

    Examples:
        >>> judge = ["pass"] * 60 + ["fail"] * 40
        >>> r = stratified_run_pass_rate(["pass"] * 9 + ["fail"] + ["pass"] * 2 + ["fail"] * 8,
        ...                              ["pass"] * 10 + ["fail"] * 10, judge)
        >>> round(r.estimate, 3)
        0.62
    """
    conf = check_confidence(confidence)
    h, sl = labelled_codes(human, judge_labelled, judge_codes=verdict_strata)
    sp = verdict_strata(judge_population)
    counts = _counts(h, sl, sp)
    docs = None
    if doc_ids is not None:
        docs, _ = group_codes(np.asarray(doc_ids))
        if docs.shape[0] != h.shape[0]:
            raise CalibrationInputError("doc_ids must have one entry per labelled row")
    return _run_estimate(
        counts, conf, h=h, sl=sl, docs=docs, threshold=design_effect_threshold, rng=rng,
        n_boot=n_boot,
    )  # fmt: skip


def stratified_run_pass_rate_from_counts(
    counts: StratumCounts,
    *, confidence: float = 0.95, human: npt.NDArray[np.int8] | None = None,
    strata: npt.NDArray[np.int64] | None = None, doc_ids: npt.NDArray[np.int64] | None = None,
    design_effect_threshold: float = DESIGN_EFFECT_THRESHOLD,
    rng: np.random.Generator | None = None, n_boot: int = 2000, prior: float = 0.5,
    unbiased_variance: bool = False, transferred: Sequence[bool] | None = None,
) -> PassRateEstimate:
    """:func:`stratified_run_pass_rate` from :class:`StratumCounts` (any number of strata).

    Args:
        counts: Per-stratum population and labelled counts.
        confidence: Two-sided confidence level.
        human: Human verdict codes of the labelled rows (only with ``doc_ids``).
        strata: Stratum code of each labelled row (only with ``doc_ids``).
        doc_ids: Integer document code per labelled row: the document-clustered interval is
            used when the design effect exceeds ``design_effect_threshold``.
        design_effect_threshold: See :func:`stratified_run_pass_rate`.
        rng: Random generator of the document bootstrap.
        n_boot: Document bootstrap replicates.
        prior: Where the smoothing pulls each stratum's rate: ``2 * prior`` pseudo-passes of
            2 pseudo-rows, ``(k + 2 prior) / (m + 2)`` (0.5: Agresti-Caffo's +1/+2). One share
            of K classes estimated one-vs-rest takes ``1 / K`` (the Dirichlet smoothing of
            ``2 / K`` per class), so the shares' centres still add up to 1 and a rare class is
            not pulled toward one half.
        unbiased_variance: Divide each stratum's (smoothed) variance by ``m - 1``, the unbiased
            form for rows drawn without replacement, instead of Agresti-Caffo's ``m + 2``
            (slightly wider; the pairwise shares use it: ``bench/coverage.py --block
            pairwise``).
        transferred: Per stratum, whether its labelled rows come from another run drawn like
            this one (their pass share is transferred: no finite-population correction, and
            they may outnumber the stratum's rows); default none.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate`.
    """
    if not 0.0 < prior < 1.0:
        raise CalibrationInputError(f"prior must be in (0, 1), got {prior}")
    if doc_ids is not None and (human is None or strata is None):
        raise CalibrationInputError("doc_ids need the human codes and strata of the rows")
    moved = None
    if transferred is not None:
        moved = np.asarray(transferred, dtype=bool)
        if moved.shape != (counts.k,):
            raise CalibrationInputError(f"transferred needs one flag per stratum ({counts.k})")
    return _run_estimate(
        counts, check_confidence(confidence), h=human,
        sl=None if strata is None else np.asarray(strata, dtype=np.int8), docs=doc_ids,
        threshold=design_effect_threshold, rng=rng, n_boot=n_boot, prior=prior,
        unbiased_variance=unbiased_variance, transferred=moved,
    )  # fmt: skip


def not_judged_rows(counts: StratumCounts) -> int:
    """Population rows in the strata the judge did not judge."""
    return sum(n for n, o in zip(counts.population, counts.outcomes, strict=True)
               if o == OUTCOME_NOT_JUDGED)  # fmt: skip


def _run_estimate(
    counts: StratumCounts, conf: float,
    *, h: npt.NDArray[np.int8] | None = None, sl: npt.NDArray[np.int8] | None = None,
    docs: npt.NDArray[np.int64] | None = None, threshold: float = DESIGN_EFFECT_THRESHOLD,
    rng: np.random.Generator | None = None, n_boot: int = 2000, prior: float = 0.5,
    unbiased_variance: bool = False, transferred: npt.NDArray[np.bool_] | None = None,
) -> PassRateEstimate:
    method = "verdict_stratified"
    big_n = np.asarray(counts.population, dtype=float)
    m = np.asarray(counts.labelled, dtype=float)
    k = np.asarray(counts.human_pass, dtype=float)
    u = np.asarray(counts.human_unsure, dtype=float)
    n_rows = int(big_n.sum())
    params: dict[str, Any] = {
        "strata": counts.by_name(),
        "population": population_statement(n_rows, not_judged_rows(counts)),
    }

    def refuse(reason: str) -> PassRateEstimate:
        return _refused(
            PassRateEstimate, reason, method=method, confidence=conf, n_labelled=int(m.sum()),
            n_target=n_rows, assumption=ASSUMPTION_RUN, params=MappingProxyType(params),
        )  # fmt: skip

    if n_rows == 0:
        return refuse("the run has no rows")
    moved = np.zeros(counts.k, dtype=bool) if transferred is None else transferred
    if np.any((m + u > big_n) & ~moved):
        over = [counts.names[s] for s in range(counts.k) if m[s] + u[s] > big_n[s]
                and not moved[s]]
        return refuse(
            f"more labelled rows than rows in stratum {', '.join(over)}: the labelled rows are "
            "not rows of this run (labels from another run need a separate-calibration design)"
        )
    if m.sum() == 0:
        return refuse("no labelled rows with a human pass/fail verdict")
    core = _run_core(big_n, m, k, prior, unbiased_variance, transferred)
    se = math.sqrt(core.var)
    quantile, warnings = z_value(conf), []
    low = core.center - quantile * se
    high = core.center + quantile * se
    # A fully labelled run is known exactly (zero variance after the finite-population
    # correction): clustering cannot make it uncertain again.
    if docs is not None and h is not None and sl is not None and core.var > 0:
        weights = np.where(m > 0, big_n / big_n.sum(), 0.0)
        dc = document_counts(h, sl, docs, weights)
        deff = dc.design_effect
        params.update(design_effect=deff, n_documents=dc.n_documents)
        if deff > threshold and dc.n_documents >= 3:
            gen = rng if rng is not None else np.random.default_rng(
                [int(v) for v in dc.labelled.ravel()] + [int(v) for v in dc.passed.ravel()]
            )  # fmt: skip
            low, high, se, _ = dc.bootstrap_t(confidence=conf, rng=gen, n_boot=n_boot)
            params["bell_mccaffrey_df"] = dc.cr2_interval(confidence=conf)[3]
            method = "verdict_stratified_clustered"
            warnings.append(
                f"labelled rows cluster by document (design effect {deff:.2f} over "
                f"{dc.n_documents} documents): studentised document-bootstrap interval"
            )
        elif deff > threshold:
            warnings.append(
                f"labelled rows cluster by document (design effect {deff:.2f}) but come from "
                f"only {dc.n_documents} documents: too few to measure the clustering; label "
                "more documents"
            )
    high += core.unknown_weight
    identified = core.unknown_weight == 0.0
    if not identified:
        missing = [counts.names[s] for s in range(counts.k) if big_n[s] > 0 and m[s] == 0]
        warnings.append(
            f"not identified: no labelled rows in stratum {', '.join(missing)} "
            f"({core.unknown_weight:.1%} of the run); the interval is a bound over every "
            "possible pass rate of those rows"
        )
    if u.sum():
        all_pass = _run_core(big_n, m + u, k + u, prior, unbiased_variance, transferred)
        all_fail = _run_core(big_n, m + u, k, prior, unbiased_variance, transferred)
        params["human_unsure_bounds"] = {
            "if_all_pass": all_pass.estimate,
            "if_all_fail": all_fail.estimate,
            "low": max(0.0, all_fail.center - quantile * math.sqrt(all_fail.var)),
            "high": min(
                1.0, all_pass.center + quantile * math.sqrt(all_pass.var) + all_pass.unknown_weight
            ),
        }
        warnings.append(
            f"{int(u.sum())} labelled rows human-unsure: left out; if they were all pass/all fail "
            f"the estimate would be {all_pass.estimate:.3f}/{all_fail.estimate:.3f}"
        )
    estimate = core.estimate if identified else core.estimate + core.unknown_weight / 2.0
    return PassRateEstimate.clipped_to_unit(
        method, conf, estimate, (low, high), warnings=warnings,
        params={**params, "identified": identified}, n_labelled=int(m.sum()), n_target=n_rows,
        center=core.center, se=se, assumption=ASSUMPTION_RUN,
    )  # fmt: skip


def bound_over_unsure(
    estimate: PassRateEstimate, n_unsure: int, bounds: dict[str, Any] | None = None
) -> tuple[PassRateEstimate, str | None]:
    """The headline over human-unsure labelled rows: the bounds when they move the answer.

    When the estimate if every human-unsure labelled row passed (or failed) lies outside the
    interval, the interval is not the answer: the headline becomes the bound over both
    (``params["human_unsure_bounds"]``), its method gains ``+unsure_bounds``, and the warning
    that says so is returned. Otherwise the estimate is returned unchanged with ``None``.

    Args:
        estimate: A verdict-stratified estimate (:func:`stratified_run_pass_rate` and kin).
        n_unsure: The human-unsure labelled rows, for the warning.
        bounds: The bounds to use (default the estimate's own ``human_unsure_bounds``).
    """
    if bounds is None:
        bounds = (estimate.params or {}).get("human_unsure_bounds")
    if bounds is None or not estimate.claims:
        return estimate, None
    all_pass, all_fail = bounds["if_all_pass"], bounds["if_all_fail"]
    moved = (all_pass is not None and estimate.high is not None and all_pass > estimate.high) or (
        all_fail is not None and estimate.low is not None and all_fail < estimate.low)
    if not moved:
        return estimate, None
    bounded = replace(
        estimate, low=float(bounds["low"]), high=float(bounds["high"]),
        method=f"{estimate.method}+unsure_bounds",
        warnings=(*estimate.warnings, "bounded over the human-unsure rows"))
    return bounded, (
        f"{n_unsure} human-unsure labelled rows could move the estimate beyond its interval "
        f"(to {all_pass:.3f} if all passed, {all_fail:.3f} if all failed): the headline "
        "interval is the bound over both")
