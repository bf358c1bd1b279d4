"""The tuning side of the split: dev rows, and where a judge revision disagrees with the experts.

Everything a person or a proposer model sees while tuning comes from here, and here only dev
rows are read: :func:`dev_disagreements` takes the split first and drops every test row before
it looks at a label, a note or a verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from judges.config import JudgeConfig
from judges.reporting.inputs import load_human_labels, load_judge_items
from labels.errors import NotFoundError
from labels.splits import SplitSummary
from labels.stores.label_store import LabelStore

if TYPE_CHECKING:
    from judges.workspace import Workspace

DECIDED = ("pass", "fail")


@dataclass(frozen=True)
class Disagreement:
    """A dev row where the judge's verdict differs from the experts' consensus.

    Attributes:
        item_id: The row.
        human: The experts' consensus (``pass`` or ``fail``).
        judge: The judge's aggregated verdict (``pass`` or ``fail``).
        note: The experts' notes (``name: note`` lines), possibly empty.
        failure_tags: Failure tags the experts attached.
        reasoning: The judge's reasoning on the row, when it gave one.
    """

    item_id: str
    human: str
    judge: str
    note: str
    failure_tags: tuple[str, ...]
    reasoning: str | None

    def describe(self) -> str:
        """``lab-003: experts fail, judge pass [tags] — note`` (plain text, one line)."""
        tags = f" [{', '.join(self.failure_tags)}]" if self.failure_tags else ""
        note = f" — {' / '.join(self.note.splitlines())}" if self.note else ""
        return f"{self.item_id}: experts {self.human}, judge {self.judge}{tags}{note}"


@dataclass(frozen=True)
class DevView:
    """What tuning may look at: the dev rows and the judge's disagreements on them.

    Attributes:
        split: The dev/test split the view respects.
        config_id: The judge revision.
        n_dev: Labelled dev rows.
        n_compared: Dev rows where both the experts and the judge gave pass or fail.
        disagreements: The rows where they differ.
        human: Dev row → experts' consensus verdict (every dev row).
    """

    split: SplitSummary
    config_id: str
    n_dev: int
    n_compared: int
    disagreements: tuple[Disagreement, ...]
    human: dict[str, str]


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return [value] if value else []
    if value is None:
        return []
    return [str(t) for t in list(value)]


def _tags_by_item(labels: pd.DataFrame, keep: set[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    if labels.empty or "failure_tags" not in labels:
        return {}
    for item_id, tags in zip(labels["item_id"].astype(str), labels["failure_tags"], strict=True):
        if item_id in keep:
            bucket = out.setdefault(item_id, [])
            bucket.extend(t for t in _tags(tags) if t not in bucket)
    return {k: tuple(v) for k, v in out.items()}


def human_verdicts(store: LabelStore, dataset: str, criterion: str,
                   item_ids: set[str]) -> tuple[dict[str, str], dict[str, str], pd.DataFrame]:
    """Experts' consensus verdict and notes of ``item_ids`` (and their current labels)."""
    human = load_human_labels(store, dataset, criterion)
    items = human.items[human.items["item_id"].astype(str).isin(item_ids)]
    verdicts = dict(zip(items["item_id"].astype(str), items["verdict"].astype(str), strict=True))
    notes = dict(zip(items["item_id"].astype(str), items["note"].astype(str), strict=True))
    labels = human.labels[human.labels["item_id"].astype(str).isin(item_ids)]
    return verdicts, notes, labels


def judge_item_verdicts(workspace: Workspace, dataset: str, config_id: str,
                        item_ids: set[str]) -> tuple[dict[str, str], dict[str, str | None]]:
    """The judge's aggregated verdict (and reasoning) per item of ``item_ids`` it has judged."""
    try:
        judged = load_judge_items(workspace, dataset, config_id, texts_for=item_ids)
    except NotFoundError:
        return {}, {}
    items = judged.items[judged.items["item_id"].astype(str).isin(item_ids)]
    verdicts = dict(zip(items["item_id"].astype(str), items["verdict"].astype(str), strict=True))
    reasoning = {
        str(i): (r if isinstance(r, str) and r else None)
        for i, r in zip(items["item_id"], items["reasoning"], strict=True)
    }
    return verdicts, reasoning


def dev_disagreements(workspace: Workspace, dataset: str, config: JudgeConfig) -> DevView:
    """The dev rows of ``dataset`` for ``config``'s criterion and where the judge disagrees.

    Test rows are dropped before anything else is read, so no test row's label, note or
    verdict can reach a tuning view or a proposer prompt.

    Args:
        workspace: The open database (its labels, splits and judge verdicts).
        dataset: Dataset name.
        config: The judge revision (its verdicts must be stored; rows it has not judged are
            simply not compared).

    Returns:
        A :class:`DevView`.
    """
    store = workspace.labels
    split = workspace.splits.ensure(dataset, config.criterion)
    dev = set(split.ids("dev"))
    human, notes, labels = human_verdicts(store, dataset, config.criterion, dev)
    judge, reasoning = judge_item_verdicts(workspace, dataset, config.config_id, dev)
    tags = _tags_by_item(labels, dev)
    compared = [i for i in sorted(dev)
                if human.get(i) in DECIDED and judge.get(i) in DECIDED]
    rows = tuple(
        Disagreement(i, human[i], judge[i], notes.get(i, ""), tags.get(i, ()), reasoning.get(i))
        for i in compared if human[i] != judge[i]
    )
    assert dev.isdisjoint(split.ids("test"))
    assert all(d.item_id in dev for d in rows)
    return DevView(split, config.config_id, len(dev), len(compared), rows, human)


__all__ = ["DevView", "Disagreement", "dev_disagreements", "human_verdicts",
           "judge_item_verdicts"]
