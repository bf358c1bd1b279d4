"""The cancel event of the command a thread runs for the CLI: set by the app, read by a judge run.

The command server (:mod:`calibrate_app.command_server`) runs each command the CLI hands over
on a thread of its own and sets that thread's event when the CLI goes away; ``calibrate judge
run`` (:mod:`calibrate_app.cli._judges`) stops on it. Both import this module, so neither has
to import the other.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_cancel_events: dict[int, threading.Event] = {}


def current_cancel_event() -> threading.Event | None:
    """The cancel event of the delegated command running on this thread, if any."""
    return _cancel_events.get(threading.get_ident())


@contextlib.contextmanager
def cancellable(cancel: threading.Event) -> Iterator[None]:
    """Make ``cancel`` this thread's :func:`current_cancel_event` while the block runs."""
    me = threading.get_ident()
    _cancel_events[me] = cancel
    try:
        yield
    finally:
        _cancel_events.pop(me, None)
