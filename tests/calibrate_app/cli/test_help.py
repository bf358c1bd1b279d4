"""Every `calibrate` command has help text and a working ``--help``, one test per command."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli, command_paths

COMMANDS = [(" ".join(path), command) for path, command in command_paths(cli) if path]


def test_the_command_tree_holds_the_documented_commands() -> None:
    names = {name for name, _ in COMMANDS}
    assert {"import", "datasets", "labels import", "labels export", "app", "report", "card",
            "card export", "card show", "score", "gate"} <= names
    for group in ("judge", "verdicts"):
        assert isinstance(cli.commands[group], click.Group)
        assert any(name.startswith(f"{group} ") for name in names), group


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[name for name, _ in COMMANDS])
def test_every_command_has_help(name: str, command: click.Command) -> None:
    assert command.help, f"'calibrate {name}' has no help text"
    result = CliRunner().invoke(cli, [*name.split(), "--help"])
    assert result.exit_code == 0 and len(result.output) > 100, (name, result.output)


def test_one_judge_group_and_the_old_name_hidden() -> None:
    # One group per thing: a judge's configs, runs and tuning are all under `judge`; the old
    # `judges` group answers only as a hidden alias of the same commands.
    judge = cli.commands["judge"]
    assert isinstance(judge, click.Group)
    assert {"list", "show", "validate", "run", "runs", "align", "select"} <= set(judge.commands)
    alias = cli.commands["judges"]
    assert isinstance(alias, click.Group) and alias.hidden
    assert all(alias.commands[name] is judge.commands[name] for name in alias.commands)
    root_help = CliRunner().invoke(cli, ["--help"]).output
    assert "  judge " in root_help and "  judges " not in root_help
