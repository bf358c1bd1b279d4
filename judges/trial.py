"""Try a judge config on a few labelled rows without storing anything.

:func:`trial_rows` picks up to N rows with a decided expert verdict (alternating between the
expert verdicts, in file order, so a short trial sees both passes and fails); :func:`try_judge`
judges them in memory (:func:`judges.runner.judge_in_memory`: the same calls a run makes) and
sets each row's verdict beside the experts'. No config, run, call or verdict row is written,
so the trial changes no report, card or default judge; it is a look, not a measurement.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import pandas as pd

from judges.aggregation import aggregate_calls, rule_for
from judges.calibration import Estimate, wilson_interval
from judges.calls import CallPolicy, StopFlag
from judges.config import JudgeConfig
from judges.providers import Provider, is_stand_in
from judges.reporting.inputs import load_human_labels
from judges.run_plan import plan_run
from judges.runner import judge_in_memory
from judges.stores.judge_store import item_hash
from judges.workspace import Workspace
from labels.errors import CalibrateError
from labels.stores.label_store import LabelStore

DECIDED = {"pointwise": ("pass", "fail"), "pairwise": ("a", "b", "tie")}
"""The verdicts a trial compares, per judge kind (``unsure`` is no verdict to agree with)."""

MAX_TRIAL_ROWS = 50
"""Most rows a trial judges: a look at a few rows, not a run (runs are stored and resumable)."""


@dataclass(frozen=True)
class TrialRow:
    """One tried row.

    Attributes:
        item_id: The row.
        expert: The experts' consensus verdict.
        judge: The judge's verdict on the row (its calls combined by the config's rule), or
            ``unscored`` when no call gave one.
        agrees: Whether ``judge`` is ``expert``.
        reasoning: The judge's reasoning (first scored call), if any.
        problem: Why no verdict: the unscored reason or the error of a failed call.
    """

    item_id: str
    expert: str
    judge: str
    agrees: bool
    reasoning: str | None
    problem: str | None


@dataclass(frozen=True)
class Trial:
    """What a trial found; nothing of it is stored.

    Attributes:
        config: The config tried (as edited; it may be saved nowhere).
        dataset: The dataset the rows come from.
        model: ``provider/model`` the calls went to.
        rows: One per tried row, in the order tried.
        calls: Calls made (rows × repeats × orders).
        failed: Calls without a reply after their retries.
        agreement: Rows where the judge's verdict is the experts', among the rows where the
            judge gave one (:func:`~judges.calibration.wilson_interval`).
    """

    config: JudgeConfig
    dataset: str
    model: str
    rows: tuple[TrialRow, ...]
    calls: int
    failed: int
    agreement: Estimate

    @property
    def stand_in(self) -> bool:
        """Whether the calls went to the scripted stand-in (no model)."""
        return is_stand_in(self.model)

    @property
    def n_agree(self) -> int:
        """Rows where the judge's verdict is the experts'."""
        return sum(r.agrees for r in self.rows)

    @property
    def n_judged(self) -> int:
        """Rows where the judge gave a verdict it can agree with (not unscored or unsure)."""
        return self.agreement.n

    def describe(self) -> str:
        """One line: ``k of n rows agree with the experts (…)``, and the rows left out."""
        n, k = self.n_judged, self.n_agree
        line = f"{k} of {n} rows agree with the experts"
        if n and self.agreement.low is not None and self.agreement.high is not None:
            line += (f" (agreement {k / n:.2f}, 95% interval {self.agreement.low:.2f}–"
                     f"{self.agreement.high:.2f}, Wilson, n = {n})")
        left_out = len(self.rows) - n
        if left_out:
            line += f"; {left_out} of {len(self.rows)} rows got no verdict to compare"
        if self.failed:
            line += f"; {self.failed} of {self.calls} calls failed"
        return line


def expert_verdicts(store: LabelStore, dataset: str, config: JudgeConfig) -> dict[str, str]:
    """Row → the experts' verdict for ``config.criterion``.

    Pointwise: the calibration report's consensus (majority of pass/fail, else ``unsure``;
    :func:`~judges.reporting.inputs.load_human_labels`). Pairwise: the most common vote (a, b or
    tie), ``unsure`` when two votes are equally common (the report compares each vote; a
    trial shows one verdict per row).
    """
    if config.kind == "pointwise":
        human = load_human_labels(store, dataset, config.criterion).items
        return {str(i): str(v) for i, v in zip(human["item_id"], human["verdict"], strict=True)}
    labels = store.current_labels(dataset, criterion=config.criterion)
    out: dict[str, str] = {}
    for item_id, votes in labels.groupby("item_id")["verdict"]:
        counts = votes.astype(str).value_counts()
        top = counts[counts == counts.max()]
        out[str(item_id)] = str(top.index[0]) if len(top) == 1 else "unsure"
    return out


def trial_rows(store: LabelStore, dataset: str, config: JudgeConfig, n: int, *,
               exclude: Collection[str] = ()) -> list[str]:
    """Up to ``n`` rows of ``dataset`` with a decided expert verdict for ``config.criterion``.

    The rows alternate between the expert verdicts (pass, fail, pass, …; each verdict's rows
    in file order), so a short trial sees both kinds. ``exclude`` (the held-out test rows)
    is never chosen.

    Raises:
        CalibrateError: ``n`` is not in 1..:data:`MAX_TRIAL_ROWS`, or no row qualifies.
    """
    if not 1 <= n <= MAX_TRIAL_ROWS:
        raise CalibrateError(f"a trial judges 1 to {MAX_TRIAL_ROWS} rows, not {n}")
    decided = DECIDED[config.kind]
    verdict = {i: v for i, v in expert_verdicts(store, dataset, config).items()
               if v in decided and i not in exclude}
    queues = {v: [i for i in store.item_ids(dataset) if verdict.get(i) == v] for v in decided}
    chosen: list[str] = []
    while len(chosen) < n and any(queues.values()):
        for queue in queues.values():
            if queue and len(chosen) < n:
                chosen.append(queue.pop(0))
    if not chosen:
        raise CalibrateError(
            f"dataset {dataset!r} has no rows the experts labelled {' or '.join(decided)} "
            f"for criterion {config.criterion!r}" + (" outside the test rows" if exclude else "")
            + "; label some on the Label page first"
        )
    return chosen


def try_judge(config: JudgeConfig, dataset: str, item_ids: Sequence[str], *,
              workspace: Workspace, provider: Provider, policy: CallPolicy | None = None,
              concurrency: int = 4, should_stop: StopFlag | None = None) -> Trial:
    """Judge ``item_ids`` with ``config`` in memory and compare with the experts' verdicts.

    Every call is made (no stored reply is reused) and nothing is written: no config, run,
    call or verdict row.

    Args:
        config: The judge, as edited (saved or not).
        dataset: The dataset holding the rows.
        item_ids: The rows (see :func:`trial_rows`); each needs an expert verdict.
        workspace: The open database (read only).
        provider: Where the calls go (its spec is the trial's model).
        policy: Timeout and retries of each call.
        concurrency: Calls in flight at once.
        should_stop: Once set, no new call starts (rows not judged read ``unscored``).

    Returns:
        A :class:`Trial`.
    """
    if not item_ids:
        raise CalibrateError("a trial needs at least one row")
    store = workspace.labels
    expert = expert_verdicts(store, dataset, config)
    missing = [i for i in item_ids if i not in expert]
    if missing:
        raise CalibrateError(f"row {missing[0]!r} has no expert verdict for criterion "
                             f"{config.criterion!r}")
    plan = plan_run(workspace, config, dataset, item_ids=item_ids, model=provider.spec)
    records = judge_in_memory(plan, provider, policy=policy, concurrency=concurrency,
                              should_stop=should_stop)
    # Rows with the same content share their calls (the plan makes each call once).
    by_hash: dict[str, list[dict[str, object]]] = {}
    for record in records:
        by_hash.setdefault(record.item_hash, []).append({
            "verdict": record.verdict if record.status == "scored" else None,
            "order": record.ordering, "repeat": record.repeat, "reasoning": record.reasoning,
            "unscored_reason": record.unscored_reason or record.error_kind or record.error,
        })
    items = store.items(dataset, item_ids=list(item_ids))
    hashes = {i.item_id: item_hash(i) for i in items}
    frame = pd.DataFrame([{"item_id": i, **call} for i in item_ids
                          for call in by_hash.get(hashes[i], [])])
    per_item, _ = aggregate_calls(frame, rule=rule_for(config), kind=config.kind)
    judged = per_item.set_index("item_id") if not per_item.empty else per_item
    decided = DECIDED[config.kind]
    rows = []
    for item_id in item_ids:
        found = item_id in judged.index
        verdict = str(judged.at[item_id, "verdict"]) if found else "unscored"
        rows.append(TrialRow(
            item_id=item_id, expert=expert[item_id], judge=verdict,
            agrees=verdict == expert[item_id],
            reasoning=_text(judged.at[item_id, "reasoning"]) if found else None,
            problem=_text(judged.at[item_id, "unscored_reason"]) if found else "not run",
        ))
    n_judged = sum(r.judge in decided for r in rows)
    return Trial(
        config=config, dataset=dataset, model=provider.spec, rows=tuple(rows),
        calls=len(records), failed=sum(r.status == "failed" for r in records),
        agreement=wilson_interval(sum(r.agrees for r in rows), n_judged),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


__all__ = ["DECIDED", "MAX_TRIAL_ROWS", "Trial", "TrialRow", "expert_verdicts", "trial_rows",
           "try_judge"]
