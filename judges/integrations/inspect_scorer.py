"""inspect_ai: a scorer wrapper that reports a judge card's corrected pass rate.

Wrap the inspect scorer that *is* the card's judge (its ``C``/``I`` grades are the judge's
pass/fail verdicts) and the eval's results gain the card-corrected pass rate with its
interval and n, next to the judge's observed rate::

    from inspect_ai.scorer import model_graded_qa
    from judges.integrations.inspect_scorer import calibrated

    Task(dataset=..., scorer=calibrated(model_graded_qa(model=JUDGE), "card.json",
                                        config_id="b2:...", min_pass_rate=0.6))

The metric ``calibrated_pass_rate`` shows as the group ``corrected`` / ``low`` / ``high`` /
``n`` / ``observed`` / ``observed_low`` / ``observed_high`` (and ``passed``, 1 or 0, with
``min_pass_rate``); a refused correction leaves out ``corrected``, ``low`` and ``high``. For a
CI exit code, :func:`gate_log` decides from the finished log's samples with the same call.

Grades map to verdicts as ``calibrate verdicts import`` reads inspect logs: ``C`` (or
``True``, ``1``) pass, ``I`` (``False``, ``0``) fail, ``P`` unsure, ``N`` or an unscored
sample (NaN) no verdict. The card's error rates hold for its own judge config only, so the
verdicts must name it: ``config_id=`` declares that the wrapped scorer runs the card's config
(checked against the card before the eval runs); without it ``allow_unverified=True`` is
needed (the score is then reported ``UNVERIFIED``). Inspect leaves unscored samples out
of metrics; :func:`gate_log` reads them from the log and keeps them in the estimand.

Requires the ``inspect`` extra (``pip install 'calibrate[inspect]'``). Scoring goes through
:func:`judges.integrations.score`, the one estimation path.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

    from judges.integrations import CardGate
    from judges.outputs.gate import GateOn
    from judges.outputs.gate import Score as CardScore

_PASS = ("C", "pass", "PASS", True, 1, 1.0)
_FAIL = ("I", "fail", "FAIL", False, 0, 0.0)
_UNSURE = ("P", "unsure", "UNSURE")


def _verdict(value: Any, sample_id: Any) -> str | None:
    """A grade as a verdict (``None``: no verdict).

    Raises:
        ValueError: a grade that is no verdict (e.g. a score of 0.7), naming the sample.
    """
    if value is None or value == "N" or (isinstance(value, float) and math.isnan(value)):
        return None
    # bool before numbers: True == 1, and both mean pass.
    if any(value is v or (type(value) is type(v) and value == v) for v in _PASS):
        return "pass"
    if any(value is v or (type(value) is type(v) and value == v) for v in _FAIL):
        return "fail"
    if value in _UNSURE:
        return "unsure"
    raise ValueError(
        f"sample {sample_id!r}: grade {value!r} is not a judge verdict (C/I/P/N, True/False, "
        "1/0)")


def verdict_records(scores: Iterable[tuple[Any, Score, Mapping[str, Any] | None]], *,
                    config_id: str | None = None) -> list[dict[str, Any]]:
    """Verdict rows (``id``, ``verdict``, ``config_id``, ``segment``) from inspect scores.

    Args:
        scores: ``(sample id, score, sample metadata)`` triples; an id seen again is the
            next repeat (epoch) of that item.
        config_id: The judge config the grades come from (checked against the card's), or
            ``None``: rows that name none.
    """
    rows = []
    seen: dict[str, int] = {}
    for sample_id, score, metadata in scores:
        item = str(sample_id)
        # Several epochs give one grade per epoch: repeats of the item, which the card's own
        # aggregation rule combines (all_agree: grades that differ make the item unsure).
        repeat = seen[item] = seen.get(item, -1) + 1
        row: dict[str, Any] = {"id": item, "repeat": repeat,
                               "verdict": _verdict(score.value, sample_id)}
        if config_id:
            row["config_id"] = config_id
        segment = (metadata or {}).get("segment")
        if segment is not None:
            row["segment"] = str(segment)
        rows.append(row)
    return rows


def _values(scored: CardScore, decision: CardGate | None) -> dict[str, float | None]:
    c, o = scored.corrected, scored.observed
    values: dict[str, float | None] = {
        "corrected": None if c.refused else c.estimate,
        "low": None if c.refused else c.low,
        "high": None if c.refused else c.high,
        "n": float(scored.n),
        "observed": o.estimate,
        "observed_low": o.low,
        "observed_high": o.high,
    }
    if decision is not None:
        values["passed"] = 1.0 if decision.passed else 0.0
    return values


def _calibrated_pass_rate(card: str, min_pass_rate: float | None = None, on: str = "lower",
                          config_id: str | None = None, allow_unverified: bool = False
                          ) -> Metric:
    """The card-corrected pass rate of the scores, with its interval, n and the raw rate.

    Args:
        card: Path of the judge card (a path, so the eval log records it as a parameter).
        min_pass_rate: A bar: adds ``passed`` (1.0 / 0.0).
        on: ``lower`` or ``estimate``, the number compared with the bar.
        config_id: Declares that the scores are verdicts of this judge config.
        allow_unverified: Accept verdicts naming no config (reported ``UNVERIFIED``).
    """
    from judges.integrations import gate, score

    def compute(scores: list[SampleScore]) -> dict[str, float | None]:
        rows = verdict_records(((s.sample_id, s.score, s.sample_metadata) for s in scores),
                               config_id=config_id)
        scored = score(card, rows, allow_unverified=allow_unverified)
        decision = None
        if min_pass_rate is not None:
            # A refused correction cannot clear a bar: passed is 0, not an error.
            decision = None if scored.corrected.refused else gate(
                card, scored, min_pass_rate=min_pass_rate, on=cast("GateOn", on))
            if decision is None:
                return {**_values(scored, None), "passed": 0.0}
        return _values(scored, decision)

    return cast(Metric, compute)


# Registered by call, not by decorator syntax: mypy --strict then accepts this module whether
# or not inspect_ai (an optional extra) is installed for the type check. Unreduced: the grades
# themselves, one per epoch (a reducer would have turned them into means: P into 0.5).
calibrated_pass_rate = metric("calibrated_pass_rate", scores="unreduced")(
    _calibrated_pass_rate)


def calibrated(wrapped: Scorer, card: str | Path, *, config_id: str | None = None,
               min_pass_rate: float | None = None, on: str = "lower",
               allow_unverified: bool = False, name: str = "calibrated") -> Scorer:
    """``wrapped`` with the card's corrected pass rate as its metric.

    Args:
        wrapped: The judge scorer (its grades are the card's judge's verdicts).
        card: Path of the judge card (``calibrate card export``).
        config_id: Declares that ``wrapped`` runs the card's judge config (see the module);
            it must be the card's ``judge.config_id``.
        min_pass_rate: Adds ``passed`` (1 / 0): the chosen bound against this bar.
        on: ``lower`` (default) or ``estimate``.
        allow_unverified: Accept verdicts naming no config (reported ``UNVERIFIED``).
        name: The scorer's name in the log.

    Returns:
        A scorer that returns ``wrapped``'s scores unchanged.

    Raises:
        judges.card_model.CardError: an unreadable or edited card (checked here, before the
            eval runs).
        ValueError: no ``config_id`` (without ``allow_unverified``) or another config than the
            card's, ``min_pass_rate`` outside [0, 1], or ``on`` not lower/estimate.
    """
    from judges.outputs.card import load_card
    from judges.outputs.gate import JUDGE_CHANGED

    # Every check that can fail runs here, before any sample: an eval is not run for nothing.
    loaded = load_card(card)
    if config_id is None and not allow_unverified:
        raise ValueError(
            f"give config_id={loaded.judge.config_id!r} to declare that the wrapped scorer runs "
            f"the card's judge config, or allow_unverified=True to score its grades unchecked")
    if config_id is not None and config_id != loaded.judge.config_id:
        raise ValueError(f"config_id {config_id!r} is not the card's "
                         f"({loaded.judge.config_id}): {JUDGE_CHANGED}")
    if min_pass_rate is not None and not 0.0 <= min_pass_rate <= 1.0:
        raise ValueError(f"min_pass_rate must be in [0, 1], got {min_pass_rate}")
    if on not in ("lower", "estimate"):
        raise ValueError(f"on must be 'lower' or 'estimate', got {on!r}")
    measure = calibrated_pass_rate(str(card), min_pass_rate=min_pass_rate, on=on,
                                   config_id=config_id, allow_unverified=allow_unverified)

    def factory() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score | None:
            result: Score | None = await wrapped(state, target)
            return result

        return score

    made: Scorer = scorer(metrics=[measure], name=name)(factory)()
    return made


def gate_log(log: EvalLog, card: str | Path, *, min_pass_rate: float, on: str = "lower",
             scorer_name: str = "calibrated", config_id: str | None = None,
             allow_unverified: bool = False) -> CardGate:
    """Gate a finished eval on the corrected pass rate of one scorer's grades.

    Reads every sample of ``log`` (unscored samples included, as no verdict) and decides with
    :func:`judges.integrations.gate`: for a CI step's exit code.

    Raises:
        ValueError: the log has no samples, or none scored by ``scorer_name``.
        judges.card_model.CardError / judges.outputs.gate.VerdictsFileError: as
            :func:`judges.integrations.gate`.
    """
    from judges.integrations import gate

    samples = sorted(log.samples or [], key=lambda s: (str(s.id), s.epoch))
    triples = [(s.id, s.scores[scorer_name], s.metadata) for s in samples
               if s.scores and scorer_name in s.scores]
    if not triples:
        raise ValueError(f"the log has no sample scored by {scorer_name!r} (scorers: "
                         f"{sorted({k for s in samples for k in (s.scores or {})})})")
    rows = verdict_records(triples, config_id=config_id)
    return gate(card, rows, min_pass_rate=min_pass_rate, on=cast("GateOn", on),
                allow_unverified=allow_unverified)


__all__ = ["calibrated", "calibrated_pass_rate", "gate_log", "verdict_records"]
