"""The words every surface (JSON, text report, app, judge card) uses for rows and verdicts.

One vocabulary, defined once, so the app, the card and the report cannot drift apart:

==============  ===================================================================
term            meaning
==============  ===================================================================
judged          the judge gave a usable pass/fail verdict for the row
not judged      the judge gave no pass/fail verdict: ``unscored`` or ``unsure``
unscored        no usable verdict (unparseable reply, refusal, provider error)
unsure          the judge abstained, or its verdicts flipped across repeats/orders,
                or tied under the aggregation rule
==============  ===================================================================

``not judged = unscored + unsure``. For the estimators the two make one verdict stratum
(:data:`STRATA`): the whole run is the estimand, so those rows are a stratum of the run (same
run) or a third judge outcome (separate calibration set), never silently dropped.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "JUDGED",
    "NOT_JUDGED",
    "STRATA",
    "STRATUM_FAIL",
    "STRATUM_NOT_JUDGED",
    "STRATUM_PASS",
    "UNSCORED",
    "UNSURE",
    "VOCABULARY",
    "population_statement",
]

JUDGED: Final = "judged"
NOT_JUDGED: Final = "not judged"
UNSCORED: Final = "unscored"
UNSURE: Final = "unsure"

VOCABULARY: Final[dict[str, str]] = {
    JUDGED: "the judge gave a usable pass/fail verdict",
    NOT_JUDGED: "the judge gave no pass/fail verdict (unscored or unsure)",
    UNSCORED: "no usable verdict: unparseable reply, refusal or provider error",
    UNSURE: "the judge abstained, flipped across repeats/orders, or tied",
}

STRATUM_PASS: Final = "judge pass"
STRATUM_FAIL: Final = "judge fail"
STRATUM_NOT_JUDGED: Final = "not judged"
#: Judge-verdict strata in code order 0, 1, 2 (see :func:`judges.calibration.verdict_strata`).
STRATA: Final[tuple[str, str, str]] = (STRATUM_PASS, STRATUM_FAIL, STRATUM_NOT_JUDGED)


def population_statement(n_rows: int, n_not_judged: int, *, run: str = "the target run") -> str:
    """Say in words which population a corrected pass rate estimates.

    Args:
        n_rows: Rows in the target run.
        n_not_judged: Of those, rows the judge did not judge (unscored or unsure).
        run: How to name the run in the sentence.

    Returns:
        A sentence such as "the true pass rate of all 1,000 rows of the target run, including
        the 200 rows the judge did not judge (unscored or unsure)".

    Examples:
        >>> population_statement(10, 0)
        'the true (human) pass rate of all 10 rows of the target run'
    """
    base = f"the true (human) pass rate of all {n_rows:,} rows of {run}"
    if n_not_judged:
        base += (
            f", including the {n_not_judged:,} rows the judge did not judge "
            f"({UNSCORED} or {UNSURE})"
        )
    return base
