"""The ``calibrate`` command line: thin commands over the ``labels`` and ``judges`` libraries.

Exit codes: 0 ok, 2 usage or bad input, 1 any other failure.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import click

from calibrate_app.cli._context import AppContext, echo_json, pass_app
from labels.errors import (
    CalibrateError,
    ConflictError,
    ImportFileError,
    InvalidNameError,
    NotFoundError,
    UnsafeFileError,
)

BAD_INPUT = (ImportFileError, ConflictError, NotFoundError, InvalidNameError, UnsafeFileError)


class UserError(click.ClickException):
    """A failure explained in plain words (exit code 1)."""


class BadInputError(UserError):
    """Bad input: a file, a name or a value the user gave (exit code 2)."""

    exit_code = 2


HELP_OPTIONS = frozenset({"-h", "--help"})


class CalibrateGroup(click.Group):
    """A click group that turns `calibrate`'s own errors into messages and exit codes."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse as click does, and note in ``ctx.meta`` whether the command line asks for help.

        The group's callback then leaves the settings unread, so that printing help imports
        neither pydantic-settings nor the store.
        """
        ctx.meta["calibrate.help"] = bool(HELP_OPTIONS & set(args))
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; bad input exits 2, any other `CalibrateError` exits 1 (with message)."""
        try:
            return super().invoke(ctx)
        except BAD_INPUT as error:
            raise BadInputError(str(error)) from None
        except CalibrateError as error:
            raise UserError(str(error)) from None
        except PermissionError as error:
            # e.g. an output file in a folder that is not ours: a message, not a traceback
            raise UserError(f"permission denied: {error.filename or error}") from None


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``calibrate --version``: the installed distribution's version, then exit.

    Not click's ``version_option``, which looks the version up under one fixed distribution
    name; :func:`labels.distribution.installed_version` also finds an environment installed
    before the distribution was renamed (issue 28).
    """
    if not value or ctx.resilient_parsing:
        return
    from labels.distribution import COMMAND, DISTRIBUTION, installed_version

    version = installed_version()
    if version is None:
        raise UserError(f"{DISTRIBUTION} is not installed (pip install {DISTRIBUTION}, or "
                        "pip install -e . in a checkout)")
    click.echo(f"{COMMAND}, version {version} ({DISTRIBUTION})")
    ctx.exit()


def use_env_file(path: str | None) -> None:
    """Read settings from ``path`` instead of ``./.env`` (here and in the app it starts)."""
    if path is not None:
        from labels.settings_files import ENV_FILE_VARIABLE

        os.environ[ENV_FILE_VARIABLE] = os.path.abspath(path)


@click.group(cls=CalibrateGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="DuckDB file (default: CALIBRATE_DB_PATH or ./calibrate.duckdb).",
)
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Settings file to read instead of ./.env (CALIBRATE_ENV_FILE); like ./.env, read "
    "only when it is yours alone (not writable by group or others).",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.pass_context
def cli(ctx: click.Context, db_path: str | None, env_file: str | None) -> None:
    """Calibrate an LLM judge against expert labels and correct its pass rate.

    The data flow: import rows, label them, judge them, calibrate, export a judge card,
    and gate new verdicts in CI.
    """
    use_env_file(env_file)
    ctx.obj = AppContext(db_path=db_path)
    if not ctx.meta.get("calibrate.help"):
        ctx.obj.settings  # noqa: B018 -- read now: a bad settings file stops every command
    ctx.call_on_close(ctx.obj.close)


def command_paths(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command under ``group`` with its path of names, ``group`` itself first.

    Depth first, by name, hidden commands included: what the start-up bench times, the help
    tests ask and the app's command channel allow-list must name, one walk for all of them.
    """
    yield path, group
    for name in sorted(group.commands):
        command = group.commands[name]
        if isinstance(command, click.Group):
            yield from command_paths(command, (*path, name))
        else:
            yield (*path, name), command


def _register() -> None:
    from calibrate_app.cli import (
        _align,
        _app,
        _demo,
        _gate,
        _judges,
        _report,
        _rows,
        _selective,
        _team,
    )

    for module in (_rows, _app, _judges, _align, _report, _gate, _selective, _team, _demo):
        module.register(cli)


_register()


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``calibrate`` console script.

    When the app holds the database file, the command runs inside the app process instead
    (see :mod:`calibrate_app.channel.client` and :mod:`calibrate_app.command_server`).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args and not HELP_OPTIONS & set(args):  # help runs here, and reads no settings
        from calibrate_app.channel.client import delegate_if_app_serves, env_file_option
        from calibrate_app.settings import AppSettings

        try:
            use_env_file(env_file_option(args))
            default_db = AppSettings().db_path
        except CalibrateError as error:  # a settings file that is not the user's alone
            click.echo(f"Error: {error}", err=True)
            sys.exit(BadInputError.exit_code)
        code = delegate_if_app_serves(args, default_db)
        if code is not None:
            sys.exit(code)
    cli.main(args=args, prog_name="calibrate")


__all__ = ["AppContext", "CalibrateGroup", "cli", "command_paths", "echo_json", "main",
           "pass_app"]
