"""Fixtures shared by the whole suite.

A temporary database and isolated settings for every test; the judge fixtures (datasets, the
local fake LLM server, SDK providers, the one-shot judge); the calibration report's data files;
the real app server in Chromium. Helper modules live in ``tests/support`` (on pytest's
``pythonpath``).
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from app_browser import CHROMIUM, Server, require_browser, start_server
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, oneshot_judge
from report_data import ReportFiles, write_report_files
from stores import opened_store

from judges.calls import CallPolicy
from judges.config import JudgeConfig
from judges.demo import DemoSummary, build_demo
from judges.providers.anthropic import AnthropicProvider
from judges.providers.openai import OpenAIProvider
from judges.workspace import Workspace
from labels import LabelStore, import_rows

ENV_PREFIXES = ("CALIBRATE_", "ANTHROPIC_", "OPENAI_")
# The suite's own switches (.ci/run sets them), not settings of the code under test.
KEPT_VARIABLES = frozenset({"CALIBRATE_REQUIRE_BROWSER", "CALIBRATE_REQUIRE_INSPECT"})
DatasetFactory = Callable[..., str]
_BYTECODE: dict[str, Path] = {}


def pytest_configure(config: pytest.Config) -> None:
    """Let the suite's Python subprocesses share compiled modules when the shell forbids it.

    With ``PYTHONDONTWRITEBYTECODE=1`` (and a venv installed without ``.pyc`` files), every
    CLI command, app server and helper process the tests start compiled pandas, DuckDB's and
    Streamlit's sources again: about 5 of the 6.5 CPU seconds of a one-line ``calibrate``
    command. Here compiled files go to a temporary folder outside the source tree instead
    (``PYTHONPYCACHEPREFIX``, this process and its children), removed when the run ends;
    without that variable nothing changes. What a module does does not depend on it.
    """
    import os
    import sys
    import tempfile

    if not (sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE")):
        return
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        return  # the shell chose where compiled files go
    prefix = Path(tempfile.mkdtemp(prefix="calibrate-tests-pycache-"))
    prefix.chmod(0o755)  # readable by the processes the tests start as another uid
    _BYTECODE["prefix"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    sys.pycache_prefix = str(prefix)
    sys.dont_write_bytecode = False


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the compiled-files folder of :func:`pytest_configure`."""
    prefix = _BYTECODE.pop("prefix", None)
    if prefix is not None:
        shutil.rmtree(prefix, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _components_scanned_once() -> Iterator[None]:
    """Scan the installed packages for Streamlit components once per run, not per AppTest.

    Each new ``AppTest`` reads the metadata of every installed distribution looking for
    custom components (about 1 s here; the app has none); the installed packages do not
    change during a run, so later AppTests get the first scan's result.
    """
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # another Streamlit: nothing to share
        yield
        return
    scan = functools.cache(manifest_scanner.scan_component_manifests)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(manifest_scanner, "scan_component_manifests", lambda *a, **k: list(scan()))
        yield


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No key, base URL or database path from the developer's shell or .env leaks into a test.

    Nor out of one: ``calibrate --env-file PATH`` run in-process (CliRunner) writes the path to
    os.environ for the app it starts, and a later module's fixture, set up before this one runs,
    would hand that file to its own commands.
    """
    import os

    from labels.settings_files import ENV_FILE_VARIABLE

    for name in list(os.environ):
        if name.startswith(ENV_PREFIXES) and name not in KEPT_VARIABLES:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield
    os.environ.pop(ENV_FILE_VARIABLE, None)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh DuckDB file path (not yet created)."""
    return tmp_path / "test.duckdb"


@pytest.fixture
def store(db_path: Path) -> Iterator[LabelStore]:
    """A migrated, empty label store on a real DuckDB file."""
    with opened_store(db_path) as s:
        yield s


@pytest.fixture
def workspace(store: LabelStore) -> Workspace:
    """The workspace over :func:`store`'s database, sharing that label store."""
    return Workspace.of(store)


@pytest.fixture
def db_copy(template_db: Path, db_path: Path) -> Path:
    """A copy, at ``db_path``, of the database the test module built once (its ``template_db``).

    A module that builds an expensive database defines a module-scoped ``template_db`` fixture;
    each test then changes its own copy.
    """
    shutil.copy(template_db, db_path)
    return db_path


@pytest.fixture
def workspace_copy(store_copy: LabelStore) -> Workspace:
    """The workspace over :func:`store_copy`'s database, sharing that label store."""
    return Workspace.of(store_copy)


@pytest.fixture
def store_copy(db_copy: Path) -> Iterator[LabelStore]:
    """The label store on :func:`db_copy` (released after the test)."""
    with opened_store(db_copy) as s:
        yield s


@pytest.fixture
def app_env(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point the app at the test database; close the app's cached store afterwards."""
    from calibrate_app import resources

    monkeypatch.setenv("CALIBRATE_DB_PATH", str(db_path))
    monkeypatch.setenv("CALIBRATE_LOCK_TIMEOUT", "0")
    yield db_path
    resources.release_store()


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    """The demo, built once per session by :func:`judges.demo.build_demo` (what it reported).

    Building it takes 10-80 s, so tests copy the file (:func:`copy_demo`) instead of
    rebuilding it; the file itself is never opened by a test, so every copy is the build's
    output as it was. Tests about ``build_demo`` itself still build their own.
    """
    summary = build_demo(tmp_path_factory.mktemp("demo-template") / "demo.duckdb")
    # Closed and checkpointed: the single file is the whole database (a copy needs no WAL).
    assert not Path(summary.db_path + ".wal").exists()
    return summary


@pytest.fixture
def copy_demo(demo_build: DemoSummary) -> Callable[[Path], Path]:
    """Copy the session's demo database to a path (replacing any file there); returns it."""

    def copy(path: Path) -> Path:
        shutil.copyfile(demo_build.db_path, path)
        return path

    return copy


@pytest.fixture
def demo_app_db(app_env: Path, copy_demo: Callable[[Path], Path]) -> Path:
    """The demo in ``db_path``, with the app pointed at it (its store closed after)."""
    return copy_demo(app_env)


# -- judges ---------------------------------------------------------------------------------


@pytest.fixture
def make_dataset(store: LabelStore, tmp_path: Path) -> DatasetFactory:
    """Import rows (a list of dicts) into a dataset through the real importer."""

    def make(name: str, rows: list[dict[str, Any]]) -> str:
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
        import_rows(store, path, name)
        return name

    return make


@pytest.fixture
def fake_server() -> Iterator[FakeLLMServer]:
    """A fake OpenAI + Anthropic server on 127.0.0.1 (fast: 50 ms retry-after, 1 s slow reply)."""
    with FakeLLMServer(retry_after=0.05, slow_seconds=1.0) as server:
        yield server


@pytest.fixture
def openai_provider(fake_server: FakeLLMServer) -> OpenAIProvider:
    """The real OpenAI SDK pointed at the fake server."""
    return OpenAIProvider("fake-judge", api_key=DUMMY_KEY, base_url=fake_server.openai_base_url)


@pytest.fixture
def anthropic_provider(fake_server: FakeLLMServer) -> AnthropicProvider:
    """The real Anthropic SDK pointed at the fake server."""
    return AnthropicProvider(
        "fake-claude", api_key=DUMMY_KEY, base_url=fake_server.anthropic_base_url
    )


@pytest.fixture
def fast_policy() -> CallPolicy:
    """Short timeouts and backoff, so fault tests take milliseconds."""
    return CallPolicy(timeout=0.4, max_retries=3, backoff=0.01, max_backoff=0.05)


@pytest.fixture
def oneshot() -> JudgeConfig:
    """The built-in one-shot faithfulness judge (marker contract) on an OpenAI model, seed 7."""
    return oneshot_judge("openai/gpt-4o-mini", max_tokens=600, seed=7)


# -- the calibration report's data (see report_data) ----------------------------------------


@pytest.fixture(scope="session")
def file_writer() -> Callable[[Path], ReportFiles]:
    """:func:`report_data.write_report_files`, for fixtures of a wider scope than a test."""
    return write_report_files


@pytest.fixture
def report_files(tmp_path: Path) -> ReportFiles:
    """The generated files, in ``tmp_path/files``."""
    return write_report_files(tmp_path / "files")


# -- the app in a real browser (see app_browser) --------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium through Playwright (skipped, or failed in CI, when it is missing)."""
    sync_api = require_browser()
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield launched
        launched.close()


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Callable[[Callable[[LabelStore], None]], Server]]:
    """Start app servers on a database seeded by a callback; stop them and check their logs."""
    with ExitStack() as running:

        def make(seed: Callable[[LabelStore], None]) -> Server:
            db_path = tmp_path / "app.duckdb"
            with opened_store(db_path) as store:
                seed(store)
            server = start_server(db_path, tmp_path)
            running.callback(_stop_without_traceback, server)
            return server

        yield make


def _stop_without_traceback(server: Server) -> None:
    server.stop()
    log = server.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
