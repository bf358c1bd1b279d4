"""Helpers for the app's page tests under Streamlit's AppTest (on pytest's pythonpath).

The ``app_env`` fixture (``tests/conftest.py``) points the app at the test database first.
"""

from __future__ import annotations

import time

from repo_paths import APP_SCRIPT
from streamlit.testing.v1 import AppTest

from judges.stores.judge_store import JudgeStore, RunRecord
from labels.stores.db import Database


def app_page(page: str, *, timeout: float = 30) -> AppTest:
    """The app switched to ``page`` (e.g. ``"app_pages/judges.py"``) after its first run."""
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=timeout)
    at.switch_page(page)
    at.run()
    return at


def calibration_page(*, timeout: float = 90) -> AppTest:
    """The app on the Calibration page, reached as a user reaches it: after the first page ran."""
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=timeout)
    at.run()
    at.switch_page("app_pages/calibration.py").run()
    assert not at.exception, at.exception
    return at


def finished_run(db: Database, dataset: str, *, timeout: float) -> RunRecord:
    """The newest judge run on ``dataset`` once it is no longer running.

    A page starts its run in the background; after ``timeout`` seconds the run as it is.
    """
    judges = JudgeStore(db)
    deadline = time.monotonic() + timeout
    while True:
        runs = judges.runs(dataset=dataset)
        if (runs and runs[0].status != "running") or time.monotonic() >= deadline:
            assert runs, f"no judge run on {dataset!r} after {timeout} s"
            return runs[0]
        time.sleep(0.1)
