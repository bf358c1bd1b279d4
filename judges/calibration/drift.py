"""Is last month's card still true? Anytime-valid drift tests that say *who* drifted.

A judge card's correction rests on the judge's error rates. Two things can change after it was
made: the **judge** (a provider's silent model update, a new rubric behind an external judge's
unchanged name) or the **system** whose answers it judges (a regression, new kinds of
questions). Re-scoring the card's labelled *anchor* rows with the judge tells them apart: if
the judge still gives the anchor rows the verdicts the card recorded, a change in its verdicts
on new rows comes from the answers; if not, the judge changed.

Every test is a **betting e-process** (Waudby-Smith & Ramdas 2024; Shafer 2021): for a null
``E[X_t] <= m`` on observations in [0, 1], the wealth ``K_t = prod_i (1 + lambda_i (X_i - m))``
with bets ``lambda_i`` chosen from the observations before ``i`` (aGRAPA) is a nonnegative
supermartingale under the null, so by Ville's inequality ``P(sup_t K_t >= 1/a) <= a``: the
test may be looked at after every row and stopped whenever, and its false-alarm rate stays at
most ``a`` (a rolling z-test looked at repeatedly does not). :func:`drift_test` runs

* **judge drift** — the anchor rows: under an unchanged judge a re-scored verdict and the
  recorded one are two draws of the same judge on the same row, so among the rows whose verdict
  changed, fail -> pass and pass -> fail are equally likely (exact, whatever the judge's own
  noise): a lenient or stricter judge breaks that symmetry. Beside it, ``X = 1`` when a
  re-scored row's verdict differs from the card's, null ``E[X] <= tolerance`` (the share of
  rows whose calls disagreed at calibration), for a change with no direction;
* **system drift** — the judge's pass rate on the new rows against the reference (the card's
  calibration rows, or a baseline run): two one-sided e-processes against the reference's
  confidence interval, so the reference's own sampling error is accounted for;
* **the card's error rates** — with expert labels on new rows: the judge's pass share on the
  human-pass rows (sensitivity) and its fail share on the human-fail rows (specificity) against
  the card's lower confidence bounds;

with the level ``alpha`` split over the tests present (Bonferroni), so the chance of any false
alarm is at most ``alpha`` at any stopping time. The anchor tests decide the attribution:
judge drift when one rejects. Otherwise a moved pass rate is system drift only when its move
differs from the judge's own paired change on the anchor rows by more than the noise of both
and of the reference allows (two-sided 5 %), and undetermined when not, or without anchors;
failed error rates with the anchors holding are system drift (new answers the judge handles
worse).

References:
    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
    betting. JRSS-B 86(1), 1-27 (aGRAPA bets, e-processes).
    Ville, J. (1939). Etude critique de la notion de collectif.
    Shafer, G. (2021). Testing by betting. JRSS-A 184(2), 407-431.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.stats import norm

from ._results import CalibrationInputError, _ToDict
from .rates import wilson_interval

__all__ = [
    "DriftResult",
    "EProcess",
    "betting_e_process",
    "drift_test",
]

Alternative = Literal["greater", "less"]
_BET_CAP = 0.5  # the largest bet, as a share of what the null allows (WSR's c)


@dataclass(frozen=True)
class EProcess(_ToDict):
    """One betting e-process: a test that may be looked at after every observation.

    Attributes:
        name: What it tests.
        null: The null mean bound ``m`` (``E[X] <= m`` for ``greater``, ``>= m`` for ``less``).
        alternative: ``greater`` (bets on a mean above ``m``) or ``less``.
        level: Its false-alarm level (its share of the overall ``alpha``).
        n: Observations.
        mean: Their mean (``None`` without any).
        e_value: The wealth after the last observation.
        e_max: The largest wealth reached (rejects when at least ``1 / level``).
        crossed_at: The observation at which the wealth first reached ``1 / level`` (1-based),
            or ``None``.
        rejected: Whether it did.
    """

    name: str
    null: float
    alternative: str
    level: float
    n: int
    mean: float | None
    e_value: float
    e_max: float
    crossed_at: int | None
    rejected: bool
    path: tuple[float, ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        """JSON-safe fields (the path left out)."""
        out = super().to_dict()
        out.pop("path", None)
        return out


def betting_e_process(
    x: npt.ArrayLike, *, null: float, alternative: Alternative = "greater", level: float,
    name: str = "", keep_path: bool = False,
) -> EProcess:
    """The aGRAPA betting e-process of observations ``x`` in [0, 1] against a null mean bound.

    Args:
        x: Observations in [0, 1], in the order they arrive (an order fixed independently of
            their values).
        null: ``m``: the null is ``E[X_t | past] <= m`` (``greater``) or ``>= m`` (``less``).
        alternative: The direction bet on.
        level: Rejects when the wealth reaches ``1 / level``.
        name: What it tests (for messages).
        keep_path: Keep the wealth after every observation (for the benchmark).

    Returns:
        The :class:`EProcess`.

    Examples:
        >>> e = betting_e_process([1] * 20, null=0.2, level=0.05)
        >>> e.rejected, e.crossed_at
        (True, 5)
        >>> betting_e_process([0, 1] * 50, null=0.5, level=0.05).rejected
        False
    """
    values = np.asarray(x, dtype=float)
    if values.ndim != 1 or (values.size and (values.min() < 0 or values.max() > 1)):
        raise CalibrationInputError("e-process observations must be a 1-D array in [0, 1]")
    if not 0.0 < level < 1.0:
        raise CalibrationInputError(f"level must be in (0, 1), got {level}")
    if alternative == "less":
        values, m = 1.0 - values, 1.0 - float(null)
    elif alternative == "greater":
        m = float(null)
    else:
        raise CalibrationInputError(f"alternative must be greater or less, got {alternative!r}")
    m = min(max(m, 1e-6), 1.0 - 1e-6)
    n = values.size
    # Predictable estimates from the observations before each one (WSR 2024, section 3.2):
    # mu_t = (1/2 + sum_{i<=t} x_i) / (t + 1), s2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1),
    # and the bet on observation t uses mu_{t-1}, s2_{t-1}.
    t = np.arange(1, n + 1, dtype=float)
    mu_after = (0.5 + np.cumsum(values)) / (t + 1.0)
    sq_after = np.cumsum((values - mu_after) ** 2)
    mu_prev = np.concatenate([[0.5], mu_after[:-1]]) if n else mu_after
    var_prev = (0.25 + np.concatenate([[0.0], sq_after[:-1]])) / t if n else mu_after
    gap = mu_prev - m
    bet = np.clip(gap / (var_prev + gap**2), 0.0, _BET_CAP / m)
    log_wealth = np.cumsum(np.log1p(bet * (values - m))) if n else np.zeros(0)
    threshold = math.log(1.0 / level)
    crossed = np.flatnonzero(log_wealth >= threshold)
    e_last = float(np.exp(log_wealth[-1])) if n else 1.0
    e_max = float(np.exp(log_wealth.max())) if n else 1.0
    mean = None if not n else float(np.asarray(x, dtype=float).mean())
    return EProcess(
        name=name, null=float(null), alternative=alternative, level=float(level), n=int(n),
        mean=mean, e_value=e_last, e_max=max(e_max, 1.0) if n else 1.0,
        crossed_at=int(crossed[0]) + 1 if crossed.size else None, rejected=bool(crossed.size),
        path=tuple(np.exp(log_wealth).tolist()) if keep_path else (),
    )  # fmt: skip


Which = Literal["none", "judge", "system", "undetermined"]


@dataclass(frozen=True)
class DriftResult(_ToDict):
    """Who drifted, in one sentence, with every test behind it.

    Attributes:
        which: ``none``, ``judge`` (the anchor rows are re-scored differently), ``system`` (the
            judge holds on the anchor rows, and its verdicts on new rows moved by more than its
            change on the anchors explains, or its error rates on them failed), or
            ``undetermined`` (something moved; no anchor rows, or too few to rule the judge out).
        drifted: Whether anything drifted.
        sentence: What happened, in plain words.
        alpha: The overall false-alarm level (split over the tests).
        tests: Every e-process.
        reference: The reference pass rate's interval (``low``, ``high``, ``n``, ``estimate``).
        judge_shift: The judge's pass-rate change on the anchor rows (``estimate``, its ``se``
            and the 95 % ``bound`` on its size), when anchors were re-scored.
    """

    which: Which
    drifted: bool
    sentence: str
    alpha: float
    tests: tuple[EProcess, ...]
    reference: dict[str, float | int | None]
    judge_shift: dict[str, float | int | None] = field(default_factory=dict)


def _codes(values: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """Verdict codes (1 pass, 0 fail, -1 neither) of codes or words."""
    v = np.asarray(values)
    if v.dtype.kind in "USO":
        return np.select([v == "pass", v == "fail"], [1, 0], -1).astype(np.int8)
    return v.astype(np.int8)


def drift_test(
    *,
    alpha: float = 0.05,
    anchor_recorded: npt.ArrayLike | None = None,
    anchor_rescored: npt.ArrayLike | None = None,
    tolerance: float = 0.02,
    new_pass: npt.ArrayLike | None = None,
    reference: tuple[int, int] | None = None,
    human_pass_judged_pass: npt.ArrayLike | None = None,
    human_fail_judged_fail: npt.ArrayLike | None = None,
    sensitivity: tuple[float, float] | None = None,
    specificity: tuple[float, float] | None = None,
) -> DriftResult:
    """Test a card's judge and system for drift (see the module docstring).

    The anchor rows get two tests, sharing their part of ``alpha``: **direction** (under an
    unchanged judge, a re-scored verdict and the recorded one are two draws of the same
    judge on the same row, so among the rows that changed, fail -> pass is as likely as
    pass -> fail: exact, whatever the judge's noise; a lenient or stricter new judge breaks
    it), and **magnitude** (more rows changed than ``tolerance``, for a change with no
    direction).

    Args:
        alpha: The chance of a false alarm at any stopping time, over every test.
        anchor_recorded: Per re-scored anchor row, the card's verdict (1 pass, 0 fail, -1
            neither; or the words).
        anchor_rescored: The verdict it was re-scored with, in the order the rows are tested.
        tolerance: The share of anchor rows that may differ without drift (magnitude test).
        new_pass: Per new row the judge judged, whether it passed it.
        reference: ``(passes, judged)`` of the reference run (the card's calibration rows, or a
            baseline).
        human_pass_judged_pass: Per new labelled row the experts passed, whether the judge
            passed it (its sensitivity there).
        human_fail_judged_fail: Per new labelled row the experts failed, whether the judge
            failed it (its specificity there).
        sensitivity: The card's sensitivity ``(estimate, standard error)``.
        specificity: The card's specificity ``(estimate, standard error)``.

    Returns:
        The :class:`DriftResult`.

    Raises:
        CalibrationInputError: nothing to test, or a test without its reference.
    """
    if not 0.0 < alpha < 1.0:
        raise CalibrationInputError(f"alpha must be in (0, 1), got {alpha}")
    if (anchor_recorded is None) != (anchor_rescored is None):
        raise CalibrationInputError("anchor_recorded and anchor_rescored go together")
    families = [anchor_recorded is not None, new_pass is not None,
                human_pass_judged_pass is not None, human_fail_judged_fail is not None]
    if not any(families):
        raise CalibrationInputError("nothing to test: give anchor rows, new verdicts or labels")
    if new_pass is not None and reference is None:
        raise CalibrationInputError("the new rows' pass rate needs a reference (passes, judged)")
    share = alpha / sum(families)
    tests: list[EProcess] = []
    judge_drift = None
    shift: dict[str, float | int | None] = {}
    ref_json: dict[str, float | int | None] = {"low": None, "high": None, "n": None,
                                               "estimate": None}
    changed_share = None
    if anchor_recorded is not None and anchor_rescored is not None:
        before, after = _codes(anchor_recorded), _codes(anchor_rescored)
        if before.shape != after.shape:
            raise CalibrationInputError("anchor_recorded and anchor_rescored need one entry per "
                                        "row")
        changed = before != after
        moved = (before >= 0) & (after >= 0) & changed
        up = (after[moved] == 1).astype(float)  # fail -> pass among the rows that moved
        tests += [
            betting_e_process(changed.astype(float), null=tolerance, level=share / 2,
                              name="anchor rows re-scored differently"),
            betting_e_process(up, null=0.5, alternative="greater", level=share / 4,
                              name="anchor rows moved fail -> pass more than back"),
            betting_e_process(up, null=0.5, alternative="less", level=share / 4,
                              name="anchor rows moved pass -> fail more than back"),
        ]
        judge_drift = any(t.rejected for t in tests)
        changed_share = float(changed.mean()) if changed.size else 0.0
        both = (before >= 0) & (after >= 0)
        n = int(both.sum())
        b, c = int(((before == 0) & (after == 1)).sum()), int(((before == 1) & (after == 0)).sum())
        d = (b - c) / n if n else 0.0
        se = math.sqrt(max(b + c - (b - c) ** 2 / n, 0.0)) / n if n else 0.0
        # At least one discordant pair's worth: no change seen is not no change possible.
        se = max(se, 1.0 / n if n else 1.0)
        bound = abs(d) + float(norm.isf(0.025)) * se
        shift = {"estimate": d, "se": se, "bound": bound, "n": n, "fail_to_pass": b,
                 "pass_to_fail": c}
    moved_tests: list[EProcess] = []
    if new_pass is not None and reference is not None:
        k, n_ref = reference
        third = share / 3.0  # the reference interval and the two directions share the budget
        ref = wilson_interval(int(k), int(n_ref), confidence=1.0 - 2.0 * third)
        low = 0.0 if ref.low is None else float(ref.low)
        high = 1.0 if ref.high is None else float(ref.high)
        ref_json = {"low": low, "high": high, "n": int(n_ref),
                    "estimate": None if ref.estimate is None else float(ref.estimate)}
        x = np.asarray(new_pass, dtype=float)
        up_t = betting_e_process(x, null=high, alternative="greater", level=third,
                                 name="judge pass rate on new rows above the reference")
        down_t = betting_e_process(x, null=low, alternative="less", level=third,
                                   name="judge pass rate on new rows below the reference")
        tests += [up_t, down_t]
        moved_tests += [t for t in (up_t, down_t) if t.rejected]
    for rows, rate, what in ((human_pass_judged_pass, sensitivity, "sensitivity"),
                             (human_fail_judged_fail, specificity, "specificity")):
        if rows is None:
            continue
        if rate is None:
            raise CalibrationInputError(f"the {what} test needs the card's {what}")
        half = share / 2.0  # the card's bound and the e-process share the budget
        bound = max(1e-6, rate[0] - float(norm.isf(half)) * rate[1])
        t = betting_e_process(np.asarray(rows, dtype=float), null=bound, alternative="less",
                              level=half, name=f"{what} on new labelled rows below the card's")
        tests.append(t)
        if t.rejected:
            moved_tests.append(t)
    which, sentence = _attribute(judge_drift, moved_tests, tests, changed_share, tolerance,
                                 shift, ref_json)
    return DriftResult(which=which, drifted=which != "none", sentence=sentence, alpha=alpha,
                       tests=tuple(tests), reference=ref_json, judge_shift=shift)


def _attribute(judge_drift: bool | None, moved: list[EProcess], tests: list[EProcess],
               changed_share: float | None, tolerance: float,
               shift: dict[str, float | int | None],
               ref: dict[str, float | int | None]) -> tuple[Which, str]:
    """Who drifted, and the sentence that says so."""
    anchors = [t for t in tests if t.name.startswith("anchor")]
    n_anchor = anchors[0].n if anchors else 0
    if judge_drift:
        fired = [t for t in anchors if t.rejected]
        t = min(fired, key=lambda e: e.crossed_at or 10**9)
        how = (f"{shift['fail_to_pass']} rows moved fail -> pass and {shift['pass_to_fail']} "
               "pass -> fail" if "moved" in t.name else
               f"{changed_share:.0%} of them changed, more than the {tolerance:.0%} its own "
               "noise allows")
        return "judge", (
            f"The judge drifted: the {n_anchor} anchor rows re-scored by it differ from the "
            f"card ({how}; e-value {t.e_max:.3g} >= {1 / t.level:.3g}, at row {t.crossed_at}). "
            "The card no longer describes this judge: recalibrate it before trusting its "
            "corrected pass rates; a change in its verdicts on new rows cannot be told from a "
            "change in the system until then.")
    if moved:
        what = "; ".join(_moved_text(t, ref) for t in moved)
        if judge_drift is None:
            return "undetermined", (
                f"Something drifted: {what}. Without re-scored anchor rows it cannot be told "
                "whether the judge or the system changed: re-score the card's anchor rows with "
                "the judge and pass them with --anchor.")
        stream = [t for t in moved if t.name.startswith("judge pass rate")]
        explained = _judge_explains(stream[0] if stream else None, shift, ref)
        if explained is not None:
            return "undetermined", (
                f"Something drifted: {what}. The anchor rows show no judge change, but they "
                f"cannot rule out one that accounts for the new rows' move (the judge's change "
                f"on them {explained}): re-score more anchor rows to tell the judge from the "
                "system.")
        return "system", (
            f"The system drifted, not the judge: the judge re-scores the anchor rows as the card "
            f"recorded ({changed_share:.0%} of {n_anchor} differ, with no direction; its own "
            f"pass-rate change there is at most {float(shift.get('bound') or 0.0):.1%}), and "
            f"{what}.")
    parts = []
    if judge_drift is not None:
        parts.append(f"the anchor rows re-score as the card recorded ({changed_share:.0%} of "
                     f"{n_anchor} differ, within the {tolerance:.0%} tolerance and with no "
                     "direction)")
    stream = [t for t in tests if t.name.startswith("judge pass rate")]
    if stream and stream[0].mean is not None:
        parts.append(f"the judge passes {stream[0].mean:.1%} of {stream[0].n} new rows, within "
                     f"the reference's [{ref['low']:.1%}, {ref['high']:.1%}]")
    for t in tests:
        if t.name.startswith(("sensitivity", "specificity")):
            parts.append(f"its {t.name.split(' ')[0]} on {t.n} new labelled rows "
                         f"({'-' if t.mean is None else f'{t.mean:.1%}'}) is not shown below "
                         "the card's")
    return "none", "No drift: " + "; ".join(parts) + "."


def _judge_explains(stream: EProcess | None, shift: dict[str, float | int | None],
                    ref: dict[str, float | int | None]) -> str | None:
    """Whether the judge's own pass-rate change on the anchors could explain the new rows' move.

    Under judge drift alone the new rows' pass rate moves by what the judge's change moves it
    on rows like the anchors, so the move minus the anchors' paired change is zero up to both
    samples' noise and the reference's: only a difference beyond that (two-sided 5 %) is the
    system. Comparing the move itself with the anchors' bound ignored the move's noise and
    called a lenient judge's bump the system's in 7.5 % of streams (``bench/drift_alarms.py``).

    Returns:
        ``None`` when the move is beyond what the judge explains (system drift), else the
        anchors' change and the move, in words.
    """
    if stream is None or stream.mean is None or ref["estimate"] is None:
        return None
    new, n_new = float(stream.mean), max(int(stream.n), 1)
    p_ref, n_ref = float(ref["estimate"]), max(int(ref["n"] or 0), 1)
    move = new - p_ref
    d, se_d = float(shift.get("estimate") or 0.0), float(shift.get("se") or 0.0)
    se = math.sqrt(p_ref * (1 - p_ref) / n_ref + new * (1 - new) / n_new + se_d**2)
    if se > 0 and abs(move - d) > float(norm.isf(0.025)) * se:
        return None
    return (f"{d:+.1%} on {shift.get('n')} rows, the new rows {move:+.1%}, a difference of "
            f"{move - d:+.1%} within the {float(norm.isf(0.025)) * se:.1%} their noise allows")


def _moved_text(t: EProcess, ref: dict[str, float | int | None]) -> str:
    mean = "-" if t.mean is None else f"{t.mean:.1%}"
    if t.name.startswith("judge pass rate"):
        side = "above" if t.alternative == "greater" else "below"
        bound = ref["high"] if t.alternative == "greater" else ref["low"]
        return (f"the judge passes {mean} of {t.n} new rows, {side} the reference "
                f"({float(bound or 0.0):.1%} bound; e-value {t.e_max:.3g} at row {t.crossed_at})")
    what = t.name.split(" ")[0]
    return (f"its {what} on {t.n} new labelled rows ({mean}) is below the card's lower bound "
            f"{t.null:.1%} (e-value {t.e_max:.3g} at row {t.crossed_at})")
