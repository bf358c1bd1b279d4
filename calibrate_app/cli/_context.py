"""What every command shares: the settings, a store opened on first use, lazy choices.

Command modules import only what ``calibrate --help`` needs (click, the settings, the store):
the engine (pandas, scipy, statsmodels, the provider SDKs) is imported inside the command that
uses it, so listing the commands or the datasets starts in a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from calibrate_app.settings import AppSettings
from labels import LabelStore, open_store


class AppContext:
    """Settings built once at the entry point, and the label store opened lazily."""

    def __init__(self, settings: AppSettings) -> None:
        self.settings = settings
        self._store: LabelStore | None = None
        self._read_only = False

    @property
    def store(self) -> LabelStore:
        """The label store on ``settings.db_path``, read-write (opened, migrated on first use)."""
        if self._store is not None and self._read_only and self._store.db.read_only:
            self.close()  # a command that reads, then writes: reopen with the right to write
        if self._store is None:
            self._store = open_store(
                str(self.settings.db_path), lock_timeout=self.settings.lock_timeout
            )
            self._read_only = False
        return self._store

    @property
    def reader(self) -> LabelStore:
        """The label store opened read-only, for commands that only read.

        Nothing such a command does can change the file, a read-only file or mount works,
        and a missing file reads as an empty database (none is created). In the app process
        (a command handed over by the CLI) the app's open database is shared.
        """
        if self._store is None:
            self._store = open_store(
                str(self.settings.db_path), lock_timeout=self.settings.lock_timeout,
                read_only=True,
            )
            self._read_only = True
        return self._store

    def close(self) -> None:
        """Release the database file."""
        if self._store is not None:
            self._store.db.close()
            self._store = None


pass_app = click.make_pass_decorator(AppContext)

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
