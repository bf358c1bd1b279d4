"""The judge card's records: what a card file holds, read and checked by pydantic.

:mod:`judges.outputs.card` builds, writes and loads cards from these; :mod:`judges.outputs.gate`,
:mod:`judges.outputs.pairwise_card` and :mod:`judges.selective` read them. They live apart from the
builder so that the builder may call those modules (a pairwise card, an acceptance rule)
without the modules importing the builder back.
"""

from __future__ import annotations

import hashlib
import platform
from datetime import UTC, datetime
from importlib import metadata
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judges.calibration import HumanMargins, format_interval
from judges.config import JudgeConfig, parse_config
from judges.reporting import JudgeRef, JudgeReport, PairwiseReport
from judges.stores.judge_store import external_config_id
from judges.verdicts import dataset_keys
from judges.workspace import Workspace
from labels.distribution import installed_version
from labels.errors import CalibrateError, ImportFileError

CARD_SCHEMA_VERSION: Literal[2] = 2
CARD_KIND: Literal["calibrate.judge_card"] = "calibrate.judge_card"
CARD_SUFFIXES = (".json", ".yaml", ".yml")
_PACKAGES = ("numpy", "scipy", "statsmodels", "pandas", "duckdb", "pydantic")


Count = Annotated[int, Field(ge=0)]
"""A number of rows, labels or votes: never negative."""


class CardError(ImportFileError):
    """A card file is missing, unreadable, malformed, or its config hash does not match."""


class CardRefusedError(CalibrateError):
    """A card would mislead (stand-in provider, unfinished run, too few labels); see ``reasons``.

    ``force=True`` (``--force``, the Export page's checkbox) writes it anyway, with the reasons
    inside the card (``forced``).
    """

    def __init__(self, reasons: list[str]) -> None:
        """Say why, and how to export it anyway."""
        self.reasons = list(reasons)
        super().__init__(
            "no judge card: " + "; ".join(reasons) + ". Export it anyway with --force (the "
            "Export page: 'Export anyway'); the card then says so inside (forced)."
        )


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CardInterval(_Model):
    """A number with its interval; all ``None`` (and a ``reason``) when it was refused."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int = 0
    reason: str | None = None

    def format(self, *, digits: int = 3) -> str:
        """``0.812 [0.771, 0.848]``; ``—`` when refused."""
        return format_interval(self.model_dump(), digits=digits)


class Confusion(HumanMargins, _Model):
    """Judge-vs-human counts on the calibration rows (pass is the positive class)."""

    tp: Count
    fn: Count
    fp: Count
    tn: Count


class Policy(_Model):
    """How the judge's calls were made and combined per item."""

    repeats: int = Field(ge=1)
    swap: bool
    aggregation: Literal["all_agree", "majority"]


class CardJudge(_Model):
    """The judge: identity, model, parameters and the full config (``None`` if external)."""

    name: str
    revision: int
    origin: Literal["config", "external"]
    kind: Literal["pointwise", "pairwise"]
    criterion: str
    config_id: str
    provider: str
    model: str
    params: dict[str, Any]
    policy: Policy
    config: dict[str, Any] | None
    stand_in: bool = False
    """The verdicts came from a stand-in provider (``scripted``), not a model."""


class CardCalibration(_Model):
    """What the judge was measured on."""

    dataset: str
    criterion: str
    content_hash: str
    rows: Count
    labelled_rows: Count
    design: str
    design_reason: str
    annotators: list[str]
    n_annotators: Count
    labels_from: datetime | None
    labels_to: datetime | None


class PairwiseCardMetrics(_Model):
    """A pairwise (a / b / tie) judge's measured agreement, for people.

    ``table`` is the raw 3 x 3 calibration table (rows: the human consensus per labelled row,
    columns: the judge; order a, b, tie). ``score``/``gate`` do not correct with it: they answer
    from the card's ``evidence`` through :func:`judges.calibration.answer_win_rate`, which
    reads how the labels were drawn.
    """

    table: list[list[int]]
    n_votes: Count
    agreement_with_ties: CardInterval
    agreement_without_ties: CardInterval
    kappa: CardInterval
    human_agreement_with_ties: CardInterval | None
    flip_rate: CardInterval

    @field_validator("table")
    @classmethod
    def _three_by_three(cls, value: list[list[int]]) -> list[list[int]]:
        if len(value) != 3 or any(len(r) != 3 or min(r) < 0 for r in value):
            raise ValueError("must be 3 x 3 non-negative counts (a, b, tie)")
        return value


class CardMetrics(_Model):
    """The measured error rates: the numbers the gate corrects with."""

    confidence: float = Field(gt=0, lt=1)
    n: Count
    m0: Count
    m1: Count
    confusion: Confusion
    sensitivity: CardInterval
    specificity: CardInterval
    fpr: CardInterval
    kappa: CardInterval
    swap_flip_rate: CardInterval
    repeat_flip_rate: CardInterval
    human_kappa: CardInterval | None
    strata: dict[str, dict[str, int]] | None = None
    """Calibration counts per judge-verdict stratum (for people; the gate answers from
    ``evidence``): ``population``, ``labelled``, ``human_pass``, ``human_unsure``."""
    unscored: Count
    unsure: Count
    pairwise: PairwiseCardMetrics | None = None
    """A pairwise judge's metrics (its pass/fail fields are then empty and say so)."""
    counts: dict[str, dict[str, int]] | None = None
    """The report's counts in the one vocabulary (:mod:`judges.calibration.vocabulary`):
    ``labelled`` (the judge's verdicts on every labelled row: ``rows``, ``judged``,
    ``not_judged``, ``unscored``, ``unsure``), ``human`` (``rows``, ``decided``, ``unsure``)
    and ``used`` (``rows``: both the human and the judge gave pass/fail; that is ``n``).
    ``calibration.labelled_rows`` is ``labelled.rows``. ``unscored`` and ``unsure`` above are
    the labelled rows' judge counts."""


class CardStress(_Model):
    """One perturbation test of the judge (``calibrate judge stress``), newest run.

    ``flip_rate`` is the share of rows whose verdict changed under the perturbation (Wilson
    interval, ``n`` rows with a pass/fail verdict both times); ``expectation`` says what it
    should be: 1 for ``must become fail``, 0 for ``must not change``.
    """

    test: str
    expectation: str
    dataset: str
    eligible: Count
    flip_rate: CardInterval
    family_warning: str | None = None


class CardSelection(_Model):
    """The judge's certified acceptance rule (``calibrate card export --alpha``), and its evidence.

    A row's verdict is accepted when its confidence score (from ``signals``) is at least its
    stratum's threshold; ``score`` and ``gate`` apply the rule to new verdicts and report the
    accepted share and the error bound (``alpha``, with probability ``1 - delta``).
    """

    rule_id: str
    alpha: float = Field(gt=0, lt=1)
    delta: float = Field(gt=0, lt=1)
    p_value: str
    signals: list[str]
    thresholds: dict[str, float | None]
    """Stratum name -> threshold (``all rows`` for a pooled rule; ``None``: accept nothing)."""
    strata: list[str] = Field(default_factory=list)
    """The strata's names in the order ``strata_table`` indexes them (empty: pooled)."""
    strata_table: list[list[list[int]]] | None = None
    """The stratum of a row by (judge outcome, flipped, escalated), an index into ``strata``
    (``None`` for a pooled rule); new rows are never escalated."""
    level: float
    guarantee: str
    design: str
    rows: Count
    accepted: Count
    accepted_share: float
    labelled: Count
    accepted_labelled: Count
    errors: Count
    error_estimate: float | None
    tests: list[dict[str, Any]] = Field(default_factory=list)
    refused: bool = False
    reason: str | None = None


class CardAnchor(_Model):
    """What ``calibrate drift`` needs of the calibration rows: no text, no ids, only hashes.

    ``rows`` holds, per labelled calibration row, the hash of its id (``id_hash`` names the
    function: :func:`anchor_hash`), the judge's aggregated verdict at calibration and the human
    consensus. Re-scored by the same judge later, these anchor rows tell judge drift (they
    are scored differently) from system drift (the answers changed).
    """

    id_hash: Literal["blake2b-64"] = "blake2b-64"
    rows: list[tuple[str, str, str]]
    tolerance: float = Field(ge=0, le=1)
    """The share of anchor rows that may be re-scored differently without drift: the upper 95 %
    bound of the share whose calls disagreed at calibration (a row whose calls always agreed is
    expected to re-score the same), at least 0.02."""
    reference: dict[str, int]
    """The judge's verdicts on every calibration row: ``pass`` and ``judged`` (pass or fail)."""


def anchor_hash(item_id: str) -> str:
    """The hash of an anchor row's id in a card (16 hex digits of BLAKE2b-64)."""
    return hashlib.blake2b(str(item_id).encode(), digest_size=8).hexdigest()


class CardEstimation(_Model):
    """How the card's pass rates are estimated: what the report was asked for."""

    design: str | None = None
    """The design the report was asked for (``None``: chosen from the evidence); applied when
    the scored verdicts are the calibration run's own."""
    confidence: float = Field(gt=0, lt=1)
    seed: int = 0
    n_boot: int = Field(ge=1)


class JudgeCard(_Model):
    """A judge card (see the module docstring). Build with :func:`card_from_report`."""

    schema_version: Literal[2] = CARD_SCHEMA_VERSION
    kind: Literal["calibrate.judge_card"] = CARD_KIND
    created_at: datetime
    judge: CardJudge
    calibration: CardCalibration
    metrics: CardMetrics
    software: dict[str, str]
    warnings: list[str] = Field(default_factory=list)
    stress: list[CardStress] = Field(default_factory=list)
    forced: list[str] = Field(default_factory=list)
    """Why this card would have been refused, when it was exported anyway (``--force``):
    empty for a card that met every rule (:func:`card_problems`)."""
    estimation: CardEstimation | None = None
    """The estimation options."""
    evidence: dict[str, Any] | None = None
    """The calibration evidence: what ``score`` answers from
    (:class:`~judges.calibration.CalibrationEvidence` of a pass/fail judge,
    :class:`~judges.calibration.PairwiseEvidence` of a pairwise one)."""
    selection: CardSelection | None = None
    """The acceptance rule (``card export --alpha``): what ``score``/``gate`` apply."""
    anchor: CardAnchor | None = None
    """The anchor rows ``calibrate drift`` re-scores (pass/fail cards)."""

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("must carry a time zone (UTC)")
        return value.astimezone(UTC)

    def to_json(self) -> dict[str, Any]:
        """The card as JSON-safe data (dates as ISO 8601 UTC strings)."""
        return self.model_dump(mode="json")

    def verify(self, *, source: str = "<card>") -> None:
        """Check that the config and the recorded config id agree.

        Raises:
            CardError: the config was edited after the card was made (its hash differs), or an
                external judge's id does not belong to its name.
        """
        j = self.judge
        if j.config is not None:
            try:
                actual = parse_config(j.config, source=source).config_id
            except ImportFileError as error:
                raise CardError(f"judge.config is not a valid judge config: {error}",
                                path=source) from None
            if actual != j.config_id:
                raise CardError(
                    f"judge.config hashes to {actual} but the card says {j.config_id}: the "
                    "config was edited after calibration; export a new card",
                    path=source,
                )
        elif j.origin == "external":
            if external_config_id(j.name, j.kind, j.params.get("source")) != j.config_id:
                raise CardError(
                    f"judge.config_id {j.config_id} does not belong to external judge "
                    f"{j.name!r}", path=source,
                )
        else:
            raise CardError("judge.config is missing for a configured judge", path=source)


def package_versions() -> dict[str, str]:
    """Python and the versions of the packages that computed a card."""
    # Keyed "calibrate" (the tool) whatever the distribution is named: the card's schema.
    out = {"python": platform.python_version(), "calibrate": installed_version() or "not installed"}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _interval(value: dict[str, Any]) -> CardInterval:
    return CardInterval(**value)


def _policy(workspace: Workspace, report: JudgeReport | PairwiseReport) -> Policy:
    """Repeats and swap actually used on the calibration dataset (the runs' options)."""
    judge_store = workspace.judges
    runs = judge_store.runs(dataset=report.dataset, config_id=report.judge.config_id)
    repeats, swap = judge_store.call_layout(report.judge.config_id,
                                            dataset_keys(workspace, report.dataset,
                                                         report.judge.config_id))
    repeats = max(repeats, 1)
    for run in runs:
        repeats = max(repeats, int(run.options.get("repeats", 1) or 1))
        swap = swap or bool(run.options.get("swap", False))
    return Policy(repeats=repeats, swap=swap, aggregation=report.rule)  # type: ignore[arg-type]


def _stress(workspace: Workspace, config_id: str) -> list[CardStress]:
    """The judge's newest stress run (any dataset), as card entries."""
    return [
        CardStress(test=r.test, expectation=r.expectation, dataset=r.dataset,
                   eligible=int(r.detail.get("eligible", r.n)),
                   flip_rate=CardInterval(estimate=r.detail.get("flip_rate"),
                                          low=r.detail.get("low"), high=r.detail.get("high"),
                                          n=r.n),
                   family_warning=r.detail.get("family_warning"))
        for r in workspace.alignment.latest_stress(config_id)
    ]


def card_identity(
    workspace: Workspace, ref: JudgeRef, problems: list[str], *, force: bool
) -> tuple[str, str, dict[str, Any], dict[str, Any] | None]:
    """:func:`judge_identity` for a card that ``problems`` stand against.

    Raises:
        CardRefusedError: There are problems and ``force`` is false.
    """
    if problems and not force:
        raise CardRefusedError(problems)
    return judge_identity(workspace, ref)


def judge_identity(
    workspace: Workspace, ref: JudgeRef
) -> tuple[str, str, dict[str, Any], dict[str, Any] | None]:
    """``(provider, model, generation params, full config)`` of a judge for its card."""
    stored = ref.stored or workspace.judges.stored_config(ref.config_id)
    config: JudgeConfig | None = stored.config
    if config is None:
        # An external judge's parameters are where its verdicts came from (tool, metric, the
        # score rule), so the card shows the threshold that made them.
        return "external", ref.model, {"source": stored.source} if stored.source else {}, None
    return (config.provider_name, config.model, config.generation.model_dump(mode="json"),
            config.model_dump(mode="json"))
