"""``calibrate app``: start the Streamlit app on this database."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from calibrate_app.cli._context import AppContext, pass_app

APP_SCRIPT = Path(__file__).resolve().parents[1] / "streamlit_app.py"


def exec_app(command: list[str], env: dict[str, str]) -> None:
    """Replace this process with the Streamlit server.

    Replacing (not spawning) means a signal to this PID reaches Streamlit itself, so stopping
    `calibrate app` never leaves an orphaned server holding the database file.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, env)


def streamlit_command(
    db_path: str, host: str, port: int, *, max_upload_mb: int | None = None
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that start the app on ``db_path``.

    Raises :class:`~labels.errors.UnsafeFileError` when a Streamlit settings file it would read
    is not the user's alone (:func:`calibrate_app.settings.check_streamlit_files`).

    ``max_upload_mb`` (default: the settings' default) also caps uploads in Streamlit's own
    upload handler, which refuses a bigger request body before the page ever sees it.
    """
    from calibrate_app.settings import AppSettings, check_streamlit_files

    if max_upload_mb is None:
        max_upload_mb = int(AppSettings.model_fields["max_upload_mb"].default)
    check_streamlit_files()
    command = [
        sys.executable,
        "-m",
        "calibrate_app.serve",  # Streamlit's command line, /_stcore/metrics off
        "run",
        str(APP_SCRIPT),
        "--server.headless",
        "true",
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.maxUploadSize",
        str(max_upload_mb),
        # Streamlit runs a full garbage collection after every script run by default. It holds
        # the GIL for 100-400 ms on a loaded 2-core machine (~170,000 tracked objects), right
        # when the last messages of a rerun (the Label page's next row) wait to be sent, and
        # the next key press waits behind it. Python's own generational collector still runs.
        "--runner.postScriptGC",
        "false",
    ]
    env = {**os.environ, "CALIBRATE_DB_PATH": str(Path(db_path).resolve())}
    return command, env


@click.command("app")
@click.option("--port", type=int, default=None, help="Port (default: CALIBRATE_APP_PORT or 8501).")
@click.option(
    "--host",
    default=None,
    help="Address to bind (default 127.0.0.1; anything else exposes the labelling app).",
)
@pass_app
def app_command(app: AppContext, port: int | None, host: str | None) -> None:
    """Start the labelling and calibration app in the browser (binds 127.0.0.1)."""
    app.close()  # the app process must own the database file
    command, env = streamlit_command(
        str(app.settings.db_path), host or app.settings.app_host, port or app.settings.app_port,
        max_upload_mb=app.settings.max_upload_mb,
    )
    click.echo(
        f"Starting the app on http://{host or app.settings.app_host}:"
        f"{port or app.settings.app_port} (database {app.settings.db_path}); Ctrl+C stops it."
    )
    exec_app(command, env)


def register(cli: click.Group) -> None:
    """Add this command to the top-level group."""
    cli.add_command(app_command)
