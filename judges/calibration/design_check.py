"""Which estimator the labels support: recorded provenance, a verdict check, checked overrides.

How the labelled rows were chosen decides which interval is valid. This module turns what is
known about the labels into a decision, and refuses an explicit ``--design`` that the evidence
contradicts, with the reason:

* **Where the labelled rows come from.** Rows of the target run -> a same-run design, estimated
  within judge-verdict strata (valid for any allocation between strata). Rows of another run or
  dataset -> ``separate_calibration`` (Lee-style correction with verdict-reweighted error rates).
* **How they were chosen** (the ``selection`` recorded with each label: ``random``,
  ``by_verdict``, ``flips_first``, ``active``, ``file``, ``imported``, ``all``, ``unknown``,
  ``escalated``: drawn at random from the rows an acceptance rule abstained on, which then
  become strata of their own).
  Labels drawn actively carry inclusion probabilities and use the inverse-probability-weighted
  estimator.
* **A verdict check** for labels whose selection is unknown: if the labelled rows' judge-verdict
  mix differs from the dataset's beyond chance (chi-square goodness of fit), they are not a
  random sample and are treated as drawn by verdict.

References:
    Pearson, K. (1900) / scipy.stats.chisquare (goodness of fit).
    Cochran, W. G. (1977). Sampling Techniques, ch. 5.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy.stats import chisquare

from ._results import CalibrationInputError, _ToDict
from ._verdicts import Codes, PerRow
from .strata import verdict_strata
from .vocabulary import DESIGN_ESTIMATORS, SELECTIONS, STRATA

__all__ = [
    "DesignDecision",
    "SelectionCheck",
    "resolve_design",
    "selection_check",
    "selection_check_from_counts",
]

#: Below this p-value the judge's verdicts trend along the file: labels drawn in file order are
#: then not a random sample of their stratum.
FILE_ORDER_ALPHA = 0.01

_RANDOM_LIKE = frozenset({"random", "all"})
_NOT_RANDOM = frozenset({"by_verdict", "flips_first", "active", "escalated"})
#: Selections whose rows are random within each judge-verdict stratum by construction; any
#: other (file order, imported, unknown) is checked against the judge's verdicts.
CHECKED_BY_DESIGN = _RANDOM_LIKE | _NOT_RANDOM


@dataclass(frozen=True)
class SelectionCheck(_ToDict):
    """Is the labelled rows' judge-verdict mix consistent with a random sample of the dataset?

    Attributes:
        consistent_with_random: ``False`` when the mix differs beyond chance (``p < alpha``).
        p_value: Chi-square goodness-of-fit p-value (``None`` when not testable).
        labelled_shares: Share of labelled rows per stratum.
        population_shares: Share of dataset rows per stratum.
        message: One sentence for the report.
    """

    consistent_with_random: bool
    p_value: float | None
    labelled_shares: Mapping[str, float]
    population_shares: Mapping[str, float]
    message: str


def selection_check(
    judge_labelled: PerRow, judge_population: PerRow,
    *, alpha: float = 0.01,
) -> SelectionCheck:
    """Test whether labelled rows look like a random sample of the dataset by judge verdict.

    Args:
        judge_labelled: Judge verdicts on the labelled rows.
        judge_population: Judge verdicts on every row of the dataset.
        alpha: Significance level of the chi-square goodness-of-fit test.

    Returns:
        A :class:`SelectionCheck`.

    Examples:
        >>> c = selection_check(["fail"] * 50 + ["pass"] * 50, ["fail"] * 200 + ["pass"] * 800)
        >>> c.consistent_with_random, c.message.split(":")[0]
        (False, 'not a random sample')
    """
    sl = np.bincount(verdict_strata(judge_labelled), minlength=3)
    sp = np.bincount(verdict_strata(judge_population), minlength=3)
    return selection_check_from_counts(sl, sp, alpha=alpha)


def selection_check_from_counts(
    labelled: npt.ArrayLike, population: npt.ArrayLike, *, alpha: float = 0.01,
    names: Sequence[str] = STRATA,
) -> SelectionCheck:
    """:func:`selection_check` from labelled and dataset rows per stratum (pass, fail, not judged).

    Args:
        labelled: Labelled rows per stratum.
        population: Dataset rows per stratum.
        alpha: Significance level of the chi-square goodness-of-fit test.
        names: The strata's names (default :data:`~judges.calibration.vocabulary.STRATA`; a
            pairwise judge's are judge a / judge b / judge tie / not judged).

    Returns:
        A :class:`SelectionCheck`.
    """
    sl = np.asarray(labelled, dtype=float)
    sp = np.asarray(population, dtype=float)
    if sl.shape != sp.shape or sl.shape != (len(names),):
        raise CalibrationInputError(
            f"labelled and population need one count per stratum ({len(names)})")
    if sl.sum() == 0 or sp.sum() == 0:
        raise CalibrationInputError("selection_check needs labelled rows and dataset rows")
    lab_sh, pop_sh = sl / sl.sum(), sp / sp.sum()
    shares = {name: float(v) for name, v in zip(names, lab_sh, strict=True)}
    pops = {name: float(v) for name, v in zip(names, pop_sh, strict=True)}
    used = pop_sh > 0
    if np.any(sl[~used] > 0):
        p_value: float | None = 0.0
    elif used.sum() < 2:
        p_value = None
    else:
        p_value = float(chisquare(sl[used], f_exp=pop_sh[used] * sl.sum()).pvalue)
    consistent = p_value is None or p_value >= alpha
    worst = int(np.argmax(lab_sh - pop_sh))  # the most over-sampled stratum
    detail = (
        f"the labelled rows are {lab_sh[worst]:.0%} {names[worst]} while the dataset is "
        f"{pop_sh[worst]:.0%}"
    )
    if consistent:
        message = f"consistent with a random sample ({detail})"
    else:
        message = f"not a random sample: {detail} -- treated as drawn by verdict"
    return SelectionCheck(consistent, p_value, shares, pops, message)


@dataclass(frozen=True)
class DesignDecision(_ToDict):
    """The sampling design the labels support, and the estimator it implies.

    Attributes:
        design: One of :data:`DESIGN_ESTIMATORS` (``None`` when refused).
        estimator: The estimator name (``None`` when refused).
        reason: Why this design (or why the requested one was refused).
        refused: ``True`` when a requested design contradicts the evidence.
        warnings: Caveats (e.g. the verdict check's message).
    """

    design: str | None
    estimator: str | None
    reason: str
    refused: bool = False
    warnings: tuple[str, ...] = field(default_factory=tuple)


def _decision(design: str, reason: str, warnings: list[str]) -> DesignDecision:
    return DesignDecision(design, DESIGN_ESTIMATORS[design], reason, False, tuple(warnings))


def resolve_design(
    requested: str | None,
    *,
    labelled_in_target: bool,
    selections: Mapping[str, int],
    has_probabilities: bool = False,
    check: SelectionCheck | None = None,
    order_trend_p: float | None = None,
    quantity: str = "pass rate",
    escalation_recorded: bool = True,
) -> DesignDecision:
    """Pick the design from the evidence, or check an explicitly requested one against it.

    Args:
        requested: ``None`` for the automatic choice, or a design name from
            :data:`DESIGN_ESTIMATORS`.
        labelled_in_target: Whether the labelled rows are rows of the target run.
        selections: How many labels carry each recorded selection (see :data:`SELECTIONS`).
        has_probabilities: Whether every label drawn actively carries its inclusion probability.
        check: The verdict check of the labelled rows (for ``file``/``imported``/``unknown``
            selections).
        order_trend_p: For labels drawn in file order, the p-value of the judge's verdicts
            trending along the file (:func:`~judges.calibration.order_trend`); below
            :data:`FILE_ORDER_ALPHA` the file is sorted and such labels are refused.
        quantity: What is corrected, in the reasons' words (``"pass rate"``; ``"win and tie
            shares"`` for a pairwise judge).
        escalation_recorded: For labels drawn from escalated rows, whether the evidence knows
            which rows that escalation held (without it they cannot be their own strata and
            are refused).

    Returns:
        A :class:`DesignDecision`; ``refused=True`` with the reason when ``requested``
        contradicts the recorded provenance, the verdict check or where the rows come from.

    Examples:
        >>> resolve_design("same_run_random", labelled_in_target=False,
        ...                selections={"random": 40}).refused
        True
        >>> resolve_design(None, labelled_in_target=True, selections={"by_verdict": 40}).design
        'same_run_stratified'
    """
    unknown = sorted(set(selections) - set(SELECTIONS))
    if unknown:
        raise CalibrationInputError(f"unknown selections {unknown}; known: {list(SELECTIONS)}")
    if requested is not None and requested not in DESIGN_ESTIMATORS:
        raise CalibrationInputError(
            f"unknown design {requested!r} (designs: {', '.join(DESIGN_ESTIMATORS)})"
        )
    present = {k for k, v in selections.items() if v > 0}
    warnings: list[str] = []
    non_random = sorted(present & _NOT_RANDOM)
    check_says_not_random = check is not None and not check.consistent_with_random
    if check is not None and present - _RANDOM_LIKE - _NOT_RANDOM:
        warnings.append(f"labels of unknown selection checked against the judge verdicts: "
                        f"{check.message}")  # fmt: skip
    only_active = present == {"active"}

    def refuse(reason: str) -> DesignDecision:
        return DesignDecision(None, None, reason, True, tuple(warnings))

    if "file" in present:
        if order_trend_p is not None and order_trend_p < FILE_ORDER_ALPHA:
            return refuse(
                f"labels drawn in file order cannot be taken as a random sample: the judge's "
                f"verdicts trend along the file (p = {order_trend_p:.2g}), so the file is sorted "
                "by something related to the rows' outcome and its first rows do not represent "
                "the rest; label in random or stratified order (Label page), or import the "
                "labels with the selection they really had"
            )
        trend = ("the judge's verdicts show no trend along it" if order_trend_p is None
                 else f"the judge's verdicts show no trend along it, p = {order_trend_p:.2g}")
        warnings.append(
            "labels drawn in file order: taken as a random sample within each judge-verdict "
            "stratum, which holds only if the file is in no order related to the rows' truth "
            f"({trend})"
        )
    if "escalated" in present:
        if not escalation_recorded:
            return refuse(
                "labels drawn from the escalated queue cannot be weighted: the escalation that "
                "drew them (which rows the acceptance rule abstained on) is not recorded with "
                "these labels, or they come from two escalations; label in random or "
                "stratified order, or re-record the rule with calibrate judge select"
            )
        warnings.append(
            "labels drawn from the escalated queue (rows an acceptance rule abstained on): the "
            "escalated rows are their own strata, so the estimate holds"
        )
    if "flips_first" in present:
        warnings.append(
            "labels drawn flips first: rows whose verdict flipped across repeats or orders are "
            "their own strata, so the estimate holds under any aggregation rule"
        )

    if requested is None:
        if not labelled_in_target:
            return _decision(
                "separate_calibration",
                "the labelled rows are not rows of the target run: their judge error rates are "
                f"transferred (verdict-reweighted) to correct the target's {quantity}",
                warnings,
            )
        if only_active and has_probabilities:
            return _decision(
                "active",
                "every label was drawn by the active queue with a recorded inclusion "
                "probability: inverse-probability weighting",
                warnings,
            )
        if "active" in present:
            warnings.append(
                "some labels were drawn actively but are mixed with other selections; estimated "
                "within judge-verdict strata, which assumes random draws within each stratum"
            )
        if present <= _RANDOM_LIKE and not check_says_not_random:
            return _decision(
                "same_run_random",
                "the labelled rows are a random sample of the target run; estimated within "
                "judge-verdict strata (post-stratified)",
                warnings,
            )
        why = (
            f"labels chosen {', '.join(non_random)}"
            if non_random
            else "selection not recorded as random"
        )
        return _decision(
            "same_run_stratified",
            f"the labelled rows are rows of the target run ({why}); estimated within "
            "judge-verdict strata, valid for any allocation between them",
            warnings,
        )
    if requested == "separate_calibration":
        return _decision(
            requested,
            "chosen explicitly: the judge's error rates are transferred to the target",
            warnings,
        )
    if not labelled_in_target:
        return refuse(
            f"--design {requested} refused: the labelled rows are not rows of the target run "
            "(labels from another run or dataset); only separate_calibration is valid"
        )
    if requested == "active":
        if not ("active" in present and has_probabilities):
            return refuse(
                "--design active refused: the labels carry no recorded inclusion probabilities "
                "(they were not drawn by the active queue)"
            )
        if not only_active:
            return refuse("--design active refused: some labels were not drawn by the active "
                          "queue")  # fmt: skip
        return _decision(requested, "chosen explicitly (active queue)", warnings)
    if "active" in present:
        return refuse(
            f"--design {requested} refused: labels were drawn by the active queue with unequal "
            "probabilities; only the active (inverse-probability) design is valid"
        )
    if requested == "same_run_random":
        if non_random:
            return refuse(
                f"--design same_run_random refused: recorded provenance says labels were chosen "
                f"{', '.join(non_random)}, not at random"
            )
        if check_says_not_random and check is not None:
            return refuse(f"--design same_run_random refused: {check.message}")
    return _decision(requested, "chosen explicitly", warnings)


def labels_alone(quantity: str, *, same_run: bool, present: Collection[str], clustered: bool,
                 check: SelectionCheck | None) -> tuple[bool, str]:
    """Whether the labels alone estimate the target, and the assumption that says so or not.

    They do when they are a random sample of the target run itself (drawn at random, or all of
    it, and not clustered by document); otherwise they describe only the labelled rows.

    Args:
        quantity: What the labels estimate, in words ("pass rate", "shares").
        same_run: Whether the labelled rows are rows of the target run.
        present: The selections the labelled rows were drawn by.
        clustered: Whether the rows cluster by document.
        check: The judge-verdict mix check of the labelled rows, when one was made.
    """
    valid = same_run and set(present) <= {"random", "all"} and not clustered and (
        check is None or check.consistent_with_random)
    return valid, (
        "the labelled rows are a random sample of the target run" if valid else
        f"the human {quantity} of the labelled rows themselves; not an estimate of the target "
        + ("(the rows cluster by document)" if clustered else
           "(the labels are not a random sample of it)" if same_run else "(another run)"))


def decide_design(
    requested: str | None, *, selections: Mapping[str, int], selection: Codes,
    share: npt.NDArray[np.float64], same_run: bool, order_trend_p: float | None,
    base_counts: Callable[[], tuple[npt.ArrayLike, npt.ArrayLike] | None],
    names: Sequence[str] = STRATA, quantity: str = "pass rate", escalation_recorded: bool = True,
) -> tuple[DesignDecision, SelectionCheck | None]:
    """:func:`resolve_design` for a calibration's labelled rows, with the check it rests on.

    Args:
        requested: As in :func:`resolve_design`.
        selections: Labelled rows per recorded selection.
        selection: Each labelled row's selection code (index into :data:`SELECTIONS`).
        share: Each labelled row's share of the active order's selection weight.
        same_run: Whether the labelled rows are rows of the target run.
        order_trend_p: The p-value of the judge's verdicts' trend along the file, if measured.
        base_counts: Labelled and dataset rows per judge-verdict stratum (``names``), asked for
            only when a selection is not random within strata by construction; ``None`` when
            there is nothing to check.
        names: The strata's names.
        quantity: As in :func:`resolve_design`.
        escalation_recorded: As in :func:`resolve_design`.

    Returns:
        The decision, and the selection check when one was made.
    """
    check = None
    if {k for k, v in selections.items() if v} - CHECKED_BY_DESIGN:
        counts = base_counts()
        if counts is not None:
            check = selection_check_from_counts(*counts, names=names)
    active = selection == SELECTIONS.index("active")
    has_probabilities = bool(active.any() and np.isfinite(share[active]).all())
    decision = resolve_design(
        requested, labelled_in_target=same_run, selections=selections,
        has_probabilities=has_probabilities, check=check, order_trend_p=order_trend_p,
        quantity=quantity, escalation_recorded=escalation_recorded,
    )
    return decision, check
