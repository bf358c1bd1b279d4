"""``calibrate --db DB ARGS`` in this process, through click's runner, for tests in any folder."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from calibrate_app.cli import cli


def run(db: Path, *args: str) -> Result:
    """``calibrate --db DB ARGS`` through click's runner; exceptions propagate."""
    return CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)


def ok(db: Path, *args: str) -> str:
    """:func:`run`, which must exit 0; its output."""
    result = run(db, *args)
    assert result.exit_code == 0, result.output
    return result.output
