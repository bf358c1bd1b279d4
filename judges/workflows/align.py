"""The alignment cycle, once for ``calibrate judge split | align | adopt | stress`` and the app.

Tune a judge on dev rows, prove it on test rows: :func:`split` shows (making it the first time)
the dev/test split and how often its test rows were used; :func:`dev_disagreements` the dev
rows where a revision disagrees with the experts; :func:`propose` runs the current revision,
asks a proposer model for a revision from the dev disagreements and runs both on the same rows;
:func:`adopt` makes a proposal the current revision (only ever explicitly); :func:`stress` runs
the perturbation tests. The Judges page's panel and the CLI commands call these and only show
what they return.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judges.alignment import dev as _dev
from judges.alignment.dev import DevView
from judges.alignment.evaluate import AlignmentResult, evaluate_revisions
from judges.alignment.propose import Proposal, propose_revision
from judges.alignment.stress import TESTS as STRESS_TESTS
from judges.alignment.stress import StressResult, run_stress
from judges.calibration.trust import CertificationRule
from judges.config import JudgeConfig, parse_config
from judges.providers import ProviderConfigError, get_provider
from judges.runner import run_judge
from judges.stores.alignment_store import StoredProposal, optimism_warning
from judges.stores.judge_store import StoredConfig
from labels.errors import CalibrateError
from labels.splits import SplitSummary

if TYPE_CHECKING:
    from judges.settings import Settings
    from judges.workspace import Workspace

Progress = Callable[[int, str], None]
"""Told each step of :func:`propose` (0 to :data:`PROPOSE_STEPS`) and what it is doing."""

PROPOSE_STEPS = 3


@dataclass(frozen=True)
class SplitView:
    """A dataset's dev/test split and the use of its test rows so far.

    Attributes:
        split: The split (its seed, share and rows).
        evaluations: Evaluations on the test rows.
        revisions: Distinct judge revisions evaluated on them.
        warning: The optimism warning once too many revisions have seen them, else ``None``.
    """

    split: SplitSummary
    evaluations: int
    revisions: int
    warning: str | None


@dataclass(frozen=True)
class AlignOutcome:
    """What :func:`propose` returns: the proposal and both revisions' numbers."""

    proposal: Proposal
    result: AlignmentResult


@dataclass(frozen=True)
class Adoption:
    """An adopted proposal: its record and the revision it made current."""

    proposal: StoredProposal
    config: StoredConfig


def with_model(config: JudgeConfig, model: str | None, name: str) -> JudgeConfig:
    """``config`` judging with ``model`` instead (a new config id); ``config`` when ``None``."""
    if model is None:
        return config
    return parse_config({**config.model_dump(mode="json"), "model": model},
                        source=f"{name} with --model {model}")


def current_revision(workspace: Workspace, config: JudgeConfig, dataset: str) -> JudgeConfig:
    """The revision adopted last for ``config``'s name on ``dataset``, else ``config``."""
    adopted = workspace.alignment.adopted(dataset, config.criterion, config.name)
    if adopted is None:
        return config
    stored = workspace.judges.stored_config(adopted).config
    return stored if stored is not None else config


def split(workspace: Workspace, dataset: str, criterion: str, *, seed: int | None = None,
          test_share: float | None = None) -> SplitView:
    """The split of ``dataset``/``criterion`` (made the first time) and its test-set use.

    Raises:
        labels.errors.CalibrateError: a derived (perturbed) dataset, which has no split.
    """
    summary = workspace.splits.ensure(dataset, criterion, seed=seed, test_share=test_share)
    evaluations, revisions = workspace.alignment.test_usage(dataset, criterion)
    return SplitView(summary, evaluations, revisions, optimism_warning(revisions))


def held_out_ids(workspace: Workspace, dataset: str, criterion: str) -> set[str]:
    """The test rows of ``dataset``/``criterion``: none for a dataset without a split."""
    try:
        return set(workspace.splits.ensure(dataset, criterion).ids("test"))
    except CalibrateError:  # a derived (perturbed) dataset has no split
        return set()


def dev_disagreements(workspace: Workspace, dataset: str, config: JudgeConfig) -> DevView:
    """The dev rows and where ``config`` disagrees with the experts on them (never test rows)."""
    return _dev.dev_disagreements(workspace, dataset, config)


def provider_problem(*specs: str, settings: Settings | None = None) -> str | None:
    """Why one of the ``provider/model`` specs cannot be used (a missing key...), else ``None``."""
    try:
        for spec in specs:
            get_provider(spec, settings=settings)
    except ProviderConfigError as error:
        return str(error)
    return None


def propose(
    workspace: Workspace, dataset: str, base: JudgeConfig, *, proposer: str,
    settings: Settings | None = None, min_sensitivity: float | None = None,
    min_specificity: float | None = None, concurrency: int = 8, context: str = "align",
    progress: Progress | None = None,
) -> AlignOutcome:
    """Run ``base`` on the dev and test rows, ask ``proposer`` for a revision, compare both.

    Nothing is adopted (see :func:`adopt`).

    Args:
        workspace: The open database.
        dataset: Dataset with labelled rows.
        base: The current revision.
        proposer: ``provider/model`` that writes the revision.
        settings: Keys and base URLs of the providers.
        min_sensitivity: Certification bar on test rows (default 0.80).
        min_specificity: Certification bar on test rows (default 0.80).
        concurrency: Calls in flight per run.
        context: Recorded with the test-set use (``align``, ``app``).
        progress: Told each step (see :data:`Progress`).
    """
    def step(done: int, message: str) -> None:
        if progress is not None:
            progress(done, message)

    rule = None
    if min_sensitivity is not None or min_specificity is not None:
        rule = CertificationRule(0.80 if min_sensitivity is None else min_sensitivity,
                                 0.80 if min_specificity is None else min_specificity)
    summary = workspace.splits.ensure(dataset, base.criterion)
    step(0, "running the current revision on dev and test rows")
    run_judge(base, dataset, workspace=workspace,
              provider=get_provider(base.model, settings=settings),
              item_ids=summary.ids("dev") + summary.ids("test"), concurrency=concurrency)
    step(1, "asking the proposer")
    proposal = propose_revision(workspace, dataset, base,
                                proposer=get_provider(proposer, settings=settings))
    step(2, "running the proposal on dev and test rows")
    result = evaluate_revisions(
        workspace, dataset, base, proposal.config, context=context,
        provider_for=lambda c: get_provider(c.model, settings=settings),
        rule=rule, concurrency=concurrency,
    )
    step(PROPOSE_STEPS, "done")
    return AlignOutcome(proposal, result)


def adopted(workspace: Workspace, dataset: str, criterion: str, name: str) -> str | None:
    """The config id adopted last for judge ``name`` on ``dataset``/``criterion``."""
    return workspace.alignment.adopted(dataset, criterion, name)


def adopt(workspace: Workspace, proposal_id: str) -> Adoption:
    """Adopt the proposal ``proposal_id``: later proposals start from its revision.

    Raises:
        labels.errors.NotFoundError: no such proposal.
    """
    proposal = workspace.alignment.proposal(proposal_id)
    stored = workspace.judges.stored_config(proposal.config_id)
    workspace.alignment.adopt(proposal.dataset, proposal.criterion, stored.name,
                              proposal.config_id, proposal_id)
    return Adoption(proposal, stored)


def stress(
    workspace: Workspace, dataset: str, config: JudgeConfig, *, settings: Settings | None = None,
    tests: tuple[str, ...] = (), limit: int | None = None, concurrency: int = 8,
) -> StressResult:
    """Run the perturbation tests ``tests`` (default: all of :data:`STRESS_TESTS`)."""
    return run_stress(workspace, dataset, config,
                      provider=get_provider(config.model, settings=settings),
                      tests=tests or tuple(STRESS_TESTS), limit=limit, concurrency=concurrency)


__all__ = [
    "PROPOSE_STEPS",
    "STRESS_TESTS",
    "Adoption",
    "AlignOutcome",
    "JudgeConfig",
    "Progress",
    "SplitView",
    "adopt",
    "adopted",
    "current_revision",
    "dev_disagreements",
    "held_out_ids",
    "propose",
    "provider_problem",
    "split",
    "stress",
    "with_model",
]
