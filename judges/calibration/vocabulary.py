"""The words every surface (JSON, text report, app, judge card) uses for rows and verdicts.

One vocabulary, defined once, so the app, the card and the report cannot drift apart:

==============  ===================================================================
term            meaning
==============  ===================================================================
judged          the judge gave a usable pass/fail verdict for the row
not judged      the judge gave no pass/fail verdict: ``unscored``, ``unsure`` or
                ``not run``
unscored        the judge was called but gave no usable verdict (unparseable reply,
                refusal, provider error)
unsure          the judge abstained, or its verdicts flipped across repeats/orders,
                or tied under the aggregation rule
not run         the judge was never run on the row (no call at all)
==============  ===================================================================

``not judged = unscored + unsure + not run``. For the estimators they make one verdict stratum
(:data:`STRATA`): the whole run is the estimand, so those rows are a stratum of the run (same
run) or a third judge outcome (separate calibration set), never silently dropped. (The
transported estimator counts only rows the judge ran on; its population statement says so.)
Every pass rate is shown beside "N of M rows judged".
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "AGGREGATION_RULES",
    "DESIGN_ESTIMATORS",
    "JUDGED",
    "NOT_JUDGED",
    "NOT_RUN",
    "P_VALUES",
    "SELECTIONS",
    "SIGNALS",
    "STRATA",
    "STRATUM_FAIL",
    "STRATUM_NOT_JUDGED",
    "STRATUM_PASS",
    "UNSCORED",
    "UNSURE",
    "VOCABULARY",
    "AggregationRule",
    "describe_counts",
    "describe_used",
    "population_statement",
]

JUDGED: Final = "judged"
NOT_JUDGED: Final = "not judged"
UNSCORED: Final = "unscored"
UNSURE: Final = "unsure"
NOT_RUN: Final = "not run"

VOCABULARY: Final[dict[str, str]] = {
    JUDGED: "the judge gave a usable pass/fail verdict",
    NOT_JUDGED: "the judge gave no pass/fail verdict (unscored, unsure or not run)",
    UNSCORED: "called, but no usable verdict: unparseable reply, refusal or provider error",
    UNSURE: "the judge abstained, flipped across repeats/orders, or tied",
    NOT_RUN: "the judge was never run on the row",
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
        n_not_judged: Of those, rows the judge did not judge (unscored, unsure or not run).
        run: How to name the run in the sentence.

    Returns:
        A sentence such as "the true pass rate of all 1,000 rows of the target run, including
        the 200 rows the judge did not judge (unscored, unsure or not run)".

    Examples:
        >>> population_statement(10, 0)
        'the true (human) pass rate of all 10 rows of the target run'
    """
    base = f"the true (human) pass rate of all {n_rows:,} rows of {run}"
    if n_not_judged:
        base += (
            f", including the {n_not_judged:,} rows the judge did not judge "
            f"({UNSCORED}, {UNSURE} or {NOT_RUN})"
        )
    return base


def describe_counts(counts: dict[str, int], *, rows: str = "") -> str:
    """A counts dict in words: ``rows``, ``judged``, ``not_judged`` and its parts.

    Args:
        counts: The counts, as in the report JSON's ``counts.target`` / ``counts.labelled``.
        rows: A word for the rows ("target ", "labelled "), with its trailing space.

    Returns:
        "88 of 600 rows judged; 512 not judged (0 unscored, 12 unsure, 500 not run)".

    Examples:
        >>> describe_counts({"rows": 3, "judged": 3, "not_judged": 0}, rows="target ")
        '3 of 3 target rows judged'
    """
    text = f"{counts['judged']:,} of {counts['rows']:,} {rows}rows {JUDGED}"
    if counts["not_judged"]:
        text += (f"; {counts['not_judged']:,} {NOT_JUDGED} ({counts.get('unscored', 0):,} "
                 f"{UNSCORED}, {counts.get('unsure', 0):,} {UNSURE}, "
                 f"{counts.get('not_run', 0):,} {NOT_RUN})")
    return text


def describe_used(*, used: int, m1: int, m0: int, labelled: dict[str, int]) -> str:
    """How many labelled rows a calibration used, and where the others went; the parts add up.

    Args:
        used: Rows with both a human and a judge pass/fail (the report's ``n``).
        m1: Of those, human pass.
        m0: Of those, human fail.
        labelled: The judge's counts on every labelled row (``counts.labelled``).

    Returns:
        "86 of 200 labelled rows used (human pass 54, fail 32): the 91 the judge judged, less
        5 the humans were unsure on; 109 not judged (0 unscored, 9 unsure, 100 not run)".
    """
    text = (f"{used:,} of {labelled['rows']:,} labelled rows used (human pass {m1:,}, fail "
            f"{m0:,}): the {labelled['judged']:,} the judge {JUDGED}")
    if labelled["judged"] > used:
        text += f", less {labelled['judged'] - used:,} the humans were {UNSURE} on"
    if labelled["not_judged"]:
        text += (f"; {labelled['not_judged']:,} {NOT_JUDGED} ({labelled.get('unscored', 0):,} "
                 f"{UNSCORED}, {labelled.get('unsure', 0):,} {UNSURE}, "
                 f"{labelled.get('not_run', 0):,} {NOT_RUN})")
    return text


# The names the command line and the app offer as choices live here, beside the words, because
# this module imports nothing: `calibrate report --help` lists them without loading scipy. The
# modules that act on them import them from here, so a choice cannot be offered that the engine
# does not know.

#: How a label's row was chosen (recorded with every label; ``unknown`` for old labels). The
#: label store keeps the same tuple as ``labels.names.SELECTIONS`` (the store may not import
#: the engine); ``tests/test_vocabulary.py`` holds the two, and the queue orders, together.
SELECTIONS: tuple[str, ...] = (
    "random",
    "by_verdict",
    "flips_first",
    "active",
    "file",
    "imported",
    "all",
    "unknown",
    "escalated",
)

AggregationRule = Literal["all_agree", "majority"]
AGGREGATION_RULES: dict[str, str] = {
    "all_agree": (
        "MT-Bench rule: a verdict counts only if every scored call (all repeats, both orders) "
        "agrees; a row that flips is 'unsure' and is excluded"
    ),
    "majority": "the most frequent scored verdict; equal top counts give 'unsure'",
}
"""How a row's calls become one verdict, in words (:mod:`judges.aggregation` applies them)."""

#: The estimator each design uses.
DESIGN_ESTIMATORS: dict[str, str] = {
    "same_run_random": "verdict_stratified",
    "same_run_stratified": "verdict_stratified",
    "separate_calibration": "lee_stratified",
    "active": "active_ipw",
}

P_VALUES: dict[str, str] = {
    "binomial": "exact binomial tail P(Bin(n, alpha) <= errors)",
    "hoeffding_bentkus": "Hoeffding-Bentkus bound (Bates et al. 2021), valid for any loss in "
                         "[0, 1]; more cautious than the exact binomial tail for 0/1 errors",
}
"""The p-values :func:`learn_then_test` can use, in words."""

SIGNALS: dict[str, str] = {
    "agreement": "agreement of the judge's calls across repeats and swapped source orders",
    "probability": "the judge's verdict probability (a claim-split judge's p_yes per claim)",
    "judges": "agreement of other judges' verdicts on the row",
}
"""The signals a confidence score can use, in words."""
