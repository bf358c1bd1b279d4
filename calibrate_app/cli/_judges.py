"""Commands for judges: configs and runs (``judge``) and verdict files (``verdicts``).

``judges list|show|validate`` was a group of its own until issue 26 made one ``judge`` group;
``judges`` stays as a hidden alias that says so on stderr, so that scripts keep working.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from calibrate_app.cli._context import AppContext, LazyChoice, pass_app, pass_app_and_json
from calibrate_app.cli._paths import ClientPath, client_file

if TYPE_CHECKING:
    from judges.config import JudgeConfig
    from judges.workflows.judging import RunSummary
    from judges.workspace import Workspace

EXIT_FAILED_CALLS = 1
EXIT_CANCELLED = 130


def _row_formats() -> tuple[str, ...]:
    from labels.names import ROW_FORMATS

    return ROW_FORMATS


def _stored_configs(app: AppContext) -> Workspace | None:
    """The database, when its file already exists (listing never creates one)."""
    if not Path(app.settings.db_path).exists():
        return None
    return app.read_workspace


def _find_config(app: AppContext, name: str) -> JudgeConfig:
    """A built-in name, a config file, or a config stored in the database (name or id)."""
    from judges.workflows.judging import find_config

    # A config file follows the CLI's working directory when the app runs the command.
    return find_config(name, _stored_configs(app), locate=client_file)


@click.group("judge")
def judge_group() -> None:
    """Judges: their configs (built-in or your own YAML/JSON), runs over a dataset, tuning."""


@judge_group.command("list")
@pass_app_and_json()
def judge_list(app: AppContext, as_json: bool) -> None:
    """List the built-in judges and the configs stored in the database."""
    from calibrate_app.cli._context import echo_json
    from judges.workflows.judging import judge_rows

    rows = judge_rows(_stored_configs(app))
    if as_json:
        echo_json(rows)
        return
    click.echo(f"{'name':<22} {'rev':>3} {'source':<9} {'kind':<9} {'criterion':<13} "
               f"{'model':<30} id")
    for r in rows:
        click.echo(f"{r['name']:<22} {r['revision']:>3} {r['source']:<9} {r['kind']:<9} "
                   f"{r['criterion']:<13} {r['model']:<30} {r['config_id']}")
        if r["description"]:
            click.echo(f"    {r['description']}")


@judge_group.command("show")
@click.argument("name")
@pass_app_and_json("the config")
def judge_show(app: AppContext, name: str, as_json: bool) -> None:
    """Print a judge config (built-in name, file, or stored name/id) with its id."""
    from calibrate_app.cli._context import echo_json

    config = _find_config(app, name)
    if as_json:
        echo_json({"config_id": config.config_id, "config": config.model_dump(mode="json")})
        return
    click.echo(f"# {config.label}\n# id: {config.config_id}")
    click.echo(config.to_yaml(), nl=False)


@judge_group.command("validate")
@click.argument("file", type=ClientPath(dir_okay=False))
def judge_validate(file: str) -> None:
    """Check a judge config FILE: unknown keys, labels, template variables. Prints its id."""
    from judges.config import load_config

    config = load_config(file)
    click.echo(f"{file}: valid — {config.label}, id {config.config_id}")


def _cancel_event() -> threading.Event:
    """The app's cancel event when this command runs inside the app, else a fresh one."""
    from calibrate_app.cancel import current_cancel_event

    return current_cancel_event() or threading.Event()


def _install_sigint(stop: threading.Event) -> Any:
    """First Ctrl+C: finish the calls in flight, store them, stop. Second: abort at once."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        click.echo("\nStopping: finishing the calls in flight (Ctrl+C again to abort).",
                   err=True)

    return signal.signal(signal.SIGINT, handler)


@judge_group.command("run")
@click.argument("config_name", metavar="CONFIG")
@click.option("--dataset", required=True, help="Dataset to judge.")
@click.option("--repeats", type=click.IntRange(1, 50), default=None,
              help="Samples per item and order (default: the config's).")
@click.option("--swap/--no-swap", default=None,
              help="Also judge the swapped order (pairwise: A/B exchanged; pointwise: sources "
              "reversed). Default: the config's.")
@click.option("--concurrency", type=click.IntRange(1, 512), default=8, show_default=True,
              help="Calls in flight at once.")
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first K items.")
@click.option("--labelled-only", is_flag=True,
              help="Only items with a human label for the judge's criterion.")
@click.option("--dry-run", is_flag=True,
              help="Print the call count and cost estimate; send nothing.")
@click.option("--model", default=None,
              help="Use another provider/model (a new config id), e.g. scripted/demo.")
@click.option("--timeout", type=click.FloatRange(0.1), default=60.0, show_default=True,
              help="Seconds per attempt.")
@click.option("--max-retries", type=click.IntRange(0, 20), default=4, show_default=True,
              help="Retries per call for rate limits, 5xx, timeouts and resets.")
@click.option("--prices", "prices_file", type=ClientPath(dir_okay=False), default=None,
              help="Price table YAML/JSON: {provider/model: {input: USD/Mtok, output: USD/Mtok}}.")
@click.option("--model-path", type=ClientPath(dir_okay=False), default=None,
              help="GGUF file for a local/<name> judge, served in-process by llama.cpp "
              "(default: CALIBRATE_LOCAL_MODEL_PATH; needs "
              "pip install 'llm-judge-calibrate[local]').")
@click.option("--batch", is_flag=True,
              help="Send the calls through the provider's batch API (Anthropic, OpenAI): half "
              "price, results within 24 h. Each batch is recorded before it is sent; run the "
              "same command again to collect batches after an interruption.")
@click.option("--poll-interval", type=click.FloatRange(0.01), default=5.0, show_default=True,
              help="With --batch: first seconds between polls (x1.5 while nothing changes, "
              "up to 60 s).")
@click.option("--calls-per-batch", type=click.IntRange(1), default=None,
              help="With --batch: most calls per batch (default: the provider's limit, "
              "100,000 on Anthropic, 50,000 on OpenAI).")
@pass_app_and_json("the summary")
def judge_run(
    app: AppContext, config_name: str, dataset: str, repeats: int | None, swap: bool | None,
    concurrency: int, limit: int | None, labelled_only: bool, dry_run: bool,
    model: str | None, timeout: float, max_retries: int, prices_file: str | None,
    model_path: str | None, batch: bool, poll_interval: float, calls_per_batch: int | None,
    as_json: bool,
) -> None:
    """Run judge CONFIG (a built-in name or a config file) over a dataset.

    Calls already stored for this config are not paid for again, so running the same command
    after an interruption resumes it. Ctrl+C stops after the calls in flight are stored.
    Exit code 1 when some calls failed after their retries (run again to retry them), 130
    when stopped.
    """
    from calibrate_app.cli._batch import batch_cost_line, run_batch
    from calibrate_app.cli._context import echo_json
    from judges.config import parse_config
    from judges.pricing import load_prices
    from judges.providers import get_provider
    from judges.workflows import judging

    config = _find_config(app, config_name)
    if model is not None:
        config = parse_config({**config.model_dump(mode="json"), "model": model},
                              source=f"{config_name} with --model {model}")
    prices = load_prices(prices_file) if prices_file else None
    settings = app.settings
    if model_path is not None:
        settings = settings.model_copy(update={"local_model_path": Path(model_path)})
    provider = None if dry_run else get_provider(config.model, settings=settings)
    if provider is not None and provider.note:
        click.echo(provider.note, err=True)
    workspace = app.workspace
    stop = _cancel_event()
    bar: Any = None
    previous = None if dry_run else _install_sigint(stop)

    def progress(done: int, total: int, summary: RunSummary) -> None:
        nonlocal bar
        if bar is None:
            left = total - summary.cached
            estimate = summary.estimate.describe() if summary.estimate else ""
            click.echo(f"{config.label} on {dataset!r}: {estimate}", err=True)
            bar = click.progressbar(length=max(left, 1), label="judging",
                                    file=sys.stderr, show_pos=True)
            bar.__enter__()
        else:
            bar.update(1)

    options: dict[str, Any] = {
        "provider": provider, "settings": settings, "repeats": repeats,
        "swap": swap, "limit": limit, "labelled_only": labelled_only, "dry_run": dry_run,
        "prices": prices, "should_stop": stop,
        "policy": judging.CallPolicy(timeout=timeout, max_retries=max_retries),
    }
    try:
        if batch:
            summary = run_batch(workspace, config, dataset, poll_interval=poll_interval,
                                calls_per_batch=calls_per_batch, **options)
        else:
            summary = judging.run(workspace, config, dataset, concurrency=concurrency,
                                  on_progress=progress, **options)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if as_json:
        echo_json(summary.to_dict())
    elif dry_run:
        assert summary.estimate is not None  # plan_run always estimates
        click.echo(f"Dry run of {config.label} on {dataset!r}: {summary.estimate.describe()}")
        line = batch_cost_line(config.model, summary.estimate)
        if line:
            click.echo(line)
    else:
        click.echo(summary.describe())
    if summary.status == "cancelled":
        click.echo("Stopped. Run the same command again to resume.", err=True)
        sys.exit(EXIT_CANCELLED)
    if summary.failed:
        click.echo(
            f"{summary.failed} calls failed after their retries; run the same command again "
            "to retry them.", err=True,
        )
        sys.exit(EXIT_FAILED_CALLS)


@judge_group.command("batches")
@click.option("--open", "open_only", is_flag=True,
              help="Only batches not yet collected (still at the provider).")
@pass_app_and_json()
def judge_batches(app: AppContext, open_only: bool, as_json: bool) -> None:
    """List the provider batches of --batch runs, oldest first, with their last status."""
    from calibrate_app.cli._batch import list_batches

    list_batches(app, open_only=open_only, as_json=as_json)


@judge_group.command("runs")
@click.option("--dataset", default=None, help="Only runs on this dataset.")
@click.option("--judge", default=None, help="Only runs of this judge name.")
@pass_app_and_json()
def judge_runs(app: AppContext, dataset: str | None, judge: str | None, as_json: bool) -> None:
    """List judge runs, newest first (a run that died reads 'interrupted')."""
    from calibrate_app.cli._context import echo_json
    from judges.workflows.judging import runs as stored_runs

    runs = stored_runs(app.read_workspace, dataset=dataset, judge=judge)
    if as_json:
        echo_json([{
            "run_id": r.run_id, "judge": r.name, "revision": r.revision,
            "config_id": r.config_id, "dataset": r.dataset, "origin": r.origin,
            "status": r.status, "planned": r.planned, "started_at": r.started_at,
            "finished_at": r.finished_at, "summary": r.summary,
        } for r in runs])
        return
    if not runs:
        click.echo("No judge runs yet. Start one with: calibrate judge run NAME --dataset D")
        return
    for r in runs:
        s = r.summary or {}
        counts = (f"{s.get('cached', 0)} cached, {s.get('scored', 0)} scored, "
                  f"{s.get('unscored', 0)} unscored, {s.get('failed', 0)} failed")
        click.echo(f"{r.run_id}  {r.name} r{r.revision}  {r.dataset}  {r.status:<11} "
                   f"{r.planned} planned: {counts}")


@click.group("verdicts")
def verdicts_group() -> None:
    """Judge verdicts as files: import verdicts made elsewhere, export a judge's verdicts."""


@verdicts_group.command("import")
@click.argument("file", type=ClientPath(dir_okay=False))
@click.option("--dataset", required=True, help="Dataset the verdicts belong to.")
@click.option("--judge", default=None,
              help="Name for the external judge (e.g. gpt4o-2025); with --config, the config's "
                   "name (the default).")
@click.option("--config", "config_file", default=None,
              help="The judge config (YAML/JSON file, built-in name, or a config stored in this "
                   "database) that made the verdicts: they are stored under it, so the Calibration "
                   "page and the judge card carry its prompt and parameters.")
@click.option("--criterion", default=None,
              help="What the verdicts judge (default: the config's, else faithfulness, or "
                   "preference if pairwise).")
@click.option("--map", "mapping", multiple=True, metavar="FIELD=COLUMN",
              help="Map a column or a path into nested records onto a field (id, verdict, "
                   "score, repeat, order, reasoning), e.g. --map verdict=gradingResult.pass, "
                   "--map score=faithfulness.")
@click.option("--records", default=None, metavar="PATH",
              help="For a JSON file whose top level is an object: the path of its list of "
                   "records, e.g. --records results.results.")
@click.option("--pass-if", "pass_if", default=None, metavar="RULE",
              help="Read scores, not verdicts: a score meeting RULE passes, the rest fail, "
                   "e.g. --pass-if '>=0.5' (the rule is stored with the external judge).")
@click.option("--unsure-if", "unsure_if", default=None, metavar="RULE",
              help="With --pass-if: scores meeting RULE are unsure (checked first), e.g. "
                   "--unsure-if '<0.6'.")
@click.option("--metric", default=None,
              help="In a tool's file (promptfoo, inspect, deepeval, ragas, langfuse, "
                   "langsmith, phoenix): the metric to "
                   "import, when it holds several (the judge is then named TOOL-METRIC).")
@click.option("--format", "file_format", type=LazyChoice(_row_formats), default=None,
              help="File format, or the tool that wrote the file; default from the "
                   "extension and the file's shape.")
@pass_app_and_json("the summary")
def verdicts_import(
    app: AppContext, file: str, dataset: str, judge: str | None, config_file: str | None,
    criterion: str | None, mapping: tuple[str, ...], records: str | None,
    pass_if: str | None, unsure_if: str | None, metric: str | None, file_format: str | None,
    as_json: bool,
) -> None:
    """Import verdicts from FILE: columns id, verdict, and optional repeat, order, reasoning.

    Verdicts: pass/fail/unsure (or 1/0, true/false), a/b/tie for pairwise datasets; an empty
    cell or 'unscored' is an unscored row. Scores instead: --map score=COLUMN --pass-if
    '>=0.5'. A file without ids (a ragas results file) finds each row's item by its content.
    A tool's results file (promptfoo, inspect log JSON, DeepEval test run, ragas results) is
    read by its shape, without --map. All or nothing; re-importing adds nothing. Give --judge
    (an external judge without a config) or --config (or both, naming the same judge); a
    tool's file names its own judge.
    """
    from calibrate_app.cli._context import echo_json
    from judges.workflows import importing

    config = None if config_file is None else _find_config(app, config_file)
    try:
        summary = importing.import_verdicts(app.workspace, file, dataset=dataset, judge=judge,
                                            criterion=criterion, config=config,
                                            mapping=importing.verdict_mapping(mapping),
                                            records=records, pass_if=pass_if,
                                            unsure_if=unsure_if, metric=metric,
                                            format=file_format)
    except importing.JudgeNotNamedError:
        raise click.UsageError("give --judge NAME or --config FILE") from None
    if as_json:
        echo_json(summary.__dict__)
        return
    click.echo(
        f"{summary.path}: {summary.rows_read} verdicts read, {summary.added} added "
        f"({summary.unscored} unscored), {summary.unchanged} already stored "
        f"(judge {summary.judge!r}, {summary.config_id})"
    )


@verdicts_group.command("export")
@click.option("--dataset", required=True)
@click.option("--judge", required=True, help="Judge name (latest revision run) or config id.")
@click.option("-o", "--output", required=True, type=ClientPath(dir_okay=False),
              help="Output file: .csv, .parquet or .jsonl.")
@pass_app
def verdicts_export(app: AppContext, dataset: str, judge: str, output: str) -> None:
    """Export a judge's verdicts on a dataset: one row per item, repeat and order."""
    from judges.workflows.importing import export_verdicts

    path = export_verdicts(app.read_workspace, dataset, judge, output)
    click.echo(f"verdicts written to {path}")


class DeprecatedAlias(click.Group):
    """A hidden old group name whose commands live on under another group.

    The commands are the same objects as under the new name, so options and behaviour cannot
    drift apart; running one prints a one-line notice on stderr (stdout stays the command's, so
    ``--json`` output is unchanged).
    """

    def __init__(self, name: str, new_name: str, commands: dict[str, click.Command]) -> None:
        """Name the alias, the group that replaced it, and the commands it still answers to."""
        super().__init__(name, commands=commands, hidden=True,
                         help=f"Deprecated: use `calibrate {new_name}`.")
        self.new_name = new_name

    def invoke(self, ctx: click.Context) -> Any:
        """Say once what to type instead, then run the command as the new group would."""
        click.echo(f"`calibrate {self.name}` is deprecated: use `calibrate {self.new_name}` "
                   "(same commands and options).", err=True)
        return super().invoke(ctx)


JUDGES_ALIAS = DeprecatedAlias("judges", "judge", {
    name: judge_group.commands[name] for name in ("list", "show", "validate")
})


def register(cli: click.Group) -> None:
    """Add these commands to the top-level group."""
    cli.add_command(judge_group)
    cli.add_command(JUDGES_ALIAS)
    cli.add_command(verdicts_group)
