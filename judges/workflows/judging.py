"""Judges and their runs: find a config, list them, plan, try, run (online or batch), browse.

The types these functions take and return (:class:`RunSummary`, :class:`CallPolicy`,
:class:`CostEstimate`, :class:`NoLabelledRowsError`, :class:`RenderedPrompt`,
:class:`RenderError`, :class:`ModelChoice`) are importable from here, so a front end needs no
other module of the run's machinery; a try's :class:`judges.trial.Trial` loads the statistics,
so :mod:`judges.trial` is imported only by the try (``calibrate judge list`` stays light).

One workflow for ``calibrate judge list|show|run|runs|batches`` and the Judges page (its config
picker, "Save as…", the estimate, "Try on N rows", the background run and the results). A run
stores every call, so running again resumes it; a try stores nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from judges.calls import CallPolicy
from judges.config import (
    CONFIG_SUFFIXES,
    JudgeConfig,
    builtin_names,
    config_from_text,
    load_builtin,
    resolve_config,
)
from judges.prompts import Order, RenderedPrompt, RenderError
from judges.providers.choices import ModelChoice, model_choices
from judges.run_plan import CostEstimate, NoLabelledRowsError
from judges.runner import RunSummary
from judges.verdicts import swap_flips
from labels.errors import NotFoundError, did_you_mean

if TYPE_CHECKING:
    import pandas as pd

    from judges.providers import Provider
    from judges.run_plan import RunPlan
    from judges.settings import Settings
    from judges.stores.batch_store import StoredBatch
    from judges.stores.judge_store import RunRecord
    from judges.trial import Trial
    from judges.workspace import Workspace


# -- configs -------------------------------------------------------------------------------


def find_config(name: str, workspace: Workspace | None, *,
                locate: Callable[[str], str] = str) -> JudgeConfig:
    """A built-in name, a config file, or a config stored in the database (name or id).

    Args:
        name: What the user typed.
        workspace: The database to look in last; ``None`` when there is none yet.
        locate: Turns a config file's name into the path to read (the CLI's follows the
            working directory of the command line that sent it).

    Raises:
        NotFoundError: none of them (the message lists what there is), or an external judge,
            which has no config to run.
    """
    from judges.verdicts import resolve_judge

    looks_like_file = name.lower().endswith(CONFIG_SUFFIXES) or "/" in name or "\\" in name
    try:
        return resolve_config(locate(name) if looks_like_file else name)
    except NotFoundError:
        if workspace is None:
            raise
        judge_store = workspace.judges
        try:
            config_id = resolve_judge(judge_store, name)
        except NotFoundError:
            stored_names = [c.name for c in judge_store.configs()]
            raise NotFoundError(
                f"no judge {name!r}: not a built-in ({', '.join(builtin_names())}), not a "
                "config file (.yaml/.yml/.json), and not stored in this database"
                + did_you_mean(name, [*builtin_names(), *stored_names])
            ) from None
        stored = judge_store.stored_config(config_id)
        if stored.config is None:
            raise NotFoundError(
                f"{name!r} is an external judge (imported verdicts); it has no config to run"
            ) from None
        return stored.config


def judge_rows(workspace: Workspace | None) -> list[dict[str, Any]]:
    """The built-in judges, then the configs stored in ``workspace`` (``None``: none yet).

    One dict per judge: name, revision, source (``built-in`` or where a stored one came
    from), kind, criterion, model, config_id and description.
    """
    rows: list[dict[str, Any]] = []
    for name in builtin_names():
        config = load_builtin(name)
        rows.append({
            "name": name, "revision": config.revision, "source": "built-in",
            "kind": config.kind, "criterion": config.criterion, "model": config.model,
            "config_id": config.config_id, "description": config.description,
        })
    if workspace is not None:
        builtin_ids = {r["config_id"] for r in rows}
        for stored in workspace.judges.configs():
            if stored.config_id in builtin_ids:
                continue
            rows.append({
                "name": stored.name, "revision": stored.revision, "source": stored.origin,
                "kind": stored.kind, "criterion": stored.criterion, "model": stored.model,
                "config_id": stored.config_id,
                "description": stored.config.description if stored.config else "",
            })
    return rows


def config_choices(workspace: Workspace) -> dict[str, JudgeConfig]:
    """Label → config: the built-ins, then every saved revision (newest first)."""
    choices: dict[str, JudgeConfig] = {}
    for name in builtin_names():
        config = load_builtin(name)
        choices[f"{name} (built-in)"] = config
    for stored in workspace.judges.configs():
        if stored.config is not None and stored.config not in choices.values():
            choices[f"{stored.name} r{stored.revision} ({stored.config_id[:11]})"] = stored.config
    return choices


def saved_config_ids(workspace: Workspace) -> set[str]:
    """The ids of every config stored in the database."""
    return {c.config_id for c in workspace.judges.configs()}


def as_revision(workspace: Workspace, edited: JudgeConfig, base: JudgeConfig,
                name: str | None = None) -> JudgeConfig:
    """Give the edited config its name and revision number (nothing is stored).

    Args:
        workspace: Where the saved revisions are looked up.
        edited: The config as edited.
        base: The config the edits started from.
        name: The name to save it under (default: the edited config's own).

    Returns:
        The saved revision with the same content under ``name`` (whatever revision the YAML
        says), or the edited config named ``name`` and numbered the next free revision of that
        name (after ``base``'s when the name is ``base``'s).

    Raises:
        ConfigError: ``name`` is no valid config name.
    """
    name = name or edited.name
    if name != edited.name:
        edited = config_from_text(edited.model_copy(update={"name": name}).to_yaml(),
                                  source="the name")
    same_name = [c.config for c in workspace.judges.configs(name=name) if c.config]
    content = edited.model_dump(mode="json", exclude={"revision"})
    for saved in same_name:
        if saved.model_dump(mode="json", exclude={"revision"}) == content:
            return saved
    floor = [base.revision, edited.revision - 1] if name == base.name else [0]
    revision = max([*floor, *(c.revision for c in same_name)]) + 1
    return config_from_text(edited.model_copy(update={"revision": revision}).to_yaml())


def save_config(workspace: Workspace, config: JudgeConfig) -> bool:
    """Store ``config`` as a revision; ``False`` when it was stored already (nothing new)."""
    if config.config_id in saved_config_ids(workspace):
        return False
    workspace.judges.save_config(config)
    return True


def models(settings: Settings, *, current: str | None = None) -> list[ModelChoice]:
    """The models a picker offers (providers with a key set, local servers, the stand-in).

    ``current`` (the config's model) comes first; keys are never read, only whether one is set
    (:func:`judges.providers.choices.model_choices`).
    """
    return model_choices(settings, current=current)


def render_row(workspace: Workspace, config: JudgeConfig, dataset: str, item_id: str,
               order: Order = "original") -> RenderedPrompt:
    """The prompt ``config`` sends for one row of ``dataset``, in ``order`` (nothing is sent).

    Raises:
        RenderError: the row lacks a variable the template uses.
    """
    from judges.prompts import render

    return render(config, workspace.labels.item(dataset, item_id), order)


# -- plans, tries and runs -----------------------------------------------------------------


def plan(workspace: Workspace, config: JudgeConfig, dataset: str, **options: Any) -> RunPlan:
    """Plan a run without sending anything: its calls, the cached ones, the estimate.

    ``options`` are :func:`judges.run_plan.plan_run`'s (repeats, swap, labelled_only, limit,
    ...); calls already stored for ``config`` count as cached.
    """
    from judges.run_plan import plan_run

    return plan_run(workspace, config, dataset, judge_store=workspace.judges, **options)


def has_batch_api(model: str) -> bool:
    """Whether ``model``'s provider has a batch API (half price, results within 24 h)."""
    from judges.batch import has_batch_api as has_api

    return has_api(model)


def batch_cost(model: str, estimate: CostEstimate | None, **options: Any) -> str | None:
    """The estimate online vs through the batch API, for a model whose provider has one.

    ``options`` are :func:`judges.batch.describe_batch_cost`'s (``prices_hint``).
    """
    from judges.batch import describe_batch_cost

    if estimate is None or not has_batch_api(model):
        return None
    return describe_batch_cost(estimate, **options)


def trial_rows(workspace: Workspace, dataset: str, config: JudgeConfig, n: int, *,
               exclude: set[str]) -> list[str]:
    """Up to ``n`` expert-labelled rows to try ``config`` on (:func:`judges.trial.trial_rows`)."""
    from judges.trial import trial_rows as pick

    return pick(workspace.labels, dataset, config, n, exclude=exclude)


def try_config(workspace: Workspace, config: JudgeConfig, dataset: str, item_ids: list[str], *,
               provider: Provider, policy: CallPolicy | None = None) -> Trial:
    """Judge ``item_ids`` in memory beside the experts' verdicts; nothing is stored."""
    from judges.trial import try_judge

    return try_judge(config, dataset, item_ids, workspace=workspace, provider=provider,
                     policy=policy)


def run(workspace: Workspace, config: JudgeConfig, dataset: str, *, batch: bool = False,
        concurrency: int = 8, poll_interval: float | None = None,
        calls_per_batch: int | None = None, on_status: Callable[[str], None] | None = None,
        **options: Any) -> RunSummary:
    """Run ``config`` over ``dataset``: online, or through the provider's batch API.

    Args:
        workspace: The open database (calls are stored as they come).
        config: The judge.
        dataset: The dataset.
        batch: Send the calls through the provider's batch API (:mod:`judges.batch`).
        concurrency: Calls in flight at once (online only).
        poll_interval: With ``batch``: first seconds between polls (default the runner's).
        calls_per_batch: With ``batch``: most calls per batch (default the provider's limit).
        on_status: With ``batch``: each status line of the batch service.
        options: The runner's other keyword arguments (provider, settings, repeats, swap,
            item_ids, labelled_only, limit, policy, dry_run, prices, on_progress,
            should_stop).
    """
    if batch:
        from judges.batch import BatchPolling, run_judge_batch

        if poll_interval is not None:
            options["polling"] = BatchPolling(interval=poll_interval)
        return run_judge_batch(config, dataset, workspace=workspace, on_status=on_status,
                               calls_per_batch=calls_per_batch, **options)
    from judges.runner import run_judge

    return run_judge(config, dataset, workspace=workspace, concurrency=concurrency, **options)


def runs(workspace: Workspace, *, dataset: str | None = None, judge: str | None = None,
         config_id: str | None = None) -> list[RunRecord]:
    """Judge runs, newest first (a run that died reads ``interrupted``)."""
    return workspace.judges.runs(dataset=dataset, name=judge, config_id=config_id)


def run_providers(workspace: Workspace, dataset: str, config: JudgeConfig) -> list[str]:
    """The providers the runs of ``config`` on ``dataset`` used (a run may override the model)."""
    return [str(r.options.get("provider") or "")
            for r in runs(workspace, dataset=dataset, config_id=config.config_id)]


def batches(workspace: Workspace, *, open_only: bool = False) -> list[StoredBatch]:
    """The provider batches of ``--batch`` runs, oldest first (``open_only``: not collected)."""
    from judges.stores.batch_store import OPEN_STATES

    return workspace.batches.batches(states=OPEN_STATES if open_only else None)


# -- results -------------------------------------------------------------------------------


def verdicts(workspace: Workspace, dataset: str, judge: str) -> pd.DataFrame:
    """One judge's verdicts on ``dataset`` (:func:`judges.verdicts.judge_verdicts`)."""
    from judges.verdicts import judge_verdicts

    return judge_verdicts(workspace, dataset, judge)


def calls(workspace: Workspace, dataset: str, judge: str) -> pd.DataFrame:
    """Every stored call of a judge on ``dataset``'s items, all columns (for browsing)."""
    from judges.verdicts import calls_for_dataset

    return calls_for_dataset(workspace, dataset, judge)


__all__ = ["CallPolicy", "CostEstimate", "ModelChoice", "NoLabelledRowsError",
           "Order", "RenderError", "RenderedPrompt", "RunSummary", "as_revision",
           "batch_cost", "batches", "calls", "config_choices", "find_config", "has_batch_api",
           "judge_rows", "models", "plan", "render_row", "run", "run_providers", "runs",
           "save_config", "saved_config_ids", "swap_flips", "trial_rows", "try_config",
           "verdicts"]
