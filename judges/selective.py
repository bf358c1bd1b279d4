"""The judge that knows when to abstain: acceptance rules, escalation and cascades from the store.

:func:`select_rule` reads a judge's calls and the human labels of a dataset, turns the calls into
a confidence score per row (:mod:`judges.signals`: agreement across repeats and swapped orders,
the verdict probability of a claim-split judge's ``p_yes``, optionally other judges' agreement),
and certifies an acceptance rule with :func:`judges.calibration.learn_then_test`: the error
rate among the verdicts it accepts is at most ``alpha`` with probability at least
``1 - delta``, with a threshold per judge verdict (its passes and fails are not equally
reliable). The labels' provenance decides the strata (the one design resolution of
:func:`judges.calibration.answer_pass_rate`): random labels the stage judge's verdicts (or one
threshold for every row, the pooled test, on request), labels drawn within strata those
strata; active labels are refused.

:func:`cascade_report` chains stages (judge A, judge B, ...; then experts): each stage's rule
is certified on the labelled rows that reach it, the rows every stage abstains on are
escalated, and the whole run's pass rate is estimated over the cascade's cells
(:func:`judges.calibration.cascade_pass_rate`), with the share each stage settles and the cost
per 1,000 rows from the logged tokens and costs (a price table for what was not logged). A
single-judge selection is a one-stage cascade.

:func:`write_accepted` writes ``id,verdict`` of the accepted rows; :func:`escalate` records the
escalated rows as the Label queue's ``escalated`` order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judges.calibration import (
    AcceptanceRule,
    PassRateEstimate,
    cascade_cells,
    cascade_pass_rate,
    design_decision,
    evidence_strata,
    interval_json,
    learn_then_test,
)
from judges.calibration.evidence import OUTCOME_FAIL, OUTCOME_PASS
from judges.calibration.strata import StratumCounts
from judges.calibration.vocabulary import SIGNALS
from judges.card_model import CardSelection
from judges.config import canonical_json
from judges.pricing import Price, price_for
from judges.reporting import JudgeReport, calibration_report, find_judge, load_judge_items
from judges.reporting.assemble import escalated_rows
from judges.reporting.evidence import judged_rows, per_row
from judges.signals import available_signals, call_signals, scores_of
from judges.verdicts import dataset_keys
from judges.workspace import Workspace
from labels.errors import CalibrateError
from labels.exporting import write_table
from labels.sampling import QueueSettings
from labels.stores.label_store import Escalation, LabelStore

DEFAULT_DELTA = 0.1


# --------------------------------------------------------------------------- one stage


@dataclass(frozen=True)
class Stage:
    """One stage of a cascade: a judge, its certified rule, what it settles.

    Attributes:
        judge: The judge's name.
        config_id: Its config id.
        model: ``provider/model``.
        stand_in: A scripted stand-in (not a model).
        signals: The signals of its confidence score.
        rule: The certified acceptance rule (on the labelled rows that reach this stage).
        reaching: Rows of the run that reach this stage.
        accepted: Of those, rows it accepts.
        cost: What the stage's calls cost per row it runs on (``usd_per_row``, ``tokens_per_row``,
            ``calls_per_row``, ``source``: ``logged``, ``priced`` or ``unknown``).
    """

    judge: str
    config_id: str
    model: str
    stand_in: bool
    signals: tuple[str, ...]
    rule: AcceptanceRule
    reaching: int
    accepted: int
    cost: Mapping[str, Any]

    def to_json(self, rows: int) -> dict[str, Any]:
        """JSON form; ``rows`` is the run's size (for the share settled)."""
        r = self.rule
        return {
            "judge": self.judge, "config_id": self.config_id, "model": self.model,
            "stand_in": self.stand_in, "signals": list(self.signals),
            "thresholds": _thresholds_json(r), "alpha": r.alpha, "delta": r.delta,
            "p_value": r.p_value, "level": r.level, "guarantee": r.guarantee,
            "refused": r.refused, "reason": r.reason, "labelled": r.labelled,
            "accepted_labelled": r.accepted_labelled, "errors": r.errors,
            "error_estimate": r.error_estimate, "reaching": self.reaching,
            "accepted": self.accepted, "settled_share": self.accepted / rows if rows else 0.0,
            "cost": dict(self.cost),
            "tests": [t.to_dict() for t in r.tests],
        }


def _thresholds_json(rule: AcceptanceRule) -> dict[str, float | None]:
    """``{stratum: threshold}`` (``{"all rows": t}`` for a pooled rule)."""
    if not rule.per_stratum:
        return {"all rows": rule.thresholds[0]}
    return dict(zip(rule.strata, rule.thresholds, strict=True))


@dataclass(frozen=True)
class CascadeReport:
    """A cascade on one run: its stages, the escalated rows, the whole-run pass rate.

    Attributes:
        dataset: The labelled dataset the rules were certified on.
        target: The run the cascade was applied to.
        criterion: The label criterion.
        rule_id: The cascade's id (recorded with the escalation and with labels drawn from it).
        design: The design the labels' provenance supports, and why.
        stages: The stages in order.
        rows: Rows of the run.
        item_ids: The run's ids (file order).
        stage_of_row: Per row, the stage that accepted it (``len(stages)``: escalated).
        verdict_of_row: Per row, the accepting stage's verdict (``pass``/``fail``/``None``).
        pass_rate: The whole run's pass rate (accepted verdicts corrected within their cells,
            expert labels on the escalated rows).
        expert: The expert stage: ``escalated`` rows, ``labelled`` of them, labels per 1,000 rows,
            median seconds a label took (when logged).
        warnings: Caveats.
    """

    dataset: str
    target: str
    criterion: str
    rule_id: str
    design: str
    stages: tuple[Stage, ...]
    rows: int
    item_ids: tuple[str, ...] = field(repr=False)
    stage_of_row: npt.NDArray[np.int64] = field(repr=False)
    verdict_of_row: tuple[str | None, ...] = field(repr=False)
    pass_rate: PassRateEstimate | None = None
    expert: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def escalated_ids(self) -> tuple[str, ...]:
        """Rows every stage abstained on (file order)."""
        k = len(self.stages)
        return tuple(i for i, s in zip(self.item_ids, self.stage_of_row, strict=True) if s == k)

    def accepted(self) -> pd.DataFrame:
        """``id``, ``verdict``, ``stage`` of the accepted rows (file order)."""
        keep = self.stage_of_row < len(self.stages)
        names = [s.judge for s in self.stages]
        return pd.DataFrame({
            "id": np.asarray(self.item_ids, dtype=object)[keep],
            "verdict": np.asarray(self.verdict_of_row, dtype=object)[keep],
            "stage": [names[k] for k in self.stage_of_row[keep]],
        })

    def cost_per_1000(self) -> dict[str, Any]:
        """USD per 1,000 rows of the run: each stage on the rows that reach it, and in total."""
        parts: dict[str, Any] = {}
        total: float | None = 0.0
        for s in self.stages:
            usd = s.cost.get("usd_per_row")
            value = None if usd is None else 1000.0 * usd * s.reaching / max(self.rows, 1)
            parts[s.judge] = value
            total = None if value is None or total is None else total + value
        return {"stages": parts, "judges_total": total,
                "expert_labels": self.expert.get("labels_per_1000")}

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (``docs/report-json.md``, ``calibrate judge cascade``)."""
        escalated = len(self.escalated_ids)
        return {
            "dataset": self.dataset, "target": self.target, "criterion": self.criterion,
            "rule_id": self.rule_id, "design": self.design, "rows": self.rows,
            "stages": [s.to_json(self.rows) for s in self.stages],
            "escalated": escalated,
            "escalated_share": escalated / self.rows if self.rows else 0.0,
            "expert": dict(self.expert),
            "cost_per_1000_rows": self.cost_per_1000(),
            "pass_rate": None if self.pass_rate is None else {
                **interval_json(self.pass_rate), "method": self.pass_rate.method,
                "assumption": self.pass_rate.assumption,
                "warnings": list(self.pass_rate.warnings)},
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class _Judged:
    """A judge's verdicts and signals on every row of one dataset (file order)."""

    signals: pd.DataFrame  # one row per dataset row: item_id, verdict, scored, agreeing, ...
    outcome: npt.NDArray[np.int8]
    flipped: npt.NDArray[np.bool_]


def _judged(workspace: Workspace, dataset: str, judge: Any, rule: str | None,
            ids: npt.NDArray[Any], report: JudgeReport | None = None) -> _Judged:
    from judges.calibration import judge_outcomes

    items = (report.judge_items if report is not None and report.dataset == dataset
             else load_judge_items(workspace, dataset, judge, rule=rule, texts_for=()))
    calls = items.call_rows()
    signals = call_signals(calls, items.items)
    at = judged_rows(ids, items.items)
    rows = signals.set_index("item_id").reindex(pd.Index(ids, dtype=object)).reset_index()
    rows = rows.rename(columns={"index": "item_id"})
    rows["item_id"] = ids
    rows["scored"] = rows["scored"].fillna(0).astype(np.int64)
    rows["agreeing"] = rows["agreeing"].fillna(0).astype(np.int64)
    verdicts = per_row(items.items["verdict"].to_numpy(dtype=object), at)
    rows["verdict"] = pd.Series(verdicts, dtype=object).fillna("not run").to_numpy(dtype=object)
    flips = per_row(items.items["flipped"].to_numpy(dtype=object), at)
    outcome = judge_outcomes(pd.Series(verdicts, dtype=object).where(
        ~pd.isna(verdicts), None).to_numpy(dtype=object))
    return _Judged(rows, outcome,
                   pd.Series(flips, dtype=object).fillna(False).astype(bool).to_numpy())


def _cost(workspace: Workspace, dataset: str, config_id: str, model: str,
          prices: Mapping[str, Price] | None) -> dict[str, Any]:
    """Cost per row of a judge's logged calls on ``dataset``."""
    c = workspace.judges.call_costs(config_id, dataset_keys(workspace, dataset))
    n = max(c["items"], 1)
    out: dict[str, Any] = {"calls_per_row": c["calls"] / n, "rows_judged": c["items"],
                           "tokens_per_row": None, "usd_per_row": None, "source": "unknown"}
    if c["tokens_logged"]:
        out["tokens_per_row"] = (c["input_tokens"] + c["output_tokens"]) / n
    price = price_for(model, prices)
    if c["calls"] and c["cost_logged"] == c["calls"]:
        out.update(usd_per_row=c["cost"] / n, source="logged")
    elif c["tokens_logged"] == c["calls"] and c["calls"] and price is not None:
        usd = price.cost(c["input_tokens"], c["output_tokens"])
        out.update(usd_per_row=usd / n, source="priced")
    return out


def _rule_id(parts: Mapping[str, Any]) -> str:
    return "s" + hashlib.blake2b(canonical_json(dict(parts)).encode(),
                                 digest_size=6).hexdigest()


def _design(report: JudgeReport, *, one_threshold: bool = False) -> tuple[str | None, str]:
    """``(mode, why)`` from the labels' provenance; ``mode`` None: refused.

    The rule is certified on the labelled dataset's own rows, whatever target the report
    corrects: the same-run design of its evidence. Modes: ``verdict`` (random labels: a
    threshold per verdict of the stage's judge; a judge's passes and fails are not equally
    reliable), ``design`` (labels drawn within strata: a threshold per stratum of the labels'
    design, crossed with the stage judge's verdict from the second stage on), ``pooled``
    (``one_threshold``: one threshold for every row, the pooled test; random labels only).
    """
    decision = design_decision(report.evidence, same_run=True)
    if decision.refused or decision.design is None:
        return None, f"the labels' provenance cannot support a rule: {decision.reason}"
    if decision.design == "active":
        return None, (
            "the labels were drawn by the active queue, with unequal chances within each "
            "judge-verdict stratum: the exact test of the error among accepted verdicts needs "
            "equal chances within a stratum; label some rows in random or stratified order")
    random = decision.design == "same_run_random"
    if one_threshold and not random:
        return None, (f"one threshold for every row needs labels that are a random sample of "
                      f"the dataset, and these are not ({decision.reason})")
    if one_threshold:
        return "pooled", ("the labelled rows are a random sample of the dataset: one "
                          "threshold, the pooled exact test")
    if random:
        return "verdict", ("the labelled rows are a random sample of the dataset: a threshold "
                           "per verdict of each stage's judge (delta split over them)")
    return "design", (f"{decision.reason}; a threshold per stratum of the labels' design "
                      "(crossed with each later stage's verdict; delta split over them)")


def _stage_strata(mode: str, k: int, judge: str, outcome: npt.NDArray[np.int8],
                  base: npt.NDArray[np.int64],
                  base_names: tuple[str, ...]) -> tuple[npt.NDArray[np.int64], tuple[str, ...]]:
    """Per row, the stratum stage ``k``'s thresholds are per; and the strata's names."""
    if mode == "pooled" or k == 0:
        return base, base_names
    own = np.select([outcome == OUTCOME_PASS, outcome == OUTCOME_FAIL], [0, 1], 2)
    words = (f"{judge} pass", f"{judge} fail", f"{judge} not judged")
    if mode == "verdict":
        return own.astype(np.int64), words
    return (base * 3 + own).astype(np.int64), tuple(
        f"{b}, {w}" for b in base_names for w in words)


def cascade_report(
    workspace: Workspace,
    dataset: str,
    judges: Sequence[str],
    *,
    alpha: float,
    delta: float = DEFAULT_DELTA,
    target: str | None = None,
    criterion: str | None = None,
    rule: str | None = None,
    signals: Sequence[str] | None = None,
    with_judges: Sequence[str] = (),
    p_value: str = "binomial",
    prices: Mapping[str, Price] | None = None,
    confidence: float = 0.95,
    report: JudgeReport | None = None,
    one_threshold: bool = False,
) -> CascadeReport:
    """Certify each stage's acceptance rule on ``dataset``'s labels and apply them to ``target``.

    Args:
        workspace: The open database (labels and the judges' calls).
        dataset: The labelled dataset (the rules are certified on its labels).
        judges: The stages, cheapest first (names or config ids, each with verdicts on
            ``dataset`` and ``target``).
        alpha: Each stage's error rate among accepted verdicts.
        delta: Each stage's chance that its control fails.
        target: The run the cascade settles (default ``dataset``).
        criterion: The label criterion (default: the first judge's).
        rule: The aggregation rule (default: each judge config's).
        signals: The signals of every stage's score (default: those the calls carry).
        with_judges: Other judges whose agreement is a signal of the first stage (the
            ``judges`` signal; default none).
        p_value: ``binomial`` (exact) or ``hoeffding_bentkus``.
        prices: Price table for calls that logged tokens but no cost.
        confidence: Level of the whole-run interval.
        report: The first judge's calibration report on ``dataset``, when already made.
        one_threshold: One threshold for every row of a stage (the pooled test; labels must be
            a random sample) instead of one per judge-verdict stratum.

    Returns:
        The :class:`CascadeReport`.

    Raises:
        CalibrateError: no stage given, a judge without verdicts on a dataset, and the like.
    """
    if not judges:
        raise CalibrateError("a cascade needs at least one judge")
    first = report or calibration_report(workspace, dataset, judges[0], criterion=criterion,
                                         rule=rule, confidence=confidence)
    crit = first.criterion
    target_name = target or dataset
    same = target_name == dataset
    warnings: list[str] = []
    store = workspace.labels
    ids = store.item_groups(dataset)["item_id"]
    t_ids = ids if same else store.item_groups(target_name)["item_id"]
    mode, why = _design(first, one_threshold=one_threshold)
    ev = first.evidence
    strata = evidence_strata(ev, same_run=True)
    lab = ev.labelled
    lab_ids = first.human.items["item_id"].astype(str).to_numpy(dtype=object)
    lab_at = np.asarray(pd.Index(ids, dtype=object).get_indexer(lab_ids), dtype=np.int64)
    escalated_here = escalated_rows(store, dataset, crit, store.provenance_frame(
        dataset, criterion=crit))
    if not same and escalated_here is not None:
        warnings.append("the calibration labels include rows drawn from an escalated queue; "
                        "the whole-run estimate of another run transfers only the calibration "
                        "rows' accepted cells, which those labels are not random within")
    esc_mask = np.zeros(len(ids), dtype=bool) if escalated_here is None else (
        pd.Index(pd.unique(np.asarray(escalated_here, dtype=object)), dtype=object)
        .get_indexer(ids) >= 0)
    refs = [find_judge(workspace, j, dataset=dataset) for j in judges]
    cal = [_judged(workspace, dataset, r, rule, ids, first if k == 0 else None)
           for k, r in enumerate(refs)]
    tgt = cal if same else [_judged(workspace, target_name, r, rule, t_ids) for r in refs]
    base = strata.assign(cal[0].outcome, cal[0].flipped, esc_mask)
    t_base = base if same else strata.assign(tgt[0].outcome, tgt[0].flipped, None)
    others = [load_judge_items(workspace, target_name if not same else dataset, j, rule=rule,
                               texts_for=()).verdict_map() for j in with_judges]
    cal_others = others if same else [
        load_judge_items(workspace, dataset, j, rule=rule, texts_for=()).verdict_map()
        for j in with_judges]
    decided = lab.human >= 0
    reaching_cal = np.ones(len(ids), dtype=bool)
    reaching_tgt = np.ones(len(t_ids), dtype=bool)
    stage_cal = np.full(len(ids), len(refs), dtype=np.int64)
    stage_tgt = np.full(len(t_ids), len(refs), dtype=np.int64)
    verdict_cal = np.full(len(ids), -1, dtype=np.int64)
    verdict_tgt = np.full(len(t_ids), -1, dtype=np.int64)
    stages: list[Stage] = []
    parts: dict[str, Any] = {"dataset": dataset, "target": target_name, "criterion": crit,
                             "alpha": alpha, "delta": delta, "p_value": p_value, "stages": [],
                             "one_threshold": one_threshold}
    for k, (ref, c, t) in enumerate(zip(refs, cal, tgt, strict=True)):
        used = tuple(signals) if signals else available_signals(
            c.signals, with_judges=bool(with_judges) and k == 0)
        extra = {"others": cal_others} if k == 0 and "judges" in used else {}
        score_cal = scores_of(c.signals, used, **extra)
        score_tgt = score_cal if same else scores_of(
            t.signals, used, **({"others": others} if extra else {}))
        codes, names = _stage_strata(mode or "pooled", k, ref.name, c.outcome, base,
                                     strata.counts.names)
        t_codes = codes if same else _stage_strata(mode or "pooled", k, ref.name, t.outcome,
                                                   t_base, strata.counts.names)[0]
        if mode is None:
            rule_k = _refused_rule(alpha, delta, p_value, len(ids), why)
        else:
            at = lab_at[decided]
            judged = (c.outcome[at] == OUTCOME_PASS) | (c.outcome[at] == OUTCOME_FAIL)
            use = reaching_cal[at] & judged
            wrong = (c.outcome[at] == OUTCOME_PASS) != (lab.human[decided] == 1)
            pop = np.where(reaching_cal, score_cal, np.nan)
            per = mode != "pooled"
            rule_k = learn_then_test(
                score_cal[at][use], wrong[use], population_score=pop, alpha=alpha,
                delta=delta, p_value=p_value, strata=codes[at][use] if per else None,
                population_strata=codes if per else None, strata_names=names,
            )  # fmt: skip
        take_cal = reaching_cal & rule_k.accepts(score_cal, codes)
        take_tgt = reaching_tgt & rule_k.accepts(score_tgt, t_codes)
        for take, stage_of, verdict_of, judged_k in ((take_cal, stage_cal, verdict_cal, c),
                                                     (take_tgt, stage_tgt, verdict_tgt, t)):
            stage_of[take] = k
            verdict_of[take] = np.where(judged_k.outcome[take] == OUTCOME_PASS, 1, 0)
        stages.append(Stage(
            judge=ref.name, config_id=ref.config_id, model=ref.model, stand_in=ref.stand_in,
            signals=used, rule=rule_k, reaching=int(reaching_tgt.sum()),
            accepted=int(take_tgt.sum()),
            cost=_cost(workspace, target_name, ref.config_id, ref.model, prices),
        ))  # fmt: skip
        parts["stages"].append({"config_id": ref.config_id, "signals": list(used),
                                "thresholds": _thresholds_json(rule_k)})
        reaching_cal &= ~take_cal
        reaching_tgt &= ~take_tgt
    estimate = _whole_run(stage_cal, base, lab_at, lab.human, stage_tgt, t_base, same=same,
                          stage_names=[s.judge for s in stages],
                          stratum_names=strata.counts.names,
                          stratum_outcomes=strata.counts.outcomes, store=store, target=target_name,
                          criterion=crit, rule_id=_rule_id(parts), t_ids=t_ids,
                          confidence=confidence, refused=why if mode is None else None)
    if first.stand_in or any(s.stand_in for s in stages):
        warnings.insert(0, "STAND-IN: a stage's verdicts come from a scripted stand-in, not a "
                           "model; these numbers test the plumbing, never a judge")
    words = ["pass" if v == 1 else "fail" if v == 0 else None for v in verdict_tgt.tolist()]
    return CascadeReport(
        dataset=dataset, target=target_name, criterion=crit, rule_id=_rule_id(parts),
        design=why, stages=tuple(stages), rows=len(t_ids),
        item_ids=tuple(str(i) for i in t_ids), stage_of_row=stage_tgt, verdict_of_row=tuple(
            words), pass_rate=estimate.pass_rate, expert=estimate.expert,
        warnings=tuple(warnings + list(estimate.warnings)),
    )  # fmt: skip


def _refused_rule(alpha: float, delta: float, p_value: str, rows: int,
                  reason: str) -> AcceptanceRule:
    return AcceptanceRule(alpha=alpha, delta=delta, p_value=p_value, thresholds=(None,),
                          strata=(), level=delta, rows=rows, accepted=0, accepted_share=0.0,
                          labelled=0, accepted_labelled=0, errors=0, error_estimate=None,
                          refused=True, reason=reason)  # fmt: skip


@dataclass(frozen=True)
class _WholeRun:
    pass_rate: PassRateEstimate | None
    expert: dict[str, Any]
    warnings: tuple[str, ...]


def _whole_run(
    stage_cal: npt.NDArray[np.int64], base: npt.NDArray[np.int64],
    lab_at: npt.NDArray[np.int64], human: npt.NDArray[np.int8],
    stage_tgt: npt.NDArray[np.int64], t_base: npt.NDArray[np.int64], *, same: bool,
    stage_names: list[str], stratum_names: tuple[str, ...], stratum_outcomes: tuple[int, ...],
    store: LabelStore, target: str, criterion: str,
    rule_id: str, t_ids: npt.NDArray[Any], confidence: float, refused: str | None,
) -> _WholeRun:
    """The whole run's pass rate over the cascade's cells, and the expert stage's numbers."""
    from judges.calibration import CalibrationInputError

    n_stages = len(stage_names)
    escalated = int((stage_tgt == n_stages).sum())
    expert: dict[str, Any] = {
        "escalated": escalated, "labels_per_1000": 1000.0 * escalated / max(len(t_ids), 1)}
    # Which escalated rows of the target already have an expert label (any label of the run).
    labels = store.current_labels(target, criterion=criterion)
    labelled_ids = set(labels["item_id"].astype(str))
    esc_ids = {str(i) for i, s in zip(t_ids, stage_tgt, strict=True) if s == n_stages}
    expert["labelled"] = len(esc_ids & labelled_ids)
    seconds = labels["seconds_spent"].dropna() if "seconds_spent" in labels else pd.Series()
    expert["median_seconds_per_label"] = float(seconds.median()) if len(seconds) else None
    if refused is not None:
        return _WholeRun(None, expert, (f"no whole-run pass rate: {refused}",))
    cal = cascade_cells(stage_cal, base, lab_at[lab_at >= 0], human[lab_at >= 0],
                        stage_names=stage_names, stratum_names=stratum_names,
                        stratum_outcomes=stratum_outcomes)
    if same:
        return _WholeRun(cascade_pass_rate(cal, confidence=confidence), expert, ())
    # Another run: the accepted cells' pass shares come from the calibration run's labels (a
    # transfer: rows drawn like the calibration rows, the assumption the rules' guarantee
    # needs too); the escalated cells' from the experts' labels on the target's escalated rows
    # (labels drawn under this cascade's escalation).
    prov = store.provenance_frame(target, criterion=criterion)
    mine = prov[(prov["selection"] == "escalated") & (prov["stratum"].astype(str) == rule_id)]
    t_human = (mine.groupby("item_id")["verdict"].agg(lambda v: _consensus(list(v)))
               if len(mine) else pd.Series(dtype=object))
    at = np.asarray(pd.Index(t_ids, dtype=object).get_indexer(
        t_human.index.to_numpy(dtype=object)), dtype=np.int64)
    codes = np.array([1 if v == "pass" else 0 if v == "fail" else -1 for v in t_human],
                     dtype=np.int8)
    keep = at >= 0
    tgt = cascade_cells(stage_tgt, t_base, at[keep], codes[keep], stage_names=stage_names,
                        stratum_names=stratum_names, stratum_outcomes=stratum_outcomes)
    by_name = dict(zip(cal.counts.names, range(cal.counts.k), strict=True))
    t = tgt.counts
    labelled, passed, unsure, moved = [], [], [], []
    for j, name in enumerate(t.names):
        if name.startswith("escalated"):
            labelled.append(t.labelled[j])
            passed.append(t.human_pass[j])
            unsure.append(t.human_unsure[j])
            moved.append(False)
        else:
            i = by_name.get(name)
            labelled.append(0 if i is None else cal.counts.labelled[i])
            passed.append(0 if i is None else cal.counts.human_pass[i])
            unsure.append(0 if i is None else cal.counts.human_unsure[i])
            moved.append(True)
    try:
        counts = StratumCounts(t.population, tuple(labelled), tuple(passed), tuple(unsure),
                               t.outcomes, t.names)
    except CalibrationInputError as error:
        return _WholeRun(None, expert, (f"no whole-run pass rate: {error}",))
    est = cascade_pass_rate(counts, confidence=confidence, transferred=moved)
    notes: tuple[str, ...] = ()
    if escalated and not expert["labelled"]:
        notes = (f"none of the {escalated} escalated rows of {target!r} has an expert label "
                 "drawn from this cascade's escalation yet: the interval bounds their pass "
                 "rate anywhere in [0, 1] (label them: the Label page's escalated order)",)
    return _WholeRun(est, expert, notes)


def _consensus(verdicts: list[str]) -> str:
    p, f = verdicts.count("pass"), verdicts.count("fail")
    return "pass" if p > f else "fail" if f > p else "unsure"


# --------------------------------------------------------------------------- outputs


def select_rule(
    workspace: Workspace,
    dataset: str,
    judge: str,
    *,
    alpha: float,
    delta: float = DEFAULT_DELTA,
    target: str | None = None,
    **options: Any,
) -> CascadeReport:
    """A one-stage cascade: the judge's certified acceptance rule on ``target`` (see above).

    ``options`` are :func:`cascade_report`'s (``criterion``, ``rule``, ``signals``,
    ``with_judges``, ``p_value``, ``prices``, ``confidence``, ``report``).
    """
    return cascade_report(workspace, dataset, [judge], alpha=alpha, delta=delta, target=target,
                          **options)


def card_selection(workspace: Workspace, report: JudgeReport, *, alpha: float,
                   delta: float = DEFAULT_DELTA, **options: Any) -> CardSelection:
    """The judge's certified acceptance rule on ``report``'s dataset, as a card records it."""
    cascade = select_rule(workspace, report.dataset, report.judge.config_id, alpha=alpha,
                          delta=delta, report=report, criterion=report.criterion,
                          rule=report.rule, **options)
    stage = cascade.stages[0]
    r = stage.rule
    table = evidence_strata(report.evidence, same_run=True).table
    return CardSelection(
        rule_id=cascade.rule_id, alpha=r.alpha, delta=r.delta, p_value=r.p_value,
        signals=list(stage.signals), thresholds=_thresholds_json(r), strata=list(r.strata),
        strata_table=table.tolist() if r.per_stratum else None, level=r.level,
        guarantee=r.guarantee, design=cascade.design, rows=r.rows, accepted=r.accepted,
        accepted_share=r.accepted_share, labelled=r.labelled,
        accepted_labelled=r.accepted_labelled, errors=r.errors,
        error_estimate=r.error_estimate, tests=[t.to_dict() for t in r.tests],
        refused=r.refused, reason=r.reason,
    )  # fmt: skip


def apply_selection(selection: CardSelection, calls: pd.DataFrame,
                    items: pd.DataFrame) -> dict[str, Any]:
    """A card's acceptance rule applied to new verdicts: what it accepts, and the error bound.

    Args:
        selection: The card's rule.
        calls: The verdicts' calls (``item_id``, ``verdict``, ``repeat``, ``order`` and
            ``reasoning`` when the file has it).
        items: Their aggregated verdicts (``item_id``, ``verdict``, ``flipped``).

    Returns:
        The ``selection`` entry of ``score``'s JSON: ``applied`` (and ``reason`` when not),
        ``rows``, ``accepted``, ``escalated``, ``accepted_share``, ``alpha``, ``delta``,
        ``error_bound`` (``alpha``: with probability ``1 - delta`` at most that share of the
        accepted verdicts is wrong), ``accepted_pass_rate`` (the judge's pass rate among the
        accepted rows, with the bounds the error allows), ``accepted_ids``.
    """
    from judges.calibration import judge_outcomes

    head: dict[str, Any] = {
        "rule_id": selection.rule_id, "alpha": selection.alpha, "delta": selection.delta,
        "error_bound": selection.alpha, "guarantee": selection.guarantee,
        "thresholds": dict(selection.thresholds), "signals": list(selection.signals),
        "rows": len(items),
    }
    signals = call_signals(calls, items)
    why = None
    if "judges" in selection.signals:
        why = ("the rule uses other judges' verdicts, which a verdicts file does not carry: "
               "apply it with calibrate judge select")
    elif "probability" in selection.signals and not np.isfinite(
            signals["pass_probability"].to_numpy(dtype=float)).any():
        why = ("the rule uses the judge's verdict probability (the p_yes in its reasoning), "
               "and these verdicts carry no reasoning with one: export them with calibrate "
               "verdicts export")
    if why is not None:
        return {**head, "applied": False, "reason": why, "accepted": None, "escalated": None,
                "accepted_share": None, "accepted_pass_rate": None, "accepted_ids": []}
    score = scores_of(signals, selection.signals)
    # By the strata's order, not the mapping's: a card file's keys are sorted.
    names = list(selection.strata) if selection.strata else list(selection.thresholds)
    values = [selection.thresholds.get(n) for n in names]
    if selection.strata_table is None:
        strata = np.zeros(len(items), dtype=np.int64)
    else:
        table = np.asarray(selection.strata_table, dtype=np.int64)
        outcome = judge_outcomes(items["verdict"].to_numpy(dtype=object)).astype(np.int64)
        flipped = items["flipped"].astype(object).fillna(False).astype(bool).to_numpy() \
            if "flipped" in items else np.zeros(len(items), dtype=bool)
        strata = table[outcome, flipped.astype(np.int64), 0]
    bar = np.array([np.inf if v is None else v for v in values] + [np.inf])
    cut = bar[np.where((strata >= 0) & (strata < len(values)), strata, -1)]
    accepted = np.isfinite(score) & (score >= cut)
    n_acc = int(accepted.sum())
    passed = int((signals["verdict"].to_numpy(dtype=object)[accepted] == "pass").sum())
    rate = None
    if n_acc:
        p = passed / n_acc
        a = selection.alpha
        # At most alpha of the accepted verdicts are wrong: each wrong pass lowers the true
        # pass share, each wrong fail raises it.
        rate = {"estimate": p, "low": max(0.0, p - min(p, a)), "high": min(1.0, p + min(1 - p,
                                                                                       a)),
                "n": n_acc, "reason": None}
    return {**head, "applied": True, "reason": None, "accepted": n_acc,
            "escalated": len(items) - n_acc,
            "accepted_share": n_acc / len(items) if len(items) else 0.0,
            "accepted_pass_rate": rate,
            "accepted_ids": signals["item_id"].to_numpy(dtype=object)[accepted].tolist()}


def write_accepted(cascade: CascadeReport, path: str | Path) -> Path:
    """Write ``id,verdict`` of the accepted rows (CSV, JSONL or Parquet by extension)."""
    frame = cascade.accepted()
    columns = ["id", "verdict"] + (["stage"] if len(cascade.stages) > 1 else [])
    return write_table(frame[columns], path)


def escalate(store: LabelStore, cascade: CascadeReport, *,
             set_queue: bool = True) -> Escalation:
    """Record the escalated rows as the target's escalated Label-queue order.

    With ``set_queue`` the queue of (target, criterion) switches to the escalated order
    (seed and overlap kept), for everyone labelling it.
    """
    escalation = store.save_escalation(cascade.target, cascade.criterion, cascade.rule_id,
                                       cascade.escalated_ids,
                                       judge=cascade.stages[0].config_id)
    if set_queue:
        current = store.queue_settings(cascade.target, cascade.criterion)
        store.save_queue_settings(cascade.target, cascade.criterion, QueueSettings(
            order="escalated", seed=current.seed, overlap=current.overlap))
    return escalation


__all__ = [
    "DEFAULT_DELTA", "SIGNALS", "CascadeReport", "Stage", "apply_selection",
    "available_signals", "call_signals", "card_selection", "cascade_report", "escalate",
    "scores_of", "select_rule", "write_accepted",
]
