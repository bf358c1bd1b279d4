"""Evaluate a proposed revision against the current one on the same held-out test rows.

Both revisions are run on the dev and the test rows (stored calls are not paid for again).
The result gives, on **test** rows, each revision's sensitivity and specificity (Wilson) and
Cohen's kappa (small-n-safe interval), the exact McNemar test of the candidate against the
current revision on the same test rows, and the certification rule of the Calibration page
(:func:`judges.calibration.trust_verdict`) applied to test rows only. Dev numbers are shown
beside them for orientation: they were tuned on, so they flatter.

Every evaluation on test is counted in the alignment store. Once :data:`TEST_REUSE_LIMIT`
revisions have been evaluated on the same test rows the result warns: choosing the best of
several revisions by their test numbers makes those numbers optimistic; label a fresh test set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from judges.alignment.dev import human_verdicts, judge_item_verdicts
from judges.calibration import (
    Estimate,
    JudgeRates,
    McNemarResult,
    judge_rates,
    kappa_interval,
    mcnemar_test,
)
from judges.calibration.trust import CertificationRule, TrustVerdict, trust_verdict
from judges.calls import CallPolicy
from judges.config import JudgeConfig
from judges.providers import Provider
from judges.runner import RunSummary, run_judge
from judges.stores.alignment_store import TEST_REUSE_LIMIT, optimism_warning
from labels.errors import CalibrateError

if TYPE_CHECKING:
    from judges.workspace import Workspace

ProviderFactory = Callable[[JudgeConfig], Provider]


@dataclass(frozen=True)
class SplitNumbers:
    """One revision's agreement with the experts on one side of the split.

    Attributes:
        split: ``dev`` or ``test``.
        n_rows: Labelled rows on this side.
        n_used: Rows where the experts and the judge both gave pass or fail.
        rates: Sensitivity, specificity (Wilson intervals) and the rest.
        kappa: Cohen's kappa with its interval.
    """

    split: str
    n_rows: int
    n_used: int
    rates: JudgeRates
    kappa: Estimate

    def line(self) -> str:
        """``sensitivity 0.800 [0.584, 0.919] (n=20), specificity …, kappa …``."""
        return (f"sensitivity {fmt(self.rates.sensitivity)}, specificity "
                f"{fmt(self.rates.specificity)}, kappa {fmt(self.kappa)}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers."""
        return {"split": self.split, "n_rows": self.n_rows, "n_used": self.n_used,
                "sensitivity": self.rates.sensitivity.to_dict(),
                "specificity": self.rates.specificity.to_dict(), "kappa": self.kappa.to_dict()}


def fmt(e: Estimate) -> str:
    """``0.800 [0.584, 0.919] (n=20)``, or the refusal's reason."""
    if e.estimate is None or e.low is None or e.high is None:
        return f"— ({e.reason or 'not computed'}; n={e.n})"
    return f"{e.estimate:.3f} [{e.low:.3f}, {e.high:.3f}] (n={e.n})"


@dataclass(frozen=True)
class AlignmentResult:
    """Current vs candidate revision on the same dev and test rows.

    Attributes:
        dataset: Dataset name.
        criterion: Criterion.
        current: The revision in use.
        candidate: The proposed revision.
        numbers: ``{(revision, split): SplitNumbers}`` with revision ``current``/``candidate``.
        mcnemar: Exact McNemar test, candidate (A) vs current (B), on the test rows.
        certification: The rule applied to the candidate's test numbers.
        certification_current: The same for the current revision.
        test_evaluations: Evaluations on these test rows so far (this one included).
        test_revisions: Distinct revisions evaluated on them so far.
        warning: The optimism warning, once :data:`TEST_REUSE_LIMIT` is reached.
        runs: The judge runs' summaries (current, candidate).
    """

    dataset: str
    criterion: str
    current: JudgeConfig
    candidate: JudgeConfig
    numbers: dict[tuple[str, str], SplitNumbers]
    mcnemar: McNemarResult
    certification: TrustVerdict
    certification_current: TrustVerdict
    test_evaluations: int
    test_revisions: int
    warning: str | None
    runs: tuple[RunSummary, ...] = field(default=(), repr=False)

    def describe(self) -> list[str]:
        """Plain-text lines, as ``calibrate judge align`` prints them."""
        m = self.mcnemar
        test = self.numbers[("current", "test")]
        lines = [f"Test rows of {self.dataset}/{self.criterion} ({test.n_rows} labelled, "
                 "held out while tuning):"]
        for who, config in (("current", self.current), ("candidate", self.candidate)):
            nums = self.numbers[(who, "test")]
            lines.append(f"  {who:<9} {config.label}: {nums.line()}")
        if m.refused:
            lines.append(f"  McNemar (candidate vs current, same test rows): refused — {m.reason}")
        else:
            lines.append(
                f"  McNemar exact (candidate vs current, {m.n} test rows): candidate right "
                f"only {m.n_a_only}, current right only {m.n_b_only}, p = {m.pvalue:.4f}; "
                f"accuracy difference {fmt(m.difference)}")
        lines.append("  certification on test rows (candidate): "
                     f"{self.certification.certification}")
        lines.append(f"  certification on test rows (current):   "
                     f"{self.certification_current.certification}")
        lines.append("Dev rows (tuned on, so optimistic):")
        for who in ("current", "candidate"):
            lines.append(f"  {who:<9} {self.numbers[(who, 'dev')].line()}")
        lines.append(f"Test set used {self.test_evaluations} times by {self.test_revisions} "
                     "revisions.")
        if self.warning:
            lines.append(f"WARNING: {self.warning}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "dataset": self.dataset, "criterion": self.criterion,
            "current": {"label": self.current.label, "config_id": self.current.config_id},
            "candidate": {"label": self.candidate.label, "config_id": self.candidate.config_id},
            "numbers": {f"{w}/{s}": n.to_dict() for (w, s), n in self.numbers.items()},
            "mcnemar": self.mcnemar.to_dict(),
            "certification": self.certification.to_dict(),
            "certification_current": self.certification_current.to_dict(),
            "test_evaluations": self.test_evaluations, "test_revisions": self.test_revisions,
            "warning": self.warning,
        }


def split_numbers(split: str, ids: list[str], human: dict[str, str],
                  judge: dict[str, str]) -> SplitNumbers:
    """Rates and kappa of one revision on ``ids`` (human and judge verdicts by item)."""
    h = [human.get(i, "unsure") for i in ids]
    j = [judge.get(i, "unscored") for i in ids]
    rates = judge_rates(h, j)
    return SplitNumbers(split, len(ids), rates.confusion.n, rates, kappa_interval(h, j))


def evaluate_revisions(
    workspace: Workspace, dataset: str, current: JudgeConfig, candidate: JudgeConfig, *,
    provider_for: ProviderFactory | None = None, rule: CertificationRule | None = None,
    concurrency: int = 8, policy: CallPolicy | None = None, context: str = "align",
) -> AlignmentResult:
    """Run both revisions on the dev and test rows and compare them on test.

    Args:
        workspace: The open database (labels, splits, judge runs, test-set use).
        dataset: Dataset name.
        current: The revision in use.
        candidate: The proposed revision (same criterion).
        provider_for: Provider of each config (default: from its ``model`` and the settings).
        rule: The certification rule (default: lower bounds of sensitivity and specificity
            ≥ 0.80).
        concurrency: Calls in flight per run.
        policy: Timeout and retries per call.
        context: Recorded with the test-set use (``align``, ``app``).

    Returns:
        An :class:`AlignmentResult` (the test-set use is recorded before it is returned).
    """
    if candidate.criterion != current.criterion:
        raise CalibrateError(f"{candidate.label} judges {candidate.criterion!r} but "
                             f"{current.label} judges {current.criterion!r}: compare revisions "
                             "of one criterion")
    store = workspace.labels
    split = workspace.splits.ensure(dataset, current.criterion)
    dev, test = split.ids("dev"), split.ids("test")
    runs = tuple(
        run_judge(config, dataset, workspace=workspace,
                  provider=provider_for(config) if provider_for else None,
                  item_ids=dev + test, concurrency=concurrency, policy=policy)
        for config in (current, candidate)
    )
    align_store = workspace.alignment
    for config in (current, candidate):
        align_store.record_test_evaluation(dataset, current.criterion, config.config_id,
                                           n_rows=len(test), context=context)
    evaluations, revisions = align_store.test_usage(dataset, current.criterion)
    human, _, _ = human_verdicts(store, dataset, current.criterion, set(dev + test))
    numbers: dict[tuple[str, str], SplitNumbers] = {}
    verdicts: dict[str, dict[str, str]] = {}
    for who, config in (("current", current), ("candidate", candidate)):
        verdicts[who], _ = judge_item_verdicts(workspace, dataset, config.config_id,
                                               set(dev + test))
        for side, ids in (("dev", dev), ("test", test)):
            numbers[(who, side)] = split_numbers(side, ids, human, verdicts[who])
    mcnemar = mcnemar_test([human.get(i, "unsure") for i in test],
                           [verdicts["candidate"].get(i, "unscored") for i in test],
                           [verdicts["current"].get(i, "unscored") for i in test])

    def certify(who: str) -> TrustVerdict:
        nums = numbers[(who, "test")]
        return trust_verdict(nums.rates.sensitivity, nums.rates.specificity,
                             kappa=nums.kappa, rule=rule)

    return AlignmentResult(
        dataset=dataset, criterion=current.criterion, current=current, candidate=candidate,
        numbers=numbers, mcnemar=mcnemar, certification=certify("candidate"),
        certification_current=certify("current"), test_evaluations=evaluations,
        test_revisions=revisions, warning=optimism_warning(revisions), runs=runs,
    )


__all__ = ["TEST_REUSE_LIMIT", "AlignmentResult", "SplitNumbers", "evaluate_revisions", "fmt",
           "optimism_warning", "split_numbers"]
