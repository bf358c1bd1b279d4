"""The calibration report of one judge on one dataset: labels and verdicts in, numbers out.

This is the glue between the database and the pure statistics of :mod:`judges.calibration`:

1. **Human labels** (:func:`load_human_labels`): the current label of every annotator for the
   criterion, reduced to one verdict per item by majority over pass/fail (a tie, or only
   ``unsure`` labels, gives ``unsure``, which every rate excludes and counts). When two or more
   annotators labelled the same items, their agreement (Cohen's / Light's kappa, Krippendorff's
   alpha) is the ceiling a judge is compared against.
2. **Judge verdicts** (:func:`load_judge_items`): every (item, repeat, order) call of the judge
   (:func:`judges.verdicts.judge_verdicts`), reduced to one verdict per item by
   :func:`judges.calibration.self_consistency`. The default rule is MT-Bench's ``all_agree``: a
   verdict counts only if every scored call agrees, so a row that flips across orders or repeats
   becomes ``unsure``; ``majority`` is the alternative. Flip rates come from the same call.
3. **Design** (:func:`choose_design`): how the labelled rows were drawn decides which corrected
   pass rate is valid. Another target dataset means a separate calibration set (Lee et al.
   2025); the same dataset labelled in the Label page's stratified order means a
   verdict-stratified sample; otherwise a random sample of the same run is assumed (and said).
4. :func:`calibration_report` joins them by item id, calls
   :func:`judges.calibration.build_report`, and adds disagreements, a labelling plan and a
   stable JSON form (:meth:`JudgeReport.to_json`, documented in ``docs/report-json.md``).

Nothing here renders anything; the CLI (``calibrate report``) and the app's Calibration page
are thin layers over :func:`calibration_report`, so both show the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import numpy as np
import pandas as pd

from judges.calibration import (
    DESIGNS,
    AllocationGap,
    CalibrationInputError,
    CalibrationReport,
    ConsistencyResult,
    Estimate,
    LabelsNeeded,
    LeaderboardRow,
    MultiRaterAgreement,
    PassRateEstimate,
    allocation_gap,
    build_report,
    labels_needed,
    leaderboard,
    multi_rater_agreement,
    self_consistency,
)
from judges.store import JudgeStore, StoredConfig
from judges.verdicts import judge_verdicts, resolve_judge
from labels.errors import CalibrateError, NotFoundError
from labels.models import DEFAULT_CRITERION
from labels.store import LabelStore

SCHEMA_VERSION = 1
"""Version of the JSON shape of :meth:`JudgeReport.to_json` (see ``docs/report-json.md``)."""

AggregationRule = Literal["all_agree", "majority"]
AGGREGATION_RULES: dict[str, str] = {
    "all_agree": (
        "MT-Bench rule: a verdict counts only if every scored call (all repeats, both orders) "
        "agrees; a row that flips is 'unsure' and is excluded"
    ),
    "majority": "the most frequent scored verdict; equal top counts give 'unsure'",
}
_RULE_ALIASES = {"unanimous": "all_agree", "mt-bench": "all_agree", "mtbench": "all_agree"}

DEFAULT_HALF_WIDTH = 0.05
DEFAULT_SEED = 0
DEFAULT_N_BOOT = 2000
NO_SEGMENT = "(none)"


def normalize_rule(rule: str) -> AggregationRule:
    """Map a rule name (or alias such as ``unanimous``) to ``all_agree`` or ``majority``.

    Raises:
        CalibrateError: for an unknown rule.
    """
    name = _RULE_ALIASES.get(rule, rule)
    if name not in AGGREGATION_RULES:
        raise CalibrateError(
            f"unknown aggregation rule {rule!r} (rules: {', '.join(AGGREGATION_RULES)})"
        )
    return name  # type: ignore[return-value]


# -- small JSON helpers (shared with the card and the gate) ----------------------------------


def interval(value: Estimate | PassRateEstimate | None) -> dict[str, Any]:
    """``{estimate, low, high, n, reason}`` of an estimate, JSON-safe.

    ``reason`` is ``None`` for a usable number; for a refused statistic the numbers are ``None``
    and ``reason`` says why; an uninformative corrected pass rate keeps its numbers (interval
    widened to [0, 1]) and ``reason`` says why it must not be read as a claim.
    """
    if value is None:
        return {"estimate": None, "low": None, "high": None, "n": 0, "reason": "not computed"}
    if isinstance(value, PassRateEstimate):
        n = value.n_target if value.method == "naive" else value.n_labelled
        reason = value.reason
        if reason is None and value.uninformative:
            reason = (
                "uninformative: the judge is not shown to be better than chance, so the true "
                "pass rate is not identified (interval widened to [0, 1])"
            )
    else:
        n, reason = value.n, value.reason
    return {
        "estimate": _num(value.estimate),
        "low": _num(value.low),
        "high": _num(value.high),
        "n": int(n),
        "reason": reason,
    }


def _num(x: float | None) -> float | None:
    if x is None or not math.isfinite(float(x)):
        return None
    return float(x)


def format_interval(value: Mapping[str, Any], *, digits: int = 3) -> str:
    """``0.812 [0.771, 0.848]`` from an :func:`interval` dict; ``—`` when refused."""
    est = value.get("estimate")
    if est is None:
        return "—"
    low, high = value.get("low"), value.get("high")
    if low is None or high is None:
        return f"{est:.{digits}f}"
    return f"{est:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def format_number(value: Mapping[str, Any], *, digits: int = 3) -> str:
    """The point estimate of an :func:`interval` dict as text (``—`` when refused)."""
    est = value.get("estimate")
    return "—" if est is None else f"{est:.{digits}f}"


# -- the judge ------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeRef:
    """Which judge config a report is about.

    Attributes:
        config_id: Content hash of the config (``b2:…``), or ``ext:…`` for imported verdicts.
        name: Human-readable name.
        revision: Config revision.
        model: ``provider/model`` (``external`` for imported verdicts).
        origin: ``config`` or ``external``.
        kind: ``pointwise`` or ``pairwise``.
        criterion: The human-label criterion the judge is calibrated against.
        stored: The stored config row (with the full config when it has one).
    """

    config_id: str
    name: str
    revision: int
    model: str
    origin: str
    kind: str
    criterion: str
    stored: StoredConfig | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """JSON-safe identity of the judge."""
        return {
            "name": self.name,
            "config_id": self.config_id,
            "revision": self.revision,
            "model": self.model,
            "origin": self.origin,
        }


def find_judge(store: LabelStore, judge: str, *, dataset: str | None = None) -> JudgeRef:
    """Resolve a judge name (latest revision run on ``dataset``) or config id.

    Raises:
        NotFoundError: no such judge (the message lists the known names).
    """
    judge_store = JudgeStore(store.db)
    config_id = resolve_judge(judge_store, judge, dataset=dataset)
    stored = judge_store.stored_config(config_id)
    return JudgeRef(
        config_id=stored.config_id,
        name=stored.name,
        revision=int(stored.revision),
        model=stored.model,
        origin=stored.origin,
        kind=stored.kind,
        criterion=stored.criterion,
        stored=stored,
    )


def judges_on(store: LabelStore, dataset: str) -> list[JudgeRef]:
    """Judge configs with at least one run (or import) on ``dataset``, most recent first."""
    judge_store = JudgeStore(store.db)
    seen: dict[str, JudgeRef] = {}
    for run in judge_store.runs(dataset=dataset):
        if run.config_id not in seen:
            stored = judge_store.stored_config(run.config_id)
            seen[run.config_id] = JudgeRef(
                config_id=stored.config_id, name=stored.name, revision=int(stored.revision),
                model=stored.model, origin=stored.origin, kind=stored.kind,
                criterion=stored.criterion, stored=stored,
            )
    return list(seen.values())


# -- human labels ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HumanLabels:
    """Human labels of one dataset and criterion, one consensus verdict per item.

    Attributes:
        dataset: Dataset name.
        criterion: Criterion name.
        items: One row per labelled item: ``item_id``, ``verdict`` (consensus: majority of
            pass/fail; a tie or only ``unsure`` gives ``unsure``), ``n_annotators``,
            ``n_pass``, ``n_fail``, ``n_unsure``, ``annotators`` (comma-separated),
            ``note`` (every annotator's non-empty note as ``name: note`` lines).
        labels: The current labels as returned by :meth:`LabelStore.current_labels`.
        annotators: Names of everyone with a current label.
        agreement: Human-human agreement on items labelled by two or more annotators, or
            ``None`` when no two annotators overlap.
        n_overlap: Items labelled by two or more annotators.
        first_labelled_at: Oldest current label (UTC), or ``None``.
        last_labelled_at: Newest current label (UTC), or ``None``.
    """

    dataset: str
    criterion: str
    items: pd.DataFrame
    labels: pd.DataFrame
    annotators: tuple[str, ...]
    agreement: MultiRaterAgreement | None
    n_overlap: int
    first_labelled_at: datetime | None
    last_labelled_at: datetime | None


def _consensus(labels: pd.DataFrame) -> pd.DataFrame:
    """One row per item: majority of pass/fail, counts, annotators and notes (vectorised)."""
    verdict = labels["verdict"].astype(str)
    frame = labels.assign(
        item_id=labels["item_id"].astype(str),
        annotator=labels["annotator"].astype(str),
        is_pass=verdict.eq("pass"),
        is_fail=verdict.eq("fail"),
    )
    grouped = frame.groupby("item_id", sort=True)
    out = grouped.agg(
        n_annotators=("verdict", "size"),
        n_pass=("is_pass", "sum"),
        n_fail=("is_fail", "sum"),
        annotators=("annotator", ", ".join),
    ).reset_index()
    out["n_unsure"] = out["n_annotators"] - out["n_pass"] - out["n_fail"]
    out["verdict"] = np.where(out["n_pass"] > out["n_fail"], "pass",
                              np.where(out["n_fail"] > out["n_pass"], "fail", "unsure"))
    note = frame["note"].astype(object)
    has_note = note.map(lambda n: isinstance(n, str) and bool(n.strip())).astype(bool)
    noted = frame[has_note]
    notes = (noted["annotator"] + ": " + noted["note"].astype(str)).groupby(
        noted["item_id"]).agg("\n".join)
    out["note"] = [notes.get(i, "") for i in out["item_id"]]
    return out


def load_human_labels(
    store: LabelStore,
    dataset: str,
    criterion: str,
    *,
    seed: int = DEFAULT_SEED,
    n_boot: int = 1000,
    confidence: float = 0.95,
) -> HumanLabels:
    """Current human labels of ``dataset`` for ``criterion``, one consensus verdict per item.

    Args:
        store: The label store.
        dataset: Dataset name.
        criterion: Criterion name.
        seed: Seed of the item bootstrap behind the human-human agreement intervals.
        n_boot: Bootstrap replicates for those intervals.
        confidence: Interval level.

    Returns:
        A :class:`HumanLabels`.
    """
    labels = store.current_labels(dataset, criterion=criterion)
    columns = ["item_id", "verdict", "n_annotators", "n_pass", "n_fail", "n_unsure",
               "annotators", "note"]
    if labels.empty:
        return HumanLabels(dataset, criterion, pd.DataFrame(columns=columns), labels, (), None,
                           0, None, None)
    items = _consensus(labels)[columns]
    annotators = tuple(sorted(labels["annotator"].astype(str).unique()))
    agreement, n_overlap = None, 0
    if len(annotators) >= 2:
        wide = labels.pivot(index="item_id", columns="annotator", values="verdict")
        wide = wide[wide.notna().sum(axis=1) >= 2]
        n_overlap = len(wide)
        if n_overlap:
            ratings = wide.astype(object).where(wide.notna(), None).to_numpy()
            agreement = multi_rater_agreement(
                ratings, raters=[str(c) for c in wide.columns], rng=np.random.default_rng(seed),
                n_boot=n_boot, confidence=confidence,
            )
    stamps = pd.to_datetime(labels["labelled_at"], utc=True)
    return HumanLabels(
        dataset=dataset,
        criterion=criterion,
        items=items,
        labels=labels,
        annotators=annotators,
        agreement=agreement,
        n_overlap=n_overlap,
        first_labelled_at=stamps.min().to_pydatetime(),
        last_labelled_at=stamps.max().to_pydatetime(),
    )


# -- judge verdicts -------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeItems:
    """A judge's verdicts on one dataset, one aggregated verdict per item.

    Attributes:
        judge: The judge.
        dataset: Dataset name.
        rule: Aggregation rule (``all_agree`` or ``majority``).
        calls: One row per (item, repeat, order), columns of
            :data:`judges.verdicts.VERDICT_COLUMNS`.
        items: One row per judged item: ``item_id``, ``verdict`` (aggregated; ``unscored`` when
            no call gave a verdict), ``n_calls``, ``n_scored``, ``order_flipped``,
            ``repeat_flipped``, ``flipped``, ``reasoning`` (of the first scored call),
            ``unscored_reason`` (of the first unscored call).
        consistency: Flip rates and per-item aggregation (``None`` when there are no calls).
    """

    judge: JudgeRef
    dataset: str
    rule: str
    calls: pd.DataFrame
    items: pd.DataFrame
    consistency: ConsistencyResult | None

    def verdict_map(self) -> dict[str, str]:
        """Item id → aggregated verdict."""
        return dict(zip(self.items["item_id"], self.items["verdict"], strict=True))


_ITEM_COLUMNS = ["item_id", "verdict", "n_calls", "n_scored", "order_flipped",
                 "repeat_flipped", "flipped", "reasoning", "unscored_reason"]


def aggregate_calls(
    calls: pd.DataFrame, *, rule: str = "all_agree", confidence: float = 0.95
) -> tuple[pd.DataFrame, ConsistencyResult | None]:
    """One verdict per item from per-call rows, with flip flags (self-consistency).

    Args:
        calls: Rows with ``item_id``, ``verdict`` and optionally ``repeat``, ``order``,
            ``reasoning``, ``unscored_reason``.
        rule: ``all_agree`` (MT-Bench, default) or ``majority`` (aliases: ``unanimous``).
        confidence: Level of the flip-rate intervals.

    Returns:
        ``(items, consistency)``: the per-item frame (columns as :attr:`JudgeItems.items`, in
        first-appearance order) and the :class:`~judges.calibration.ConsistencyResult`
        (``None`` for no calls).
    """
    name = normalize_rule(rule)
    if calls.empty:
        return pd.DataFrame(columns=_ITEM_COLUMNS), None
    ids = calls["item_id"].astype(str).to_numpy()
    verdicts = calls["verdict"].astype(object).where(calls["verdict"].notna(), None)
    consistency = self_consistency(
        ids,
        verdicts.to_numpy(dtype=object),
        order=calls["order"].astype(str).to_numpy() if "order" in calls else None,
        repeat=calls["repeat"].to_numpy() if "repeat" in calls else None,
        rule=name,
        confidence=confidence,
    )
    per_item = pd.DataFrame({
        "item_id": consistency.item_ids.astype(str),
        "verdict": consistency.verdicts.astype(str),
        "n_calls": consistency.n_calls,
        "n_scored": consistency.n_scored,
        "order_flipped": consistency.order_flipped,
        "repeat_flipped": consistency.repeat_flipped,
        "flipped": consistency.any_flipped,
    })
    frame = calls.assign(item_id=ids)
    scored = frame[frame["verdict"].isin(["pass", "fail", "unsure"])]
    reasoning = (
        scored.groupby("item_id", sort=False)["reasoning"].first()
        if "reasoning" in frame else pd.Series(dtype=object)
    )
    unscored = frame[~frame["verdict"].isin(["pass", "fail", "unsure"])]
    reasons = (
        unscored.groupby("item_id", sort=False)["unscored_reason"].first()
        if "unscored_reason" in frame else pd.Series(dtype=object)
    )
    per_item["reasoning"] = per_item["item_id"].map(reasoning).astype(object)
    per_item["unscored_reason"] = per_item["item_id"].map(reasons).astype(object)
    order = pd.Index(pd.unique(ids))
    per_item = per_item.set_index("item_id").loc[order].reset_index()
    return per_item[_ITEM_COLUMNS], consistency


def load_judge_items(
    store: LabelStore,
    dataset: str,
    judge: str | JudgeRef,
    *,
    rule: str = "all_agree",
    confidence: float = 0.95,
) -> JudgeItems:
    """A judge's verdicts on ``dataset``, aggregated per item.

    Args:
        store: The label store (the judge tables live in the same file).
        dataset: Dataset name.
        judge: Judge name, config id or :class:`JudgeRef`.
        rule: Aggregation rule (see :func:`aggregate_calls`).
        confidence: Level of the flip-rate intervals.

    Returns:
        A :class:`JudgeItems`.
    """
    ref = judge if isinstance(judge, JudgeRef) else find_judge(store, judge, dataset=dataset)
    calls = judge_verdicts(store, dataset, ref.config_id)
    items, consistency = aggregate_calls(calls, rule=rule, confidence=confidence)
    return JudgeItems(ref, dataset, normalize_rule(rule), calls, items, consistency)


# -- design ---------------------------------------------------------------------------------


def choose_design(
    store: LabelStore,
    dataset: str,
    criterion: str,
    *,
    target: str | None = None,
    n_items: int | None = None,
    n_labelled: int | None = None,
    imported_labels: bool = False,
) -> tuple[str, str, tuple[str, ...]]:
    """Decide how the labelled rows were drawn, which decides the corrected estimator.

    * ``target`` names another dataset → ``separate_calibration`` (Lee et al. 2025: only the
      judge's sensitivity and specificity are assumed to transfer; the pass rate may differ).
    * The Label page's queue for (dataset, criterion) is ``stratified`` → ``same_run_stratified``
      (rows drawn within judge-pass / judge-fail strata).
    * Otherwise → ``same_run_random``; when not every row is labelled and the rows were not
      drawn by the Label page's random queue (another queue order, or ``imported_labels``), a
      warning says the random-sample assumption is unchecked.

    Args:
        store: The label store.
        dataset: Dataset with the labels.
        criterion: Label criterion (the queue settings are per dataset and criterion).
        target: Dataset whose pass rate is estimated.
        n_items: Rows in ``dataset``.
        n_labelled: Labelled rows of ``dataset``.
        imported_labels: Some labels came from a file rather than the Label page.

    Returns:
        ``(design, reason, warnings)``.
    """
    if target is not None and target != dataset:
        return (
            "separate_calibration",
            f"labels from {dataset!r}, pass rate of {target!r}: only the judge's sensitivity "
            "and specificity are assumed to transfer (Lee et al. 2025)",
            (),
        )
    order = store.queue_settings(dataset, criterion).order
    if order == "stratified":
        return (
            "same_run_stratified",
            "the Label page's queue is stratified by judge verdict, so labelled rows were drawn "
            "within judge-pass and judge-fail strata",
            (
                "labelled rows were drawn by judge verdict: sensitivity, specificity and kappa "
                "describe the labelled sample, not every row (the corrected pass rate accounts "
                "for the strata)",
            ),
        )
    if n_items is not None and n_labelled is not None and n_labelled >= n_items:
        return "same_run_random", "every row of the dataset is labelled", ()
    if order == "random" and not imported_labels:
        return (
            "same_run_random",
            "the Label page's queue is in random order, so labelled rows are a random sample "
            "of the dataset",
            (),
        )
    return (
        "same_run_random",
        "assumed: the labelled rows are a random sample of the dataset",
        (
            f"the labelled rows are assumed to be a random sample of {dataset!r} ("
            + ("labels imported from a file" if imported_labels else f"queue order {order!r}")
            + "); if they were drawn otherwise, choose the design explicitly",
        ),
    )


# -- planning -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """How many more labels would narrow the corrected pass rate to ``± target_half_width``.

    Attributes:
        target_half_width: The wanted half-width (e.g. 0.05).
        needed: Lee et al.'s delta-method plan (``None`` when it cannot be computed).
        gap: Achieved failing/passing split vs the variance-optimal one (``None`` if undefined).
        rows_to_label: About how many rows to label from the judge-fail and judge-pass strata to
            find ``needed.extra_m0`` failing and ``needed.extra_m1`` passing rows.
        message: One sentence for people.
    """

    target_half_width: float
    needed: LabelsNeeded | None
    gap: AllocationGap | None
    rows_to_label: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        """JSON-safe form."""
        needed = self.needed
        return {
            "target_half_width": self.target_half_width,
            "achievable": None if needed is None else needed.achievable,
            "extra_failing": None if needed is None else needed.extra_m0,
            "extra_passing": None if needed is None else needed.extra_m1,
            "rows_to_label": self.rows_to_label,
            "current_half_width": None if needed is None else _num(needed.current_half_width),
            "projected_half_width": (
                None if needed is None else _num(needed.projected_half_width)
            ),
            "variance_inflation": None if self.gap is None else _num(self.gap.variance_inflation),
            "message": self.message,
        }


def plan_labels(
    stats: CalibrationReport,
    *,
    target_half_width: float = DEFAULT_HALF_WIDTH,
    all_labelled: bool = False,
) -> Plan:
    """Extra failing/passing labels for ``± target_half_width``, from Lee et al.'s variance.

    The labeller cannot know a row's true class in advance, so failing rows are found by labelling
    judge-fail rows (about ``1 / NPV`` rows per failing row) and passing rows by labelling
    judge-pass rows (``1 / PPV``); ``rows_to_label`` adds both. Lee's variance is the one of a
    separate calibration set; for labels sampled from the target run itself it is conservative.

    Args:
        stats: The report statistics.
        target_half_width: Wanted half-width of the corrected pass rate's interval.
        all_labelled: Every target row is labelled already (same-run designs): no plan needed.
    """
    cm = stats.counts.confusion
    n_target, k_target = stats.counts.n_target, stats.counts.k_target
    if all_labelled:
        return Plan(target_half_width, None, None, 0,
                    "Every target row is labelled: the pass rate is the human pass rate, and "
                    "more labels of these rows cannot narrow it further.")
    if cm.m0 == 0 or cm.m1 == 0 or n_target == 0:
        missing = "failing" if cm.m0 == 0 else "passing" if cm.m1 == 0 else None
        message = (
            f"Label at least one truly {missing} row first: the correction needs both classes."
            if missing else "Run the judge on the target rows first."
        )
        return Plan(target_half_width, None, None, None, message)
    q0, q1 = cm.tn / cm.m0, cm.tp / cm.m1
    p = k_target / n_target
    needed = labels_needed(
        target_half_width=target_half_width, n_target=n_target, judge_pass_rate=p, q0=q0, q1=q1,
        m0=cm.m0, m1=cm.m1, confidence=stats.confidence,
    )
    gap = None
    theta = stats.corrected.estimate
    if theta is not None and 0 < theta < 1 and 0 < q0 < 1 and 0 < q1 < 1:
        try:
            gap = allocation_gap(cm.m0, cm.m1, theta=theta, q0=q0, q1=q1)
        except CalibrationInputError:
            gap = None
    if not needed.achievable:
        return Plan(target_half_width, needed, gap, None,
                    f"More labels cannot reach ±{target_half_width:g}: {needed.reason}.")
    if needed.extra_m0 == 0 and needed.extra_m1 == 0:
        now = needed.current_half_width or 0.0
        return Plan(target_half_width, needed, gap, 0,
                    f"The corrected pass rate is already within ±{now:.3f} "
                    f"(target ±{target_half_width:g}).")
    npv = cm.tn / (cm.tn + cm.fn) if cm.tn + cm.fn else None
    ppv = cm.tp / (cm.tp + cm.fp) if cm.tp + cm.fp else None
    rows = None
    if (needed.extra_m0 == 0 or npv) and (needed.extra_m1 == 0 or ppv):
        rows = (math.ceil(needed.extra_m0 / npv) if needed.extra_m0 and npv else 0) + (
            math.ceil(needed.extra_m1 / ppv) if needed.extra_m1 and ppv else 0
        )
    parts = []
    if needed.extra_m0:
        parts.append(f"about {needed.extra_m0} more failing rows")
    if needed.extra_m1:
        parts.append(f"about {needed.extra_m1} more passing rows")
    current = needed.current_half_width
    message = (
        f"Label {' and '.join(parts)} to bring the corrected pass rate to "
        f"±{target_half_width:g}"
        + (f" (now ±{current:.3f})" if current is not None else "")
        + (f"; drawn by judge verdict that is roughly {rows} rows to label" if rows else "")
        + "."
    )
    return Plan(target_half_width, needed, gap, rows, message)


# -- the report -----------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeReport:
    """Everything the Calibration page and ``calibrate report`` show for one judge.

    Attributes:
        dataset: Dataset holding the human labels.
        target: Dataset whose pass rate is estimated (``dataset`` unless ``--target``).
        criterion: Label criterion.
        judge: The judge.
        design: Sampling design (see :func:`choose_design`).
        design_reason: Why that design.
        rule: Aggregation rule of repeated/swapped calls.
        stats: The statistics (:class:`~judges.calibration.CalibrationReport`).
        human: Human labels and human-human agreement.
        judge_items: The judge's verdicts on ``dataset``.
        target_items: The judge's verdicts on ``target`` (same object when it is ``dataset``).
        rows: The joined labelled rows: ``item_id``, ``human``, ``judge``, ``segment``,
            ``document_id``, ``agree`` (both pass/fail and equal; ``NA`` otherwise),
            ``flipped``, ``order_flipped``, ``repeat_flipped``, ``reasoning``, ``note``,
            ``annotators``, ``unscored_reason``.
        not_judged: Labelled items the judge has no verdict for yet (left out, counted).
        plan: The labelling plan.
        warnings: Every caveat, report-level first.
    """

    dataset: str
    target: str
    criterion: str
    judge: JudgeRef
    design: str
    design_reason: str
    rule: str
    stats: CalibrationReport
    human: HumanLabels
    judge_items: JudgeItems
    target_items: JudgeItems
    rows: pd.DataFrame
    not_judged: int
    plan: Plan
    warnings: tuple[str, ...]

    # -- derived views ----------------------------------------------------------------------

    def disagreements(self) -> pd.DataFrame:
        """Labelled rows where the judge and the human disagree, or the judge flipped.

        Rows with both verdicts pass/fail and different come first, then flips.
        """
        rows = self.rows
        disagree = rows["agree"].eq(False).fillna(False).astype(bool)
        flipped = rows["flipped"].fillna(False).astype(bool)
        out = rows[disagree | flipped].copy()
        out["kind"] = np.where(disagree[disagree | flipped], "disagree", "flip")
        return out.sort_values(["kind", "item_id"], kind="stable").reset_index(drop=True)

    def segments_frame(self) -> pd.DataFrame:
        """Per-segment table: segment, n, sensitivity, FPR, kappa, corrected pass rate."""
        records = []
        for seg in self.stats.segments:
            records.append({
                "segment": seg.segment,
                "n_labelled": seg.n_labelled,
                "n_target": seg.n_target,
                "sensitivity": format_interval(interval(seg.sensitivity)),
                "fpr": format_interval(interval(seg.fpr)),
                "kappa": format_interval(interval(seg.kappa)),
                "corrected_pass_rate": format_interval(interval(seg.pass_rate)),
                "observed_pass_rate": format_interval(interval(seg.naive)),
            })
        return pd.DataFrame(records, columns=[
            "segment", "n_labelled", "n_target", "sensitivity", "fpr", "kappa",
            "corrected_pass_rate", "observed_pass_rate",
        ])

    def swap_flip_rate(self) -> dict[str, Any]:
        """Share of judged items of ``dataset`` whose verdict changed when positions swapped."""
        c = self.judge_items.consistency
        return interval(c.flip_rate_order if c is not None else None)

    def repeat_flip_rate(self) -> dict[str, Any]:
        """Share of judged items of ``dataset`` whose repeated calls disagreed."""
        c = self.judge_items.consistency
        return interval(c.flip_rate_repeat if c is not None else None)

    def counts(self) -> dict[str, int]:
        """Unsure / unscored counts shown beside the rates."""
        rows = self.rows
        human_decided = rows["human"].isin(["pass", "fail"])
        target = self.target_items.items
        return {
            "human_unsure": int((~human_decided).sum()),
            "judge_unsure_labelled": int((human_decided & rows["judge"].eq("unsure")).sum()),
            "judge_unscored_labelled": int((human_decided & rows["judge"].eq("unscored")).sum()),
            "judge_unsure_target": int(target["verdict"].eq("unsure").sum()),
            "judge_unscored_target": int(target["verdict"].eq("unscored").sum()),
            "not_judged": self.not_judged,
        }

    # -- JSON -------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form documented in ``docs/report-json.md``."""
        s = self.stats
        cm = s.counts.confusion
        counts = self.counts()
        consistency = self.judge_items.consistency
        agreement = self.human.agreement
        human_agreement = None
        if agreement is not None:
            human_agreement = {
                "annotators": len(self.human.annotators),
                "items": self.human.n_overlap,
                "kappa": interval(agreement.mean_pairwise_kappa),
                "krippendorff_alpha": interval(agreement.krippendorff),
                "pairs": [
                    {"a": p.rater_a, "b": p.rater_b, "kappa": interval(p.kappa)}
                    for p in agreement.pairwise
                ],
            }
        clustered = None
        if s.clustered is not None:
            clustered = {name: interval(est) for name, est in sorted(s.clustered.items())}
        return {
            "schema_version": SCHEMA_VERSION,
            "dataset": self.dataset,
            "target": self.target,
            "criterion": self.criterion,
            "judge": self.judge.to_json(),
            "design": self.design,
            "design_reason": self.design_reason,
            "aggregation": self.rule,
            "confidence": s.confidence,
            "n": cm.n,
            "n_target": s.counts.n_target,
            "m0": cm.m0,
            "m1": cm.m1,
            "confusion": {"tp": cm.tp, "fn": cm.fn, "fp": cm.fp, "tn": cm.tn},
            "sensitivity": interval(s.rates.sensitivity),
            "specificity": interval(s.rates.specificity),
            "fpr": interval(s.rates.fpr),
            "kappa": interval(s.kappa),
            "observed_pass_rate": interval(s.naive),
            "corrected_pass_rate": interval(s.corrected),
            "human_pass_rate": interval(s.estimators["labels_only"]),
            "method": s.corrected.method,
            "assumption": s.corrected.assumption,
            "estimators": {
                name: {**interval(est), "assumption": est.assumption}
                for name, est in sorted(s.estimators.items())
            },
            "unscored": {
                "labelled": counts["judge_unscored_labelled"],
                "target": counts["judge_unscored_target"],
            },
            "unsure": {
                "human": counts["human_unsure"],
                "judge_labelled": counts["judge_unsure_labelled"],
                "judge_target": counts["judge_unsure_target"],
            },
            "not_judged": self.not_judged,
            "swap_flip_rate": self.swap_flip_rate(),
            "repeat_flip_rate": self.repeat_flip_rate(),
            "flipped_items": 0 if consistency is None else int(consistency.any_flipped.sum()),
            "human_agreement": human_agreement,
            "clustered": clustered,
            "segments": [
                {
                    "segment": seg.segment,
                    "n": seg.n_labelled,
                    "n_target": seg.n_target,
                    "confusion": {"tp": seg.confusion.tp, "fn": seg.confusion.fn,
                                  "fp": seg.confusion.fp, "tn": seg.confusion.tn},
                    "sensitivity": interval(seg.sensitivity),
                    "fpr": interval(seg.fpr),
                    "kappa": interval(seg.kappa),
                    "observed_pass_rate": interval(seg.naive),
                    "corrected_pass_rate": interval(seg.pass_rate),
                }
                for seg in s.segments
            ],
            "disagreements": int(self.rows["agree"].eq(False).fillna(False).astype(bool).sum()),
            "plan": self.plan.to_json(),
            "warnings": list(self.warnings),
        }


def _judge_column(items: pd.DataFrame, ids: pd.Series) -> pd.Series:
    return ids.map(dict(zip(items["item_id"], items["verdict"], strict=True)))


def calibration_report(
    store: LabelStore,
    dataset: str,
    judge: str | JudgeRef,
    *,
    criterion: str | None = None,
    target: str | None = None,
    design: str | None = None,
    rule: str = "all_agree",
    confidence: float = 0.95,
    target_half_width: float = DEFAULT_HALF_WIDTH,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_N_BOOT,
) -> JudgeReport:
    """Calibrate one judge against the human labels of ``dataset``.

    Args:
        store: The label store.
        dataset: Dataset with the human labels (and the judge's verdicts on them).
        judge: Judge name (latest revision run on ``dataset``), config id or :class:`JudgeRef`.
        criterion: Label criterion (default: the judge's criterion, else ``faithfulness``).
        target: Dataset whose pass rate to estimate (default ``dataset``); another dataset
            judged by the same config means a separate calibration set (Lee et al. 2025).
        design: Force a sampling design (one of :data:`judges.calibration.DESIGNS`); default
            :func:`choose_design`.
        rule: How repeated / position-swapped calls combine per item (``all_agree`` or
            ``majority``).
        confidence: Level of every interval.
        target_half_width: Half-width the labelling plan aims for.
        seed: Seed of every bootstrap (document-clustered intervals, human agreement), so the
            same data always give the same numbers.
        n_boot: Bootstrap replicates of the document-clustered intervals.

    Returns:
        A :class:`JudgeReport`.

    Raises:
        NotFoundError: unknown dataset, target or judge.
        CalibrateError: a pairwise dataset, or a design name that does not exist.
    """
    info = store.dataset(dataset)
    if info.kind != "pointwise":
        raise CalibrateError(
            f"dataset {dataset!r} is {info.kind}: the calibration report covers pass/fail "
            "(pointwise) judges"
        )
    target_name = target or dataset
    if target_name != dataset:
        store.dataset(target_name)
    ref = judge if isinstance(judge, JudgeRef) else find_judge(store, judge, dataset=dataset)
    crit = criterion or ref.criterion or DEFAULT_CRITERION
    rule_name = normalize_rule(rule)

    human = load_human_labels(store, dataset, crit, seed=seed, confidence=confidence)
    if human.items.empty:
        raise NotFoundError(
            f"dataset {dataset!r} has no human labels for criterion {crit!r}: label some rows "
            "(Label page) or import them (calibrate labels import)"
        )
    judged = load_judge_items(store, dataset, ref, rule=rule_name, confidence=confidence)
    if judged.items.empty:
        raise NotFoundError(
            f"judge {ref.name!r} ({ref.config_id}) has no verdicts on dataset {dataset!r}: run "
            "it or import its verdicts first"
        )
    target_items = (
        judged if target_name == dataset
        else load_judge_items(store, target_name, ref, rule=rule_name, confidence=confidence)
    )
    if target_items.items.empty:
        raise NotFoundError(
            f"judge {ref.name!r} has no verdicts on target dataset {target_name!r}"
        )

    items = store.items_frame(dataset)[["item_id", "segment", "document_id"]]
    labelled = human.items.merge(items, on="item_id", how="left")
    labelled["judge"] = _judge_column(judged.items, labelled["item_id"])
    not_judged = int(labelled["judge"].isna().sum())
    rows = labelled[labelled["judge"].notna()].reset_index(drop=True)
    rows = rows.rename(columns={"verdict": "human"})
    extra = judged.items.set_index("item_id")
    for column in ("flipped", "order_flipped", "repeat_flipped", "reasoning",
                   "unscored_reason"):
        rows[column] = rows["item_id"].map(extra[column]).astype(object)
    decided = rows["human"].isin(["pass", "fail"]) & rows["judge"].isin(["pass", "fail"])
    rows["agree"] = pd.array(
        [bool(h == j) if d else pd.NA
         for h, j, d in zip(rows["human"], rows["judge"], decided, strict=True)],
        dtype="boolean",
    )

    if design is None:
        n_items = store.count_items(dataset)
        chosen, reason, design_warnings = choose_design(
            store, dataset, crit, target=target_name, n_items=n_items,
            n_labelled=len(human.items),
            imported_labels=bool(human.labels["origin"].ne("app").any()),
        )
    else:
        if design not in DESIGNS:
            raise CalibrateError(f"unknown design {design!r} (designs: {', '.join(DESIGNS)})")
        chosen, reason, design_warnings = design, "chosen explicitly", ()

    target_frame = target_items.items
    target_meta = (
        items if target_name == dataset
        else store.items_frame(target_name)[["item_id", "segment", "document_id"]]
    )
    target_segments = target_frame["item_id"].map(
        dict(zip(target_meta["item_id"], target_meta["segment"], strict=True))
    )
    has_segments = rows["segment"].notna().any() or target_segments.notna().any()
    doc = rows["document_id"]
    has_docs = bool(doc.notna().any() and doc.dropna().duplicated().any())

    stats = build_report(
        rows["human"].to_numpy(dtype=object),
        rows["judge"].to_numpy(dtype=object),
        target_frame["verdict"].to_numpy(dtype=object),
        design=chosen,
        segments_labelled=(
            rows["segment"].fillna(NO_SEGMENT).astype(str).to_numpy() if has_segments else None
        ),
        segments_target=(
            target_segments.fillna(NO_SEGMENT).astype(str).to_numpy() if has_segments else None
        ),
        doc_ids=(
            doc.where(doc.notna(), "item:" + rows["item_id"].astype(str)).astype(str).to_numpy()
            if has_docs else None
        ),
        rng=np.random.default_rng(seed) if has_docs else None,
        n_boot=n_boot,
        confidence=confidence,
    )
    warnings = list(stats.warnings) + list(design_warnings)
    if not_judged:
        warnings.append(
            f"{not_judged} labelled rows have no verdict from this judge yet and are left out"
        )
    consistency = judged.consistency
    if consistency is not None and int(consistency.any_flipped.sum()):
        n_flip = int(consistency.any_flipped.sum())
        fate = "excluded as unsure" if rule_name == "all_agree" else "settled by majority"
        warnings.append(f"{n_flip} items flipped across repeats/orders ({fate})")
    for name, est in (("sensitivity", stats.rates.sensitivity),
                      ("specificity", stats.rates.specificity), ("kappa", stats.kappa)):
        if est.refused:
            warnings.append(f"{name} refused: {est.reason}")
    all_labelled = target_name == dataset and len(human.items) >= store.count_items(dataset)
    plan = plan_labels(stats, target_half_width=target_half_width, all_labelled=all_labelled)
    return JudgeReport(
        dataset=dataset,
        target=target_name,
        criterion=crit,
        judge=ref,
        design=chosen,
        design_reason=reason,
        rule=rule_name,
        stats=stats,
        human=human,
        judge_items=judged,
        target_items=target_items,
        rows=rows[[
            "item_id", "human", "judge", "segment", "document_id", "agree", "flipped",
            "order_flipped", "repeat_flipped", "reasoning", "note", "annotators",
            "unscored_reason",
        ]],
        not_judged=not_judged,
        plan=plan,
        warnings=tuple(dict.fromkeys(warnings)),
    )


# -- several judges -------------------------------------------------------------------------


@dataclass(frozen=True)
class Leaderboard:
    """Several judges on the same labelled rows, best kappa first.

    Attributes:
        dataset: Dataset with the labels.
        criterion: Label criterion.
        judges: The judges, in leaderboard order.
        rows: :class:`~judges.calibration.LeaderboardRow` per judge.
        n_items: Labelled items compared (a judge without a verdict on one counts it unscored).
    """

    dataset: str
    criterion: str
    judges: tuple[JudgeRef, ...]
    rows: tuple[LeaderboardRow, ...]
    n_items: int

    def frame(self) -> pd.DataFrame:
        """One display row per judge."""
        records = []
        for ref, row in zip(self.judges, self.rows, strict=True):
            p = row.mcnemar_p_vs_best
            records.append({
                "rank": row.rank,
                "judge": row.judge,
                "config_id": ref.config_id,
                "n": row.n,
                "unscored": row.n_judge_unscored,
                "kappa": format_interval(interval(row.kappa)),
                "sensitivity": format_interval(interval(row.sensitivity)),
                "fpr": format_interval(interval(row.fpr)),
                "accuracy": format_interval(interval(row.accuracy)),
                "mcnemar_p_vs_best": None if p is None else float(p),
            })
        return pd.DataFrame(records)

    def to_json(self) -> list[dict[str, Any]]:
        """JSON-safe rows."""
        return [
            {
                "rank": row.rank,
                "judge": ref.to_json(),
                "n": row.n,
                "unscored": row.n_judge_unscored,
                "kappa": interval(row.kappa),
                "sensitivity": interval(row.sensitivity),
                "specificity": interval(row.specificity),
                "fpr": interval(row.fpr),
                "accuracy": interval(row.accuracy),
                "mcnemar_p_vs_best": row.mcnemar_p_vs_best,
            }
            for ref, row in zip(self.judges, self.rows, strict=True)
        ]


def judge_leaderboard(
    store: LabelStore,
    dataset: str,
    judges: Sequence[str | JudgeRef] | None = None,
    *,
    criterion: str | None = None,
    rule: str = "all_agree",
    confidence: float = 0.95,
) -> Leaderboard:
    """Rank judges on the labelled rows of ``dataset`` by kappa, McNemar p vs the best.

    Args:
        store: The label store.
        dataset: Dataset with labels and the judges' verdicts.
        judges: Judge names / config ids (default: every judge run on ``dataset``).
        criterion: Label criterion (default: the first judge's criterion).
        rule: Aggregation rule of repeated / swapped calls.
        confidence: Level of every interval.

    Returns:
        A :class:`Leaderboard`.
    """
    refs = [
        j if isinstance(j, JudgeRef) else find_judge(store, j, dataset=dataset)
        for j in (judges if judges is not None else judges_on(store, dataset))
    ]
    if not refs:
        raise NotFoundError(f"no judge has verdicts on dataset {dataset!r}")
    names = [r.name if [x.name for x in refs].count(r.name) == 1 else f"{r.name} r{r.revision}"
             for r in refs]
    crit = criterion or refs[0].criterion or DEFAULT_CRITERION
    human = load_human_labels(store, dataset, crit)
    ids = human.items["item_id"]
    columns = {}
    for name, ref in zip(names, refs, strict=True):
        judged = load_judge_items(store, dataset, ref, rule=rule, confidence=confidence)
        columns[name] = _judge_column(judged.items, ids).fillna("unscored").to_numpy(dtype=object)
    rows = leaderboard(human.items["verdict"].to_numpy(dtype=object), columns,
                       confidence=confidence)
    by_name = dict(zip(names, refs, strict=True))
    return Leaderboard(dataset, crit, tuple(by_name[r.judge] for r in rows), rows, len(ids))


__all__ = [
    "AGGREGATION_RULES",
    "DEFAULT_HALF_WIDTH",
    "SCHEMA_VERSION",
    "HumanLabels",
    "JudgeItems",
    "JudgeRef",
    "JudgeReport",
    "Leaderboard",
    "Plan",
    "aggregate_calls",
    "calibration_report",
    "choose_design",
    "find_judge",
    "format_interval",
    "format_number",
    "interval",
    "judge_leaderboard",
    "judges_on",
    "load_human_labels",
    "load_judge_items",
    "normalize_rule",
    "plan_labels",
]
