"""``calibrate judge run --batch``: the run through the provider's batch API, with its status."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from calibrate_app.cli._context import AppContext
    from judges.config import JudgeConfig
    from judges.workflows.judging import CostEstimate, RunSummary
    from judges.workspace import Workspace


def batch_cost_line(model: str, estimate: CostEstimate | None) -> str | None:
    """The estimate online vs batch, for a model whose provider has a batch API."""
    from judges.workflows.judging import batch_cost

    line = batch_cost(model, estimate)
    return None if line is None else "  " + line


def run_batch(workspace: Workspace, config: JudgeConfig, dataset: str, *, poll_interval: float,
              **options: Any) -> RunSummary:
    """The run through the batch API, echoing its estimate and each status to stderr."""
    from judges.workflows.judging import run

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

    return run(workspace, config, dataset, batch=True, on_progress=progress, on_status=status,
               poll_interval=poll_interval, **options)


def list_batches(app: AppContext, *, open_only: bool, as_json: bool) -> None:
    """``calibrate judge batches``: every stored submission, or the open ones."""
    from dataclasses import asdict

    from calibrate_app.cli._context import echo_json
    from judges.workflows.judging import batches as stored_batches

    batches = stored_batches(app.read_workspace, open_only=open_only)
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
