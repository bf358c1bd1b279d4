"""File parameters that follow the working directory of the CLI that typed them.

A command handed to the app runs in the app's process, whose working directory is not the
CLI's. The CLI sends its argv unchanged plus its working directory; the app sets that directory
with :func:`client_cwd` while the command runs, and only parameters declared as files
(:class:`ClientPath`, and config files named by :func:`client_file`) are resolved against it.
Nothing else is rewritten, so a dataset called ``docs`` stays ``docs`` even when the CLI's
folder holds a ``docs/`` directory.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import click

_client_cwd: ContextVar[str | None] = ContextVar("calibrate_client_cwd", default=None)


@contextlib.contextmanager
def client_cwd(cwd: str) -> Iterator[None]:
    """Resolve file parameters against ``cwd`` (an absolute path) inside this block."""
    if not os.path.isabs(cwd):
        raise ValueError(f"the client's working directory must be absolute, got {cwd!r}")
    token = _client_cwd.set(cwd)
    try:
        yield
    finally:
        _client_cwd.reset(token)


def client_file(value: str) -> str:
    """``value`` joined to the CLI's working directory when a delegated command runs."""
    base = _client_cwd.get()
    if base is None or value == "-" or os.path.isabs(value):
        return value
    return os.path.join(base, value)


class ClientPath(click.Path):
    """A :class:`click.Path` whose relative values follow the CLI's working directory."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            value = client_file(value)
        return super().convert(value, param, ctx)
