"""Commands for rows and human labels: import, datasets, labels import/export."""

from __future__ import annotations

import click

from calibrate_app.cli._context import AppContext, LazyChoice, pass_app, pass_app_and_json
from calibrate_app.cli._paths import ClientPath
from labels.names import DEFAULT_CRITERION


def _row_formats() -> tuple[str, ...]:
    from labels.names import ROW_FORMATS

    return ROW_FORMATS


@click.command("import")
@click.argument("file", type=ClientPath(dir_okay=False))
@click.option("--dataset", required=True, help="Dataset to import into (created if new).")
@click.option(
    "--format",
    "file_format",
    type=LazyChoice(_row_formats),
    default=None,
    help="File format, or the tool that wrote the file (promptfoo, inspect, deepeval, ragas, "
    "langfuse, langsmith, phoenix: recognised by its shape without this); default from the "
    "extension.",
)
@click.option(
    "--map",
    "mapping",
    multiple=True,
    metavar="FIELD=COLUMN",
    help="Map a file column or a path into nested records onto an item field, e.g. "
    "--map question=prompt, --map answer=response.output.text, "
    "--map sources=contexts[*].text. For sources, also a comma-separated list of columns: "
    "--map sources=ctx1,ctx2.",
)
@click.option(
    "--records",
    default=None,
    metavar="PATH",
    help="For a JSON file whose top level is an object: the path of its list of records, "
    "e.g. --records data.items.",
)
@click.option("--encoding", default="utf-8", show_default=True, help="Text encoding.")
@click.option(
    "--on-changed",
    type=click.Choice(["error", "skip"]),
    default="error",
    show_default=True,
    help="A row whose content changed under an existing id: fail the import, or keep the "
    "stored row.",
)
@pass_app_and_json("the summary")
def import_command(
    app: AppContext,
    file: str,
    dataset: str,
    file_format: str | None,
    mapping: tuple[str, ...],
    records: str | None,
    encoding: str,
    on_changed: str,
    as_json: bool,
) -> None:
    """Import rows (question, answer, sources, ...) from FILE into a dataset.

    CSV, JSONL, JSON (a list of records), Parquet, or the ragas format. The import is all or
    nothing; re-importing the same file adds nothing.
    """
    from calibrate_app.cli._context import echo_json
    from judges.workflows import importing

    summary = importing.import_rows(
        app.workspace,
        file,
        dataset,
        format=file_format,
        mapping=importing.row_mapping(mapping),
        encoding=encoding,
        on_changed=on_changed,  # type: ignore[arg-type]
        records=records,
    )
    for warning in summary.warnings:
        click.echo(f"warning: {warning}", err=True)
    if summary.metrics:
        # The rows are in; the tool's verdicts are a second, separate import (its own judge).
        click.echo(
            f"{summary.tool} file: it also holds judge results ({', '.join(summary.metrics)});"
            f" import them with: calibrate verdicts import FILE --dataset {summary.dataset}"
            + (" --metric NAME" if len(summary.metrics) > 1 else ""),
            err=True,
        )
    if as_json:
        echo_json(summary.__dict__)
        return
    click.echo(
        f"{summary.path}: {summary.rows_read} rows read, {summary.added} added, "
        f"{summary.unchanged} already present"
        + (f", {summary.changed} changed rows kept as stored" if summary.changed else "")
        + f" (dataset {summary.dataset!r})"
    )


@click.command("datasets")
@pass_app_and_json()
def datasets_command(app: AppContext, as_json: bool) -> None:
    """List datasets with their item, label and annotator counts."""
    from calibrate_app.cli._context import echo_json

    rows = app.read_workspace.labels.datasets()
    if as_json:
        echo_json([d.model_dump(mode="json") for d in rows])
        return
    if not rows:
        click.echo("No datasets yet. Import one with: calibrate import FILE --dataset NAME")
        return
    click.echo(f"{'dataset':<24} {'kind':<10} {'items':>8} {'labels':>8} {'annotators':>10}")
    for d in rows:
        click.echo(f"{d.name:<24} {d.kind:<10} {d.items:>8} {d.labels:>8} {d.annotators:>10}")


@click.group("labels")
def labels_group() -> None:
    """Human labels: import an existing spreadsheet, export the current labels."""


@labels_group.command("import")
@click.argument("file", type=ClientPath(dir_okay=False))
@click.option("--dataset", required=True, help="Dataset the labelled rows belong to.")
@click.option("--annotator", default=None, help="Who labelled (unless the file has a column).")
@click.option(
    "--criterion", default=None,
    help=f"What the labels judge (default: {DEFAULT_CRITERION}; preference on a pairwise "
    "dataset).",
)
@click.option(
    "--selection",
    type=click.Choice(["random", "all", "by-verdict", "escalated", "unknown"]),
    default="unknown",
    show_default=True,
    help="How the file's rows were chosen: a random sample, every row, drawn by judge verdict, "
    "a random sample of the rows the judge abstained on (escalated by calibrate judge select), "
    "or unknown (the report then checks the rows against the judge's verdicts).",
)
@click.option(
    "--map",
    "mapping",
    multiple=True,
    metavar="FIELD=COLUMN",
    help="Map a column or a path into nested records onto a field (id, label, note, "
    "annotator), e.g. --map label=feedback.value --map annotator=feedback.user.",
)
@click.option(
    "--records",
    default=None,
    metavar="PATH",
    help="For a JSON file whose top level is an object: the path of its list of records.",
)
@click.option(
    "--format", "file_format", type=LazyChoice(_row_formats), default=None,
    help="File format, or the tool that wrote the file (langfuse, langsmith, phoenix: their "
    "feedback exports are recognised by their shape without this); default from the extension.",
)
@click.option(
    "--metric", default=None,
    help="In a tool's feedback export: the metric whose human labels to import, when it holds "
    "several (a judge's scores in it are for calibrate verdicts import).",
)
@pass_app_and_json("the summary")
def labels_import(
    app: AppContext,
    file: str,
    dataset: str,
    annotator: str | None,
    criterion: str | None,
    selection: str,
    mapping: tuple[str, ...],
    records: str | None,
    file_format: str | None,
    metric: str | None,
    as_json: bool,
) -> None:
    """Import human labels from FILE.

    Columns: id, label (pass/fail/unsure, 1/0, true/false; a/b/tie on a pairwise dataset, one
    row per annotator vote), optional note and annotator. A Langfuse scores export, LangSmith
    feedback or Phoenix span annotations are read without a mapping: a person's scores only,
    each under its reviewer.
    """
    from calibrate_app.cli._context import echo_json
    from judges.workflows import importing

    summary = importing.import_labels(
        app.workspace,
        file,
        dataset,
        annotator=annotator,
        criterion=criterion,
        selection=selection.replace("-", "_"),
        mapping=importing.label_mapping(mapping),
        records=records,
        format=file_format,
        metric=metric,
    )
    if as_json:
        echo_json(summary.__dict__)
        return
    click.echo(
        f"{summary.path}: {summary.rows_read} labels read, {summary.added} added, "
        f"{summary.unchanged} unchanged"
        + (f" ({summary.tool} metric {summary.metric!r}, by {', '.join(summary.annotators)})"
           if summary.tool and summary.annotators else "")
    )


@labels_group.command("export")
@click.option("--dataset", required=True)
@click.option("--criterion", default=None, help="Only this criterion (default: all).")
@click.option("--history", is_flag=True, help="Every label version, not only the current ones.")
@click.option(
    "-o",
    "--output",
    required=True,
    type=ClientPath(dir_okay=False),
    help="Output file: .csv, .parquet or .jsonl.",
)
@pass_app
def labels_export(
    app: AppContext, dataset: str, criterion: str | None, history: bool, output: str
) -> None:
    """Export the current labels (latest per item, annotator and criterion)."""
    from judges.workflows.importing import export_labels

    count, path = export_labels(app.read_workspace, dataset, output, criterion=criterion,
                                history=history)
    click.echo(f"{count} labels written to {path}")


def register(cli: click.Group) -> None:
    """Add these commands to the top-level group."""
    cli.add_command(import_command)
    cli.add_command(datasets_command)
    cli.add_command(labels_group)
