"""Seeded simulation of judge/human verdicts and interval-coverage studies.

Used by the tests and ``bench/coverage.py``, and useful for planning ("would 200 labels give a
usable interval for a judge like this?"). Every function takes an explicit
:class:`numpy.random.Generator`.

The data-generating process (STATS.md notation): a row truly passes with probability
``theta``; the judge passes a truly passing row with probability ``sensitivity`` (q1) and a
truly failing row with probability ``1 - specificity`` (1 - q0). The labelled rows can come
from another run with pass rate ``calibration_theta`` (label shift) while the judge's error
rates stay the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, Unpack

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, PassRateEstimate, _ToDict
from .pass_rate import CalibrationCounts
from .rates import ConfusionMatrix

__all__ = [
    "CoverageResult",
    "Scenario",
    "counts_to_arrays",
    "coverage_study",
    "simulate_counts",
    "simulate_paired",
    "simulate_verdicts",
]


def _check_prob(name: str, x: float) -> None:
    if not 0.0 <= x <= 1.0:
        raise CalibrationInputError(f"{name} must be in [0, 1], got {x}")


class Scenario(TypedDict):
    """One data-generating process of :func:`simulate_counts` (its keyword arguments).

    :func:`coverage_study` takes the same keywords and passes them on.
    """

    theta: float
    sensitivity: float
    specificity: float
    n_target: int
    n_labelled: int
    calibration_theta: NotRequired[float | None]


def simulate_counts(
    rng: np.random.Generator,
    *,
    theta: float,
    sensitivity: float,
    specificity: float,
    n_target: int,
    n_labelled: int,
    calibration_theta: float | None = None,
) -> CalibrationCounts:
    """Draw one data set as :class:`CalibrationCounts` (fast: four binomial draws).

    Args:
        rng: Explicit random generator.
        theta: True pass rate of the target rows.
        sensitivity: Judge sensitivity ``q1``.
        specificity: Judge specificity ``q0``.
        n_target: Judge-only target rows.
        n_labelled: Labelled rows, drawn at random from a run with pass rate
            ``calibration_theta``.
        calibration_theta: Pass rate of the labelled rows' run (default ``theta``: same
            population).

    Returns:
        Counts for the labelled confusion table and the target judge pass count.
    """
    cal = theta if calibration_theta is None else calibration_theta
    for name, x in (
        ("theta", theta),
        ("sensitivity", sensitivity),
        ("specificity", specificity),
        ("calibration_theta", cal),
    ):
        _check_prob(name, x)
    probs = np.array(
        [
            cal * sensitivity,
            cal * (1 - sensitivity),
            (1 - cal) * (1 - specificity),
            (1 - cal) * specificity,
        ]
    )
    tp, fn, fp, tn = (int(v) for v in rng.multinomial(n_labelled, probs / probs.sum()))
    p = theta * sensitivity + (1 - theta) * (1 - specificity)
    k = int(rng.binomial(n_target, p))
    return CalibrationCounts(ConfusionMatrix(tp=tp, fn=fn, fp=fp, tn=tn), k, n_target)


def counts_to_arrays(
    counts: CalibrationCounts,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Expand counts to 1/0 arrays ``(human, judge_labelled, judge_target)``.

    Every estimator here is invariant to row order, so the expansion is sorted.
    """
    cm = counts.confusion
    human = np.repeat(np.array([1, 1, 0, 0], dtype=np.int8), [cm.tp, cm.fn, cm.fp, cm.tn])
    judge = np.repeat(np.array([1, 0, 1, 0], dtype=np.int8), [cm.tp, cm.fn, cm.fp, cm.tn])
    target = np.repeat(
        np.array([1, 0], dtype=np.int8), [counts.k_target, counts.n_target - counts.k_target]
    )
    return human, judge, target


def simulate_verdicts(
    rng: np.random.Generator,
    *,
    n: int,
    theta: float,
    sensitivity: float,
    specificity: float,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Draw ``n`` rows of (human truth, judge verdict) as 1/0 arrays, in random order.

    Args:
        rng: Explicit random generator.
        n: Rows.
        theta: True pass rate.
        sensitivity: Judge sensitivity.
        specificity: Judge specificity.

    Returns:
        ``(human, judge)``.
    """
    for name, x in (("theta", theta), ("sensitivity", sensitivity), ("specificity", specificity)):
        _check_prob(name, x)
    human = (rng.random(n) < theta).astype(np.int8)
    u = rng.random(n)
    judge = np.where(human == 1, u < sensitivity, u >= specificity).astype(np.int8)
    return human, judge


@dataclass(frozen=True)
class CoverageResult(_ToDict):
    """Empirical behaviour of an interval over simulated data sets.

    Attributes:
        n_reps: Simulated data sets.
        n_claims: Results that made a claim (not refused and not flagged uninformative).
        coverage: Share of claims whose interval contains the true pass rate.
        mean_width: Mean interval width over claims.
        no_claim_rate: Share of data sets refused or flagged uninformative.
        wrong_claim_rate: Share of data sets with a claimed interval that misses the truth.
    """

    n_reps: int
    n_claims: int
    coverage: float | None
    mean_width: float | None
    no_claim_rate: float
    wrong_claim_rate: float


def coverage_study(
    estimator: Callable[[CalibrationCounts], PassRateEstimate],
    rng: np.random.Generator,
    *,
    reps: int,
    **scenario: Unpack[Scenario],
) -> CoverageResult:
    """Simulate ``reps`` data sets and measure the coverage of ``estimator``'s interval.

    Args:
        estimator: Function from :class:`CalibrationCounts` to a pass-rate result.
        rng: Explicit random generator.
        reps: Number of simulated data sets.
        **scenario: The data-generating process, as :func:`simulate_counts` takes it
            (:class:`Scenario`); its ``theta`` is the value to cover.

    Returns:
        A :class:`CoverageResult`.

    Examples:
        >>> from judges.calibration import estimate_pass_rate
        >>> res = coverage_study(lambda c: estimate_pass_rate(c, method="lee"),
        ...                      np.random.default_rng(1), reps=200, theta=0.6,
        ...                      sensitivity=0.85, specificity=0.75, n_target=1000,
        ...                      n_labelled=200)
        >>> res.coverage > 0.9
        True
    """
    covered = widths = claims = 0
    width_sum = 0.0
    for _ in range(reps):
        res = estimator(simulate_counts(rng, **scenario))
        if not res.claims or res.low is None or res.high is None:
            continue
        claims += 1
        covered += int(res.low <= scenario["theta"] <= res.high)
        width_sum += res.high - res.low
        widths += 1
    return CoverageResult(
        n_reps=reps,
        n_claims=claims,
        coverage=covered / claims if claims else None,
        mean_width=width_sum / widths if widths else None,
        no_claim_rate=(reps - claims) / reps if reps else 0.0,
        wrong_claim_rate=(claims - covered) / reps if reps else 0.0,
    )


def simulate_paired(
    rng: np.random.Generator,
    *,
    n_rows: int,
    theta_baseline: float,
    theta_candidate: float,
    sensitivity: float,
    specificity: float,
    unchanged: float = 0.5,
    n_documents: int | None = None,
    concentration: float = 4.0,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8], npt.NDArray[np.int64] | None]:
    """Draw judge verdicts of two versions of a system on the same rows.

    Each row's baseline answer truly passes with probability ``theta_baseline``. With
    probability ``unchanged`` the candidate gives the same answer (same truth, and the judge
    gives it the same verdict: a deterministic judge on identical text); otherwise a new answer
    passes with the probability that makes the candidate's pass rate ``theta_candidate``. The
    judge passes a passing answer with probability ``sensitivity`` and a failing one with
    ``1 - specificity``. With ``n_documents``, rows belong to documents whose pass
    probabilities vary (Beta with mean the version's rate and the given ``concentration``), so
    rows of one document fail together; the marginal pass rates stay as given.

    Args:
        rng: Explicit random generator.
        n_rows: Paired rows.
        theta_baseline: True pass rate of the baseline.
        theta_candidate: True pass rate of the candidate.
        sensitivity: Judge sensitivity.
        specificity: Judge specificity.
        unchanged: Share of rows whose answer the candidate leaves unchanged.
        n_documents: Documents the rows are spread over (``None``: independent rows).
        concentration: Beta concentration of the per-document pass probabilities (smaller =
            stronger clustering).

    Returns:
        ``(baseline_verdicts, candidate_verdicts, documents)`` as 1/0 arrays and document ids
        (``None`` without documents).

    Raises:
        CalibrationInputError: a probability outside [0, 1] or unreachable rates.
    """
    for name, x in (("theta_baseline", theta_baseline), ("theta_candidate", theta_candidate),
                    ("sensitivity", sensitivity), ("specificity", specificity),
                    ("unchanged", unchanged)):
        _check_prob(name, x)
    new_rate = theta_candidate if unchanged >= 1.0 else (
        (theta_candidate - unchanged * theta_baseline) / (1.0 - unchanged))
    if not 0.0 <= new_rate <= 1.0:
        raise CalibrationInputError(
            f"a candidate pass rate of {theta_candidate} cannot be reached when "
            f"{unchanged:.0%} of the baseline's answers (pass rate {theta_baseline}) stay"
        )

    def pass_probability(rate: float, docs: npt.NDArray[np.int64] | None) -> Any:
        if docs is None or n_documents is None or rate in (0.0, 1.0):
            return rate
        per_doc = rng.beta(concentration * rate, concentration * (1.0 - rate), size=n_documents)
        return per_doc[docs]

    docs = None if n_documents is None else rng.integers(0, n_documents, size=n_rows)
    truth_b = rng.random(n_rows) < pass_probability(theta_baseline, docs)
    truth_new = rng.random(n_rows) < pass_probability(new_rate, docs)
    keep = rng.random(n_rows) < unchanged

    def judge(truth: npt.NDArray[np.bool_]) -> npt.NDArray[np.int8]:
        u = rng.random(truth.shape[0])
        return np.where(truth, u < sensitivity, u >= specificity).astype(np.int8)

    verdict_b = judge(truth_b)
    verdict_new = judge(truth_new)
    verdict_c = np.where(keep, verdict_b, verdict_new).astype(np.int8)
    return verdict_b, verdict_c, docs
