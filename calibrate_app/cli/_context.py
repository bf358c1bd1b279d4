"""What every command shares: the settings and a store opened on first use."""

from __future__ import annotations

import click

from calibrate_app.settings import AppSettings
from labels import LabelStore, open_store


class AppContext:
    """Settings built once at the entry point, and the label store opened lazily."""

    def __init__(self, settings: AppSettings) -> None:
        self.settings = settings
        self._store: LabelStore | None = None

    @property
    def store(self) -> LabelStore:
        """The label store on ``settings.db_path`` (opened and migrated on first use)."""
        if self._store is None:
            self._store = open_store(
                str(self.settings.db_path), lock_timeout=self.settings.lock_timeout
            )
        return self._store

    def close(self) -> None:
        """Release the database file."""
        if self._store is not None:
            self._store.db.close()
            self._store = None


pass_app = click.make_pass_decorator(AppContext)
