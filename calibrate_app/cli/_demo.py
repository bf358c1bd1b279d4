"""``calibrate demo``: build the offline demo database and open the app on it."""

from __future__ import annotations

import click

from calibrate_app.cli._app import exec_app, streamlit_command
from calibrate_app.cli._context import AppContext, pass_app


@click.command("demo")
@click.option("--no-app", is_flag=True, help="Only build the demo database and print a summary.")
@click.option("--port", type=int, default=None, help="Port (default: CALIBRATE_APP_PORT or 8501).")
@click.option(
    "--keep", is_flag=True,
    help="Keep an existing demo database, with any labels made in it, and only add what is "
    "missing (default: rebuild it from the shipped files).",
)
@click.option(
    "--story", type=click.Choice(["bramblepost", "mtbench"]), default="bramblepost",
    show_default=True,
    help="Which story the printed link opens: bramblepost (a fictional help centre's RAG "
    "answers, pass/fail) or mtbench (MT-Bench's real expert votes against GPT-4, A vs B). "
    "Both are in the database; the Calibration page's dataset box switches between them.",
)
@pass_app
def demo_command(app: AppContext, no_app: bool, port: int | None, keep: bool,
                 story: str) -> None:
    """Build the offline demo database and start the app on it.

    Loads the shipped demo data (a fictional help centre's RAG rows, expert labels and any
    recorded judge verdicts; and MT-Bench's expert votes with GPT-4's pairwise verdicts)
    through the ordinary import paths into the --db file, e.g.
    `calibrate --db demo.duckdb demo`. The file is rebuilt from scratch each time unless
    --keep is given; a file that holds anything but the demo is never replaced.
    """
    from judges.demo import build_demo

    app.close()  # the demo builder, then the app process, must own the database file
    summary = build_demo(
        app.settings.db_path, refresh=not keep, lock_timeout=app.settings.lock_timeout
    )
    for line in summary.lines():
        click.echo(line)
    if no_app:
        return
    host, chosen_port = app.settings.app_host, port or app.settings.app_port
    command, env = streamlit_command(str(app.settings.db_path), host, chosen_port,
                                     max_upload_mb=app.settings.max_upload_mb)
    dataset = "mtbench" if story == "mtbench" else "demo-labelled"
    click.echo(f"Starting the app on http://{host}:{chosen_port}; the {story} story: "
               f"http://{host}:{chosen_port}/calibration?dataset={dataset}; Ctrl+C stops it.")
    exec_app(command, env)


def register(cli: click.Group) -> None:
    """Add this command to the top-level group."""
    cli.add_command(demo_command)
