"""Rules that turn a judge's score into a verdict: ``score>=0.7`` passes, the rest fails.

Tools such as ragas and promptfoo grade with a number; calibration compares verdicts. The rule
is chosen by the user on purpose (``verdicts import --pass-if '>=0.7'``) and stored with the
external judge it makes, so a report and a card say which threshold their verdicts came from:
another threshold is another judge.

>>> rule = parse_score_rule("score >= 0.7")
>>> str(rule), rule.holds(0.7), rule.holds(0.69)
('score>=0.7', True, False)
>>> str(parse_score_rule(">=0.7000001")), str(parse_score_rule(">=1"))
('score>=0.7000001', 'score>=1')
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from labels.errors import CalibrateError

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}
_RULE = re.compile(
    r"^\s*(?:score\s*)?(>=|<=|==|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*$",
    re.IGNORECASE,
)


class ScoreRuleError(CalibrateError):
    """A ``--pass-if``/``--unsure-if`` rule that is not of the form ``>=0.5``."""


@dataclass(frozen=True)
class ScoreRule:
    """``score <op> threshold``: whether a score meets the rule."""

    op: str
    threshold: float

    def holds(self, score: float) -> bool:
        """Whether ``score`` meets the rule (a NaN never does)."""
        return not math.isnan(score) and _OPERATORS[self.op](score, self.threshold)

    def __str__(self) -> str:
        """The rule as stored and shown: ``score>=0.5``.

        The threshold is written as ``repr`` writes it (the shortest text that reads back as
        the same float), less a trailing ``.0``: the text is part of the judge's identity, and
        ``:g`` kept six digits, so ``>=0.7000001`` and ``>=0.7`` were one judge.
        """
        text = repr(self.threshold)
        return f"score{self.op}{text.removesuffix('.0')}"


def parse_score_rule(text: str) -> ScoreRule:
    """``'>=0.5'`` or ``'score >= 0.5'`` (also ``>``, ``<=``, ``<``, ``==``) as a rule.

    Raises:
        ScoreRuleError: the text is not such a rule.
    """
    match = _RULE.match(text)
    if match is None:
        raise ScoreRuleError(
            f"{text!r} is not a score rule: write an operator and a number, e.g. '>=0.5' or "
            "'score>=0.7' (operators: >=, >, <=, <, ==)"
        )
    threshold = float(match.group(2))
    if not math.isfinite(threshold):
        raise ScoreRuleError(f"{text!r}: the threshold must be a finite number")
    return ScoreRule(match.group(1), threshold)


def verdict_of(score: float, pass_if: ScoreRule, unsure_if: ScoreRule | None = None) -> str:
    """``unsure`` if ``unsure_if`` holds, else ``pass`` if ``pass_if`` holds, else ``fail``.

    The unsure band is checked first, so ``--pass-if '>=0.5' --unsure-if '<0.6'`` makes the
    scores in ``[0.5, 0.6)`` unsure rather than passes.
    """
    if unsure_if is not None and unsure_if.holds(score):
        return "unsure"
    return "pass" if pass_if.holds(score) else "fail"


__all__ = ["ScoreRule", "ScoreRuleError", "parse_score_rule", "verdict_of"]
