"""The report's inputs: which judge, the human labels and the judge's verdicts, per item.

1. **The judge** (:func:`find_judge`, :func:`judges_on`): a name or config id resolved to a
   :class:`JudgeRef`.
2. **Human labels** (:func:`load_human_labels`): the current label of every annotator for the
   criterion, reduced to one verdict per item by majority over pass/fail (a tie, or only
   ``unsure`` labels, gives ``unsure``, which every rate excludes and counts). When two or more
   annotators labelled the same items, their agreement (Cohen's / Light's kappa, Krippendorff's
   alpha) is the ceiling a judge is compared against.
3. **Judge verdicts** (:func:`load_judge_items`): every (item, repeat, order) call of the judge
   (:func:`judges.verdicts.judge_verdicts`), reduced to one verdict per item by
   :func:`judges.aggregation.aggregate_stored_calls` (the SQL twin of
   :func:`judges.aggregation.aggregate_calls`) under the judge config's ``aggregation`` rule
   (``all_agree`` for imported verdicts; a caller may override it). Flip rates come from the
   same call.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import pandas as pd

from judges.aggregation import aggregate_stored_calls, rule_for
from judges.calibration import (
    ConsistencyResult,
    DesignDecision,
    MultiRaterAgreement,
    multi_rater_agreement,
)
from judges.config import JudgeConfig
from judges.providers import is_stand_in
from judges.stores.judge_store import StoredConfig
from judges.verdicts import judge_verdicts, resolve_judge
from judges.workspace import Workspace
from labels.stores.label_store import LabelStore

DEFAULT_SEED = 0


class _Decided(Protocol):
    @property
    def decision(self) -> DesignDecision: ...


class AnswerDesign:
    """The design a report's answer settled on: the pass/fail and the pairwise report show it."""

    answer: _Decided

    @property
    def design(self) -> str | None:
        """The design the labels' provenance supports (``None`` when it was refused)."""
        return self.answer.decision.design

    @property
    def design_reason(self) -> str:
        """Why that design."""
        return self.answer.decision.reason




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

    @property
    def stand_in(self) -> bool:
        """A scripted stand-in (``scripted/…``): plumbing for demos and tests, not a judge."""
        return is_stand_in(self.model)

    @property
    def config(self) -> JudgeConfig | None:
        """The full judge config (``None`` for imported verdicts)."""
        return None if self.stored is None else self.stored.config

    @classmethod
    def from_stored(cls, stored: StoredConfig) -> JudgeRef:
        """The reference to a stored config row."""
        return cls(
            config_id=stored.config_id,
            name=stored.name,
            revision=int(stored.revision),
            model=stored.model,
            origin=stored.origin,
            kind=stored.kind,
            criterion=stored.criterion,
            stored=stored,
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-safe identity of the judge."""
        return {
            "name": self.name,
            "config_id": self.config_id,
            "revision": self.revision,
            "model": self.model,
            "origin": self.origin,
        }


def stand_in_specs(workspace: Workspace, ref: JudgeRef, *datasets: str) -> list[str]:
    """The stand-in providers (``scripted/…``) behind ``ref``'s verdicts on ``datasets``.

    The config's own model, and the provider each run actually used (a run may override it).
    """
    judge_store = workspace.judges
    specs = {ref.model}
    for dataset in dict.fromkeys(datasets):
        specs |= {str(r.options.get("provider") or "")
                  for r in judge_store.runs(dataset=dataset, config_id=ref.config_id)}
    return sorted(s for s in specs if is_stand_in(s))


def find_judge(workspace: Workspace, judge: str, *, dataset: str | None = None) -> JudgeRef:
    """Resolve a judge name (latest revision run on ``dataset``) or config id.

    Raises:
        NotFoundError: no such judge (the message lists the known names).
    """
    judge_store = workspace.judges
    return JudgeRef.from_stored(
        judge_store.stored_config(resolve_judge(judge_store, judge, dataset=dataset))
    )


def judges_on(workspace: Workspace, dataset: str) -> list[JudgeRef]:
    """Judge configs with at least one run (or import) on ``dataset``, most recent first."""
    judge_store = workspace.judges
    seen: dict[str, JudgeRef] = {}
    for run in judge_store.runs(dataset=dataset):
        if run.config_id not in seen:
            seen[run.config_id] = JudgeRef.from_stored(judge_store.stored_config(run.config_id))
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
    ).reset_index()
    # names and notes joined in plain Python: a groupby with a Python aggregator costs ~0.1 ms
    # a group (1 s for 10 k labelled items)
    names: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    for item_id, annotator, note in zip(frame["item_id"].tolist(), frame["annotator"].tolist(),
                                        frame["note"].astype(object).tolist(), strict=True):
        names.setdefault(item_id, []).append(annotator)
        if isinstance(note, str) and note.strip():
            notes.setdefault(item_id, []).append(f"{annotator}: {note}")
    ids = out["item_id"].tolist()
    out["annotators"] = [", ".join(names[i]) for i in ids]
    out["n_unsure"] = out["n_annotators"] - out["n_pass"] - out["n_fail"]
    out["verdict"] = np.where(out["n_pass"] > out["n_fail"], "pass",
                              np.where(out["n_fail"] > out["n_pass"], "fail", "unsure"))
    out["note"] = ["\n".join(notes.get(i, ())) for i in ids]
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
        dataset=dataset, criterion=criterion, items=items, labels=labels, annotators=annotators,
        agreement=agreement, n_overlap=n_overlap,
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
        items: One row per judged item: ``item_id``, ``verdict`` (aggregated; ``unscored`` when
            no call gave a verdict), ``n_calls``, ``n_scored``, ``order_flipped``,
            ``repeat_flipped``, ``flipped``, ``both_orders`` (some repeat has both orders
            scored), ``reasoning`` (of the first scored call),
            ``unscored_reason`` (of the first unscored call); the two texts only for the
            items :func:`load_judge_items` was asked to read them for.
        consistency: Flip rates and per-item aggregation (``None`` when there are no calls).
        workspace: Where :meth:`call_rows` reads the per-call rows.
    """

    judge: JudgeRef
    dataset: str
    rule: str
    items: pd.DataFrame
    consistency: ConsistencyResult | None
    workspace: Workspace | None = field(default=None, repr=False, compare=False)

    def call_rows(self, item_ids: Collection[str] | None = None) -> pd.DataFrame:
        """One row per (item, repeat, order) of ``item_ids`` (default: every item), read now.

        A report counts its verdicts and flips in SQL (:func:`aggregate_stored_calls`); the
        per-call rows (10 M at the scale of ``bench/report_scale.py``) are read for the items
        a page shows, not for the whole dataset.
        """
        if self.workspace is None:
            raise ValueError("JudgeItems without a workspace to read its calls from")
        return judge_verdicts(self.workspace, self.dataset, self.judge.config_id,
                              item_ids=item_ids)

    def verdict_map(self) -> dict[str, str]:
        """Item id → aggregated verdict (a fresh dict)."""
        # tolist() first: iterating an Arrow-backed string column is ~10x slower (1 M items)
        return dict(zip(self.items["item_id"].tolist(), self.items["verdict"].tolist(),
                        strict=True))


def load_judge_items(
    workspace: Workspace,
    dataset: str,
    judge: str | JudgeRef,
    *,
    rule: str | None = None,
    confidence: float = 0.95,
    texts_for: Collection[str] | None = None,
) -> JudgeItems:
    """A judge's verdicts on ``dataset``, aggregated per item.

    Args:
        workspace: The open database (the judge's calls are read from ``workspace.judges``).
        dataset: Dataset name.
        judge: Judge name, config id or :class:`JudgeRef`.
        rule: Aggregation rule (``all_agree`` or ``majority``); default: the judge config's
            ``aggregation`` (:func:`judges.aggregation.rule_for`).
        confidence: Level of the flip-rate intervals.
        texts_for: Item ids whose ``reasoning`` and ``unscored_reason`` are read (``None``:
            every item; the others get NaN). A report reads them for its labelled rows only.

    Returns:
        A :class:`JudgeItems`.
    """
    ref = judge if isinstance(judge, JudgeRef) else find_judge(workspace, judge, dataset=dataset)
    name = rule_for(ref.config, rule)
    items, consistency = aggregate_stored_calls(workspace, dataset, ref.config_id,
                                                rule=name, confidence=confidence, kind=ref.kind,
                                                texts_for=texts_for)
    return JudgeItems(ref, dataset, name, items, consistency, workspace=workspace)
