"""``calibrate judge run --batch``: the run through the provider's batch API, with its status."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from calibrate_app.cli._context import AppContext
    from judges.config import JudgeConfig
    from judges.run_plan import CostEstimate
    from judges.runner import RunSummary


def batch_cost_line(model: str, estimate: CostEstimate | None) -> str | None:
    """The estimate online vs batch, for a model whose provider has a batch API."""
    from judges.batch import describe_batch_cost, has_batch_api

    if estimate is None or not has_batch_api(model):
        return None
    return "  " + describe_batch_cost(estimate)


def run_batch(config: JudgeConfig, dataset: str, *, poll_interval: float,
              **options: Any) -> RunSummary:
    """:func:`judges.batch.run_judge_batch`, echoing its estimate and each status to stderr."""
    from judges.batch import BatchPolling, run_judge_batch

    shown = False

    def progress(done: int, total: int, summary: RunSummary) -> None:
        nonlocal shown
        if not shown and summary.estimate is not None:
            shown = True
            click.echo(f"{config.label} on {dataset!r} (batch): "
                       f"{summary.estimate.describe()}", err=True)
            line = batch_cost_line(config.model, summary.estimate)
            if line:
                click.echo(line, err=True)
        elif shown:
            click.echo(f"{done}/{total} calls done", err=True)

    def status(text: str) -> None:
        click.echo(text, err=True)

    return run_judge_batch(config, dataset, on_progress=progress, on_status=status,
                           polling=BatchPolling(interval=poll_interval), **options)


def list_batches(app: AppContext, *, open_only: bool, as_json: bool) -> None:
    """``calibrate judge batches``: every stored submission, or the open ones."""
    from dataclasses import asdict

    from calibrate_app.cli._context import echo_json
    from judges.stores.batch_store import OPEN_STATES

    batches = app.read_workspace.batches.batches(states=OPEN_STATES if open_only else None)
    if as_json:
        echo_json([asdict(b) for b in batches])
        return
    if not batches:
        click.echo("No open batches." if open_only else
                   "No batches yet. Send a run through a provider's batch API with: "
                   "calibrate judge run NAME --dataset D --batch")
        return
    for b in batches:
        counts = ", ".join(f"{k} {v}" for k, v in (b.counts or {}).items())
        click.echo(f"{b.batch_id or '(not confirmed)'}  {b.provider}  {b.state:<10} "
                   f"{b.calls} calls  {b.status or '-'}" + (f" ({counts})" if counts else "")
                   + f"  run {b.run_id}")
