"""The judge that abstains, once for ``calibrate judge select | cascade`` and the app.

:func:`cascade` certifies an acceptance rule per stage (one stage: ``judge select``), writes
the accepted rows and sends the rest to the Label queue's escalated order; :func:`select` is
the Calibration page's one-judge rule on the report it shows, :func:`escalate` its button and
:func:`escalation_sent` whether the button has been used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judges.pricing import load_prices
from judges.selective import CascadeReport, cascade_report, select_rule, write_accepted
from judges.selective import escalate as record_escalation

if TYPE_CHECKING:
    from judges.reporting import JudgeReport
    from judges.workspace import Workspace
    from labels.stores.queue_store import Escalation


@dataclass(frozen=True)
class CascadeOutcome:
    """What :func:`cascade` did.

    Attributes:
        cascade: The certified cascade.
        data: Its stable JSON (``--json``), with ``accepted_file`` when the accepted rows were
            written and ``escalation`` when the rest were sent to the Label queue.
    """

    cascade: CascadeReport
    data: dict[str, Any]


def cascade(
    workspace: Workspace, dataset: str, judges: list[str], *, alpha: float, delta: float,
    target: str | None = None, signals: tuple[str, ...] = (), rule: str | None = None,
    p_value: str = "binomial", one_threshold: bool = False,
    with_judges: list[str] | None = None, prices_file: str | None = None,
    output: str | Path | None = None, escalate: bool = False,
) -> CascadeOutcome:
    """Certify each stage's acceptance rule on the labels of ``dataset`` and apply it.

    Args:
        workspace: The open database.
        dataset: Dataset with human labels.
        judges: The stages, cheapest first (one: ``judge select``).
        alpha: The error rate among accepted verdicts to guarantee.
        delta: The chance the guarantee may fail (per stage).
        target: The run to settle (default: ``dataset``).
        signals: Signals of the judge's confidence (default: the judge's own).
        rule: How repeated / swapped calls combine (default: each judge's).
        p_value: ``binomial`` or ``hoeffding_bentkus`` (``-`` read as ``_``).
        one_threshold: One threshold for every row instead of one per judge verdict.
        with_judges: Other judges whose agreement is a signal (``judge select --with``).
        prices_file: Price table for calls that logged tokens but no cost.
        output: Write ``id,verdict`` of the accepted rows here.
        escalate: Record the rest and switch the target's Label queue to escalated order.
    """
    # ``judge select`` passes its --with judges, ``judge cascade`` its price table.
    extra: dict[str, Any] = ({"with_judges": with_judges} if with_judges is not None else
                             {"prices": load_prices(prices_file) if prices_file else None})
    report = cascade_report(workspace, dataset, judges, alpha=alpha, delta=delta,
                            target=target, signals=signals or None, rule=rule,
                            p_value=p_value.replace("-", "_"), one_threshold=one_threshold,
                            **extra)
    data = report.to_json()
    if output is not None:
        data["accepted_file"] = str(write_accepted(report, output))
    if escalate:
        escalation = record_escalation(workspace.labels, report)
        data["escalation"] = {"rule": escalation.rule, "rows": len(escalation.item_ids),
                              "queue_order": "escalated"}
    return CascadeOutcome(report, data)


def select(workspace: Workspace, report: JudgeReport, *, alpha: float,
           delta: float) -> CascadeReport:
    """The judge's certified acceptance rule on ``report``'s target, from its labelled rows."""
    target = report.target if report.target != report.dataset else None
    return select_rule(workspace, report.dataset, report.judge.config_id, alpha=alpha,
                       delta=delta, target=target, report=report, criterion=report.criterion,
                       rule=report.rule)


def escalate(workspace: Workspace, cascade: CascadeReport) -> Escalation:
    """Send ``cascade``'s escalated rows to the target's Label queue (escalated order)."""
    return record_escalation(workspace.labels, cascade)


def escalation_sent(workspace: Workspace, cascade: CascadeReport) -> bool:
    """Whether ``cascade``'s escalated rows are the target's Label queue already."""
    store = workspace.labels
    current = store.escalation(cascade.target, cascade.criterion)
    queue = store.queue_settings(cascade.target, cascade.criterion)
    return current is not None and current.rule == cascade.rule_id and queue.order == "escalated"


__all__ = ["CascadeOutcome", "CascadeReport", "cascade", "escalate", "escalation_sent",
           "select"]
