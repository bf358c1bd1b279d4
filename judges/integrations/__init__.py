"""Calibrated judges outside calibrate: a small, stable API over a judge card.

A judge card (``calibrate card export``) is the vendor-neutral artefact: one JSON or YAML file
with the judge's config, its calibration evidence and the estimation options. Everything a CI
tool needs from it is two calls::

    from judges.integrations import gate, score

    result = score("card.json", "verdicts.csv")          # a judges.outputs.gate.Score
    print(result.corrected.format(), result.n)           # 0.673 [0.640, 0.685] 91
    decision = gate("card.json", "verdicts.csv", min_pass_rate=0.6)
    assert decision.passed, decision.reason

Both go through :func:`judges.outputs.gate.score_verdicts`, hence the one estimation path
(:func:`judges.calibration.answer_pass_rate`) that ``calibrate report``, ``score``, ``gate``
and the Calibration page use: one question, one answer. The integrations built on it are the
pytest plugin (:mod:`judges.integrations.pytest_plugin`), the inspect_ai scorer wrapper
(:mod:`judges.integrations.inspect_scorer`) and the OpenTelemetry export
(:mod:`judges.integrations.otlp`).

Stability: the names in ``__all__`` and their keyword arguments are kept within a major
version; new keyword arguments only get defaults.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judges.card_model import JudgeCard
    from judges.outputs.gate import GateOn, GateResult, Score, VerdictsFile

RECORDS = "<verdict records>"


def _card(card: JudgeCard | str | Path) -> JudgeCard:
    from judges.outputs.card import load_card

    if isinstance(card, str | Path):
        return load_card(card)
    return card


def _where(card: JudgeCard | str | Path) -> str | None:
    """The card file, for messages (``None`` for a card loaded in memory)."""
    return str(card) if isinstance(card, str | Path) else None


def verdicts_from_records(records: Iterable[Mapping[str, Any]], *,
                          source: str = RECORDS) -> VerdictsFile:
    """Verdicts given as records (``{"id", "verdict"}`` plus optional columns), not a file.

    The keys are the columns of a verdicts file (:func:`judges.outputs.gate.read_verdicts_file`):
    ``id``, ``verdict``, and optionally ``repeat``, ``order``, ``config_id``, ``segment``,
    ``document_id``, ``reasoning``. Errors name ``source`` and the record's 1-based row.

    Raises:
        judges.outputs.gate.VerdictsFileError: a missing key, an unknown verdict, a duplicated row.
    """
    from judges.outputs.gate import verdicts_from_table
    from labels.reading import Table

    rows = [dict(r) for r in records]
    return verdicts_from_table(Table.from_records(source, rows))


def _verdicts(card: JudgeCard,
              verdicts: str | Path | VerdictsFile | Iterable[Mapping[str, Any]]) -> VerdictsFile:
    from judges.outputs.gate import VerdictsFile, read_verdicts_file

    if isinstance(verdicts, VerdictsFile):
        return verdicts
    kind = "pairwise" if card.judge.kind == "pairwise" else "pointwise"
    if isinstance(verdicts, str | Path):
        return read_verdicts_file(verdicts, kind=kind)
    return verdicts_from_records(verdicts)


def score(
    card: JudgeCard | str | Path,
    verdicts: str | Path | VerdictsFile | Iterable[Mapping[str, Any]],
    *,
    allow_unverified: bool = False,
) -> Score:
    """The corrected pass rate of new verdicts of the card's judge, with its interval.

    Args:
        card: A loaded card, or the path of a card file (JSON or YAML; loading checks that
            its config hashes to its ``config_id``).
        verdicts: A verdicts file (CSV, JSONL, JSON, Parquet: what ``calibrate verdicts
            export`` writes), a :class:`judges.outputs.gate.VerdictsFile`, or records
            (:func:`verdicts_from_records`).
        allow_unverified: Accept verdicts without a ``config_id``; the score's warnings then
            say ``UNVERIFIED``.

    Returns:
        A :class:`judges.outputs.gate.Score`: ``corrected`` (the headline interval, ``method``,
        ``reason``), ``observed`` (the judge's raw pass rate), ``n`` (items with a pass/fail
        verdict), ``warnings``; ``to_json()`` is the stable ``calibrate score --json``.

    Raises:
        judges.card_model.CardError: an unreadable, edited or pairwise card.
        judges.outputs.gate.VerdictsFileError: unreadable verdicts, verdicts of another judge
            config,
            none with pass/fail (the message names file, row and column).
    """
    from judges.card_model import CardError
    from judges.outputs.gate import score_verdicts

    loaded = _card(card)
    if loaded.judge.kind == "pairwise":
        raise CardError("a pairwise card scores win rates, not a pass rate: use calibrate "
                        "score / calibrate gate --side", path=_where(card))
    return score_verdicts(loaded, _verdicts(loaded, verdicts), allow_unverified=allow_unverified)


@dataclass(frozen=True)
class CardGate:
    """A gate decision with the score it was made on.

    Attributes:
        score: The :class:`judges.outputs.gate.Score` of the verdicts.
        decision: The :class:`judges.outputs.gate.GateResult` (``passed``, ``on``,
            ``min_pass_rate``,
            ``value``, ``reason``).
    """

    score: Score
    decision: GateResult

    @property
    def passed(self) -> bool:
        """Whether the bar was met."""
        return self.decision.passed

    @property
    def reason(self) -> str:
        """One sentence: the compared number, the bar, the interval and n."""
        return self.decision.reason

    def summary(self) -> list[str]:
        """Plain-text lines for a terminal: both rates with their intervals and n, the verdict.

        Text only: the card's judge name and any reason are printed as they are, never
        interpreted as markup by the callers (terminals, logs).
        """
        return summary_lines(self.score, self.decision)

    def to_json(self) -> dict[str, Any]:
        """``calibrate gate --json`` without a baseline: the score's JSON plus ``gate``."""
        data = self.score.to_json()
        data["gate"] = {**self.decision.to_json(), "min_pass_rate_from": "option",
                        "max_drop": None, "difference_low": None}
        return data


def summary_lines(score: Score, decision: GateResult | None = None) -> list[str]:
    """The lines every integration prints: corrected and observed rates, intervals, n."""
    c, o = score.corrected, score.observed
    card = score.card
    lines = [
        f"judge card {card.judge.name} ({card.judge.config_id}), calibrated on "
        f"{card.calibration.dataset} (human pass {card.metrics.m1}, fail {card.metrics.m0})",
        f"corrected pass rate {c.format()} ({c.confidence:.0%}, method {c.method}; n = "
        f"{score.n} verdicts, {score.unscored} unscored, {score.unsure} unsure)",
        f"observed pass rate  {o.format()} (the judge's own, uncorrected)",
    ]
    if c.reason:
        lines.append(f"corrected pass rate: {c.reason}")
    lines += [f"warning: {w}" for w in score.warnings]
    if decision is not None:
        lines.append(("PASS: " if decision.passed else "FAIL: ") + decision.reason)
    return lines


def gate(
    card: JudgeCard | str | Path,
    verdicts: str | Path | VerdictsFile | Iterable[Mapping[str, Any]] | Score,
    *,
    min_pass_rate: float,
    on: GateOn = "lower",
    allow_unverified: bool = False,
) -> CardGate:
    """Does the corrected pass rate of ``verdicts`` clear ``min_pass_rate``?

    The same decision as ``calibrate gate --min-pass-rate``: the chosen number (``lower``, the
    interval's lower bound, or the point ``estimate``) against the bar; a judge not shown to
    beat chance never passes.

    Args:
        card: A card or the path of a card file.
        verdicts: As :func:`score`, or a :class:`judges.outputs.gate.Score` already made.
        min_pass_rate: The bar, in [0, 1].
        on: ``lower`` (safe, the default) or ``estimate``.
        allow_unverified: As :func:`score`.

    Returns:
        A :class:`CardGate`.

    Raises:
        ValueError: ``min_pass_rate`` outside [0, 1] or an unknown ``on``.
        judges.card_model.CardError: as :func:`score`, and a card that cannot correct a pass
            rate for these verdicts (exit 2 of ``calibrate gate``), with the reason.
        judges.outputs.gate.VerdictsFileError: as :func:`score`.
    """
    from judges.card_model import CardError
    from judges.outputs.gate import Score
    from judges.outputs.gate import gate as decide

    if not 0.0 <= min_pass_rate <= 1.0:  # checked before any file is read
        raise ValueError(f"min_pass_rate must be in [0, 1], got {min_pass_rate}")
    scored = verdicts if isinstance(verdicts, Score) else score(
        card, verdicts, allow_unverified=allow_unverified)
    if scored.corrected.refused:
        raise CardError(f"this card cannot correct a pass rate: {scored.corrected.reason}",
                        path=_where(card))
    return CardGate(scored, decide(scored, min_pass_rate=min_pass_rate, on=on))


__all__ = ["CardGate", "gate", "score", "summary_lines", "verdicts_from_records"]
