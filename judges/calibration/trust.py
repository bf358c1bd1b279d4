"""How far to trust a judge, in one sentence, and whether it meets the eval owner's rule.

Pure: estimates in, words and a decision out. The default rule is the one of awslabs'
calibrated-agent-evaluation: certify a judge only when the *lower* confidence bounds of both its
sensitivity (it passes passing answers) and its specificity (it fails failing answers) are at
least 0.80. When an interval straddles the bar the decision waits for more labels, and the
number of further rows of that class is planned with :func:`labels_for_proportion` at the
current estimate.

References:
    awslabs/calibrated-agent-evaluation (certification on the lower bounds of TPR and TNR).
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from judges.calibration._results import Estimate, _ToDict
from judges.calibration.planning import labels_for_proportion

SMALL_SAMPLE = 30
"""Fewer labelled rows than this in a class and every rate of that class is flagged."""

Status = Literal["certified", "not certified", "undecided"]


@dataclass(frozen=True)
class CertificationRule:
    """The eval owner's bar for trusting a judge.

    Attributes:
        min_sensitivity: Lowest acceptable lower bound of sensitivity.
        min_specificity: Lowest acceptable lower bound of specificity.
    """

    min_sensitivity: float = 0.80
    min_specificity: float = 0.80

    def describe(self) -> str:
        """The rule in words."""
        return (f"lower bounds of sensitivity ≥ {self.min_sensitivity:.2f} and specificity ≥ "
                f"{self.min_specificity:.2f}")


@dataclass(frozen=True)
class TrustVerdict(_ToDict):
    """A plain-language verdict on a judge and its certification.

    Attributes:
        headline: One sentence: what share of failing answers the judge passes, what share of
            passing ones it misses, and its agreement beside the experts'.
        status: ``certified``, ``not certified`` or ``undecided``.
        certification: The decision in words, with the rule.
        more_failing: Further human-fail rows that would likely decide the rule (``None``
            when failing rows are not what is missing).
        more_passing: The same for human-pass rows.
        small_sample: Whether either class has fewer than :data:`SMALL_SAMPLE` rows.
        small_sample_note: Which class is small and what follows, or ``None``.
    """

    headline: str
    status: Status
    certification: str
    more_failing: int | None
    more_passing: int | None
    small_sample: bool
    small_sample_note: str | None


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _share(rate: Estimate) -> str:
    """``9 % [3–24 %]`` of a rate (its complement's interval already flipped by the caller)."""
    if rate.estimate is None or rate.low is None or rate.high is None:
        return f"an unknown share ({rate.reason or 'not computed'})"
    return f"{_pct(rate.estimate)} [{100 * rate.low:.0f}–{100 * rate.high:.0f} %]"


def _complement(rate: Estimate) -> Estimate:
    if rate.estimate is None or rate.low is None or rate.high is None:
        return rate
    return Estimate(1 - rate.estimate, 1 - rate.high, 1 - rate.low, rate.n, rate.method,
                    rate.confidence)


def _more_rows(rate: Estimate, bar: float) -> int | None:
    """Further rows of this class that would likely move the interval off ``bar``."""
    if rate.estimate is None or rate.low is None or rate.high is None:
        return None
    if rate.low >= bar or rate.high < bar:
        return None  # already decided
    gap = abs(rate.estimate - bar)
    if gap == 0:
        return None  # at the bar exactly: more rows alone cannot be planned
    p = min(max(rate.estimate, 1e-6), 1 - 1e-6)
    return max(labels_for_proportion(gap, p=p, confidence=rate.confidence) - rate.n, 1)


def trust_verdict(
    sensitivity: Estimate, specificity: Estimate,
    *, kappa: Estimate | None = None, human_kappa: Estimate | None = None,
    rule: CertificationRule | None = None,
) -> TrustVerdict:
    """Say in words how far to trust a judge, and decide the eval owner's rule.

    Args:
        sensitivity: Judge passes / human-pass rows, with its interval and ``n``.
        specificity: Judge fails / human-fail rows, with its interval and ``n``.
        kappa: Judge-human Cohen's kappa, if computed.
        human_kappa: Human-human kappa (the ceiling), if two annotators overlap.
        rule: The certification rule (default :class:`CertificationRule`).

    Returns:
        A :class:`TrustVerdict`.

    Examples:
        >>> from judges.calibration.rates import wilson_interval
        >>> v = trust_verdict(wilson_interval(27, 63), wilson_interval(29, 32))
        >>> v.headline
        'Passes 9 % [3–24 %] of failing answers and misses 57 % [45–69 %] of passing ones.'
        >>> v.status
        'not certified'
    """
    rule = rule or CertificationRule()
    headline = (f"Passes {_share(_complement(specificity))} of failing answers and misses "
                f"{_share(_complement(sensitivity))} of passing ones")
    if kappa is not None and kappa.estimate is not None:
        headline += f"; agreement {kappa.estimate:.2f}"
        if human_kappa is not None and human_kappa.estimate is not None:
            headline += f" vs the experts' {human_kappa.estimate:.2f}"
    headline += "."

    checks = ((sensitivity, rule.min_sensitivity, "sensitivity", "passing"),
              (specificity, rule.min_specificity, "specificity", "failing"))
    missing = [f"no human-{word[:4]} rows are labelled" for rate, _, _, word in checks
               if rate.estimate is None]
    below = [f"{name} is at most {rate.high:.2f}" for rate, bar, name, _ in checks
             if rate.high is not None and rate.high < bar]
    more = {word: _more_rows(rate, bar) for rate, bar, _, word in checks}
    if missing:
        status: Status = "undecided"
        text = f"Undecided against the rule ({rule.describe()}): " + "; ".join(missing) + "."
    elif below:
        status = "not certified"
        text = f"Not certified ({rule.describe()}): " + "; ".join(below) + "."
    elif all(rate.low is not None and rate.low >= bar for rate, bar, _, _ in checks):
        status = "certified"
        text = f"Certified: {rule.describe()}."
    else:
        status = "undecided"
        asks = [f"label about {n:,} more {word} rows" for word, n in more.items() if n]
        text = (f"Undecided against the rule ({rule.describe()}): "
                + (" and ".join(asks) if asks else "the estimate sits on the bar") + " to decide.")

    small = [f"{rate.n} {word}" for rate, _, _, word in checks if rate.n < SMALL_SAMPLE]
    note = None
    if small:
        note = (f"Small sample: only {' and '.join(small)} rows labelled (fewer than "
                f"{SMALL_SAMPLE} per class); the intervals are wide and the numbers can move "
                "a lot.")
    return TrustVerdict(
        headline=headline, status=status, certification=text,
        more_failing=more["failing"] if status == "undecided" else None,
        more_passing=more["passing"] if status == "undecided" else None,
        small_sample=bool(small), small_sample_note=note,
    )
