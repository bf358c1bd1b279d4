"""What every command shares: the settings, a store opened on first use, lazy choices.

Command modules import only what ``calibrate --help`` needs (click and the light name lists
of :mod:`judges.calibration.vocabulary` and :mod:`labels.names`):
the settings (pydantic-settings), the store (DuckDB) and the engine (pandas, scipy,
statsmodels, the provider SDKs) are imported inside the command that uses them, so every
``--help`` starts in a fraction of a second (``tests/calibrate_app/cli/test_lazy_imports.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from calibrate_app.settings import AppSettings
    from judges.workspace import Workspace
    from labels import LabelStore


class AppContext:
    """The settings, read once on first use, and the workspace (the database) opened lazily.

    Args:
        settings: Settings already read; by default they are read from the environment and
            the settings file the first time a command asks for them.
        db_path: The ``--db`` given, which overrides the settings' database.
    """

    def __init__(self, settings: AppSettings | None = None, *, db_path: str | None = None) -> None:
        self._settings = settings
        self._db_path = db_path
        self._workspace: Workspace | None = None
        self._read_only = False

    @property
    def settings(self) -> AppSettings:
        """The settings (read on first use; ``--db`` applied)."""
        if self._settings is None:
            from calibrate_app.settings import AppSettings

            settings = AppSettings()
            if self._db_path is not None:
                settings = settings.model_copy(update={"db_path": self._db_path})
            self._settings = settings
        return self._settings

    def _open(self, *, read_only: bool) -> Workspace:
        from judges.workspace import Workspace

        workspace = Workspace.open(self.settings.db_path, read_only=read_only,
                                   lock_timeout=self.settings.lock_timeout)
        workspace.labels  # noqa: B018 -- the label tables exist in every file a command opens
        self._workspace, self._read_only = workspace, read_only
        return workspace

    @property
    def workspace(self) -> Workspace:
        """The database on ``settings.db_path``, read-write (opened, migrated on first use)."""
        if self._workspace is not None and self._read_only and self._workspace.db.read_only:
            self.close()  # a command that reads, then writes: reopen with the right to write
        return self._workspace or self._open(read_only=False)

    @property
    def read_workspace(self) -> Workspace:
        """The database opened read-only, for commands that only read.

        Nothing such a command does can change the file, a read-only file or mount works,
        and a missing file reads as an empty database (none is created). In the app process
        (a command handed over by the CLI) the app's open database is shared.
        """
        return self._workspace or self._open(read_only=True)

    @property
    def store(self) -> LabelStore:
        """The label store of :attr:`workspace` (read-write)."""
        return self.workspace.labels

    @property
    def reader(self) -> LabelStore:
        """The label store of :attr:`read_workspace` (read-only)."""
        return self.read_workspace.labels

    def close(self) -> None:
        """Release the database file."""
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None


pass_app = click.make_pass_decorator(AppContext)


def echo_json(value: Any) -> None:
    """Print ``value`` as stable, indented JSON."""
    click.echo(json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False))

_Command = Callable[..., Any]


def pass_app_and_json(what: str = "") -> Callable[[_Command], _Command]:
    """A ``--json`` flag (the command's ``as_json``: print ``what`` as JSON), then :data:`pass_app`.

    The shared tail of every command that reads the store and can answer in JSON.
    """
    text = f"Print {what} as JSON." if what else "Print as JSON."
    json_flag = click.option("--json", "as_json", is_flag=True, help=text)

    def decorate(command: _Command) -> _Command:
        return json_flag(pass_app(command))

    return decorate


class LazyChoice(click.Choice[str]):
    """A :class:`click.Choice` whose values come from a library module loaded on first use.

    The values (e.g. the statistics' designs) live in modules that import scipy; building the
    option must not import them, only showing or checking the option does.

    Args:
        load: Returns the allowed values; called once, the first time they are needed.
    """

    def __init__(self, load: Callable[[], Sequence[str]]) -> None:
        """Remember ``load``; nothing is imported yet."""
        self._load = load
        self._values: Sequence[str] | None = None
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> Sequence[str]:
        """The allowed values (loaded on first use)."""
        if self._values is None:
            self._values = tuple(self._load())
        return self._values

    @choices.setter
    def choices(self, value: Any) -> None:
        # click.Choice.__init__ assigns the (empty) sequence given above; the loader wins.
        pass
