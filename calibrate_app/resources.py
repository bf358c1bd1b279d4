"""Objects shared by every session of the app: settings, the store, background jobs, holds.

DuckDB lets one process open a database file, and one connection must not be used by two threads
at once. So the server process opens the file once (:func:`get_store`, an ``st.cache_resource``
shared by all sessions) and every store method takes its own cursor. Long work (a judge run)
runs in a background thread registered in :func:`get_jobs`, writing through the same store.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import streamlit as st

from calibrate_app.channel.wire import ChannelError
from calibrate_app.command_server import CommandServer
from calibrate_app.settings import AppSettings, check_streamlit_files
from calibrate_app.uploads import UploadFolder
from judges.workflows import queue as label_queue
from judges.workflows.queue import Holds, LabelTally, QueuePlan, QueueSettings
from judges.workspace import Workspace
from labels import LabelStore

_log = logging.getLogger(__name__)

_SETTINGS_KEY = "_calibrate_settings"


def get_settings() -> AppSettings:
    """The settings of this browser session, built once from the environment and ``.env``.

    ``calibrate app`` passes the database path as ``CALIBRATE_DB_PATH``. Kept per session
    rather than per process so tests can point each app run at its own database.
    """
    settings = st.session_state.get(_SETTINGS_KEY)
    if not isinstance(settings, AppSettings):
        settings = AppSettings()
        st.session_state[_SETTINGS_KEY] = settings
    return settings


def check_served_files() -> None:
    """Streamlit's settings files are the user's alone (checked once per working folder).

    ``calibrate app`` checks them before Streamlit starts; this also covers a plain
    ``streamlit run``, before any page can read a secret. A refusal is not cached.
    """
    _check_served_files(os.getcwd(), str(Path.home()))


@st.cache_resource(show_spinner=False)
def _check_served_files(cwd: str, home: str) -> None:
    # Keyed by the folders the files are read from: a process whose working folder changed
    # (an AppTest after another, in one test process) must not reuse another folder's pass.
    del home
    check_streamlit_files(cwd)


def _close_workspace(workspace: Workspace) -> None:
    workspace.close()


@st.cache_resource(show_spinner=False, on_release=_close_workspace)
def _open_workspace(path: str, lock_timeout: float) -> Workspace:
    # A DatabaseLockedError raised here is not cached, so a retry opens the file again.
    workspace = Workspace.open(path, lock_timeout=lock_timeout)
    workspace.labels  # noqa: B018 -- the label tables exist in every file the app opens
    return workspace


def _stop_command_server(server: CommandServer | None) -> None:
    if server is not None:
        server.stop()


@st.cache_resource(show_spinner=False, on_release=_stop_command_server)
def _command_server(path: str) -> CommandServer | None:
    # While the app holds the file no other process can open it, so `calibrate ...` commands
    # run in another terminal hand their command line to this server over a private local
    # socket, and it runs them here on the same open database (calibrate_app.command_server).
    try:
        return CommandServer(path).start()
    except (ChannelError, OSError) as error:
        # The app still serves browsers; only the CLI hand-off is off. Said once, where the
        # person who started the app reads it.
        print(f"calibrate: CLI commands cannot be handed to this app: {error}",
              file=sys.stderr, flush=True)
        return None


def get_workspace(settings: AppSettings | None = None) -> Workspace:
    """The workspace on the settings' database file: one per server process per path.

    Opening it also starts serving CLI commands for that file
    (:mod:`calibrate_app.command_server`).

    Raises:
        labels.errors.DatabaseLockedError: another process holds the file.
    """
    settings = settings or get_settings()
    path = str(settings.db_path)
    workspace = _open_workspace(path, settings.lock_timeout)
    if path != ":memory:":
        _command_server(path)
    return workspace


def get_store(settings: AppSettings | None = None) -> LabelStore:
    """The label store of :func:`get_workspace`."""
    return get_workspace(settings).labels


def release_store() -> None:
    """Close every store this process opened and stop serving CLI commands (tests)."""
    _command_server.clear()
    _open_workspace.clear()


# -- background jobs ------------------------------------------------------------------------

JobStatus = Literal["running", "done", "failed", "cancelled"]


class _HeapFreeze:
    """Keeps Python's cyclic garbage collector off the heap that running jobs built up.

    A judge run over 100,000 items plans its calls up front: about 1.5 million Python objects
    that live as long as the run. Every full collection then walks all of them, about 0.75 s
    with every thread of the server stopped, and a busy server triggers one about every second
    (measured: label latency p95 above 1 s, the judge itself 2.5 times slower). Once a job
    reports its first finished unit of work its setup is over, so the heap is frozen
    (``gc.freeze``: moved out of the collector's sight; reference counting still frees
    objects at once) and unfrozen when the last running job ends.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders: set[int] = set()

    def hold(self, job: BackgroundJob) -> None:
        with self._lock:
            gc.freeze()  # cumulative: a second job's setup is frozen on top of the first's
            self._holders.add(id(job))

    def release(self, job: BackgroundJob) -> None:
        with self._lock:
            if id(job) not in self._holders:
                return
            self._holders.discard(id(job))
            if not self._holders:
                gc.unfreeze()

    def settle(self) -> bool:
        """Freeze the server's long-lived heap when nothing is frozen; True if it did.

        Without a running job nothing is frozen, and an automatic full collection walks the
        ~170,000 objects of Streamlit, pandas and DuckDB's modules: 100-400 ms with the GIL
        held on a loaded 2-core machine, about every twentieth key press of the Label page.
        One collection first, so no garbage is frozen with them; a job that ends unfreezes
        everything (its setup's garbage must be collectable), and the next call freezes again.
        """
        with self._lock:
            if self._holders or gc.get_freeze_count():
                return False
            gc.collect()
            gc.freeze()
            return True


_HEAP = _HeapFreeze()


def settle_heap() -> None:
    """Keep the garbage collector off the server's long-lived objects (see ``_HeapFreeze``).

    Called by the Label page, whose key presses must not wait for a full collection. Only where
    Streamlit's own collection after every run is off, as ``calibrate app`` and the app's
    config.toml set it: with it on, freezing buys nothing (and AppTest processes, which keep
    Streamlit's default, are left alone).
    """
    from streamlit import config

    if not config.get_option("runner.postScriptGC"):
        _HEAP.settle()


@dataclass
class BackgroundJob:
    """A long task running in a thread of the server process (e.g. a judge run).

    The worker updates ``done``/``total``/``message`` through :meth:`advance`; pages read them
    from a polling fragment (``@st.fragment(run_every=...)``). ``st.*`` calls do nothing inside
    the worker thread, so it must only touch this object and the store.
    """

    key: str
    title: str
    total: int | None = None
    done: int = 0
    message: str = ""
    status: JobStatus = "running"
    error: str | None = None
    result: object = None
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _settled: bool = field(default=False, repr=False)

    def advance(self, done: int | None = None, *, total: int | None = None,
                message: str | None = None) -> None:
        """Report progress (called by the worker).

        The first report of a finished unit (``done > 0``) marks the end of the job's setup:
        see :class:`_HeapFreeze`.
        """
        if total is not None:
            self.total = total
        if done is not None:
            self.done = done
            if done > 0 and not self._settled:
                self._settled = True
                _HEAP.hold(self)
        if message is not None:
            self.message = message

    def cancel(self) -> None:
        """Ask the worker to stop at its next check of :attr:`cancelled`."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        """True once someone asked the job to stop."""
        return self._cancel.is_set()

    @property
    def running(self) -> bool:
        """True while the worker thread is alive."""
        return self.status == "running"

    def join(self, timeout: float | None = None) -> None:
        """Wait for the worker thread (tests, shutdown)."""
        if self._thread is not None:
            self._thread.join(timeout)


class JobRegistry:
    """Background jobs of this server process, by key. Thread-safe.

    One job per key runs at a time; starting a key that is running returns the running job.
    """

    def __init__(self) -> None:
        """Start with no jobs."""
        self._lock = threading.Lock()
        self._jobs: dict[str, BackgroundJob] = {}

    def start(self, key: str, title: str, work: Callable[[BackgroundJob], object]) -> BackgroundJob:
        """Run ``work(job)`` in a daemon thread; its return value becomes ``job.result``."""
        with self._lock:
            current = self._jobs.get(key)
            if current is not None and current.running:
                return current
            job = BackgroundJob(key=key, title=title)
            thread = threading.Thread(
                target=self._run, args=(job, work), name=f"calibrate-job-{key}", daemon=True
            )
            job._thread = thread
            self._jobs[key] = job
        thread.start()
        return job

    @staticmethod
    def _run(job: BackgroundJob, work: Callable[[BackgroundJob], object]) -> None:
        try:
            job.result = work(job)
            job.status = "cancelled" if job.cancelled else "done"
        except Exception as error:  # the page shows it; the thread must not die silently
            job.error = f"{type(error).__name__}: {error}"
            job.message = "".join(traceback.format_exception_only(error)).strip()
            job.status = "failed"
        finally:
            job.finished_at = datetime.now(UTC)
            _HEAP.release(job)

    def get(self, key: str) -> BackgroundJob | None:
        """The latest job started under ``key``, running or finished."""
        with self._lock:
            return self._jobs.get(key)

    def jobs(self) -> list[BackgroundJob]:
        """Every job of this process, newest first."""
        with self._lock:
            return sorted(self._jobs.values(), key=lambda j: j.started_at, reverse=True)


@st.cache_resource(show_spinner=False)
def get_jobs() -> JobRegistry:
    """The background-job registry of this server process (one, shared by all sessions)."""
    return JobRegistry()


# -- labelling queue ------------------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def get_holds() -> Holds:
    """Which rows annotators are looking at right now, shared by all sessions."""
    return Holds()


@st.cache_resource(show_spinner=False)
def get_label_tally() -> LabelTally:
    """Who labelled which row, read incrementally and shared by all sessions."""
    return LabelTally()


@st.cache_resource(show_spinner=False)
def get_save_lock() -> threading.Lock:
    """Serialises the check-then-insert of a label, so two tabs cannot both add a first label."""
    return threading.Lock()


_JUDGE_ORDERS = label_queue.JUDGE_ORDERS

PLAN_REFRESH_S = 30.0
"""Youngest age (seconds) of a judge-based queue plan that is rebuilt for newer verdicts."""


@dataclass
class _PlanSlot:
    plan: QueuePlan
    fingerprint: str
    checked_at: float  # when ``fingerprint`` was last read (or the plan built)
    refreshing: bool = False


class QueuePlans:
    """The queue plans of this process, one per (file, dataset, item count, order, seed).

    Imports only ever add rows, so the item count tells a plan is out of date. The judge-based
    orders also depend on the judge's verdicts, which change with every call a running judge
    stores: rebuilding their plan for each key press cost seconds at 1,000,000 items. The
    verdicts' fingerprint (a count over every call) is therefore read at most once per
    ``refresh`` seconds per plan, in a background thread (never in the rerun of a key press);
    a plan for older verdicts is rebuilt there, and served as it is until the new one is
    ready. A row's labels record the stratum, probability and judge of the plan that served it
    (taken when the row is first shown), so the report stays right. Only the first plan of a
    key is built on the page's path, once (a lock per key: sessions asking at the same time
    wait for it). Thread-safe.
    """

    def __init__(self, refresh: float = PLAN_REFRESH_S, max_entries: int = 32) -> None:
        """Start empty."""
        self._refresh = refresh
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self._slots: dict[tuple[object, ...], _PlanSlot] = {}
        self._building: dict[tuple[object, ...], threading.Lock] = {}

    def get(self, workspace: Workspace, dataset: str, item_count: int,
            settings: QueueSettings, criterion: str | None = None) -> QueuePlan:
        """The plan for ``settings`` (built now only when there is none yet).

        The escalated order's plan is per criterion and escalation (a new rule, or the same
        rule recorded again, gives a new plan); the other orders are shared by the criteria.
        """
        key: tuple[object, ...] = (workspace.db.path, dataset, item_count, settings.order,
                                   settings.seed)
        if settings.order == "escalated":
            key += (criterion,
                    criterion and workspace.labels.escalation_stamp(dataset, criterion))
        with self._lock:
            slot = self._slots.get(key)
            if slot is not None:
                if not slot.refreshing and settings.order in _JUDGE_ORDERS \
                        and time.monotonic() - slot.checked_at >= self._refresh:
                    slot.refreshing = True
                    threading.Thread(
                        target=self._refresh_slot, args=(slot, workspace, dataset, settings),
                        name="calibrate-queue-plan", daemon=True,
                    ).start()
                return slot.plan
        with self._lock:
            building = self._building.setdefault(key, threading.Lock())
        with building:  # the first plan of a key is built once, however many sessions ask
            with self._lock:
                slot = self._slots.get(key)
            if slot is not None:
                return slot.plan
            checked_at = time.monotonic()
            fingerprint = label_queue.fingerprint(workspace, dataset) \
                if settings.order in _JUDGE_ORDERS else ""
            plan = label_queue.build_queue_plan(workspace, dataset, settings.order,
                                                settings.seed, criterion)
            with self._lock:
                self._slots[key] = _PlanSlot(plan, fingerprint, checked_at)
                self._building.pop(key, None)
                while len(self._slots) > self._max_entries:
                    del self._slots[next(iter(self._slots))]
            return plan

    def _refresh_slot(self, slot: _PlanSlot, workspace: Workspace, dataset: str,
                      settings: QueueSettings) -> None:
        """Compare ``slot``'s verdicts with the stored ones; rebuild its plan if they moved.

        Runs in its own thread while ``slot.refreshing`` is set, so no other thread changes
        the slot meanwhile. Checked either way: unchanged verdicts are not read again for
        ``refresh`` seconds.
        """
        rebuilt: tuple[QueuePlan, str] | None = None
        try:
            fingerprint = label_queue.fingerprint(workspace, dataset)
            with self._lock:
                if slot.fingerprint == fingerprint:
                    slot.checked_at, slot.refreshing = time.monotonic(), False
                    return
            rebuilt = (label_queue.build_queue_plan(workspace, dataset, settings.order,
                                                    settings.seed), fingerprint)
        except Exception:  # keep serving the old plan; the next check tries again
            _log.exception("rebuilding the %s queue plan of %r failed", settings.order, dataset)
        with self._lock:
            if rebuilt is not None:
                slot.plan, slot.fingerprint = rebuilt
            slot.checked_at, slot.refreshing = time.monotonic(), False

    def wait(self, timeout: float = 30.0) -> None:
        """Return once no check or rebuild is running (tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not any(slot.refreshing for slot in self._slots.values()):
                    return
            time.sleep(0.01)


@st.cache_resource(show_spinner=False)
def get_queue_plans() -> QueuePlans:
    """The queue plans of this server process, shared by every annotator."""
    return QueuePlans()


def queue_plan(
    store: LabelStore, dataset: str, item_count: int, settings: QueueSettings,
    criterion: str | None = None,
) -> QueuePlan:
    """The dataset's queue order, computed once per process and shared by every annotator.

    ``store`` is the label store of the database (:func:`get_store`); ``criterion`` picks the
    escalation the escalated order serves.
    """
    return get_queue_plans().get(Workspace.of(store), dataset, item_count, settings, criterion)


def _discard_upload(folder: UploadFolder) -> None:
    folder.discard()


@st.cache_resource(show_spinner=False, scope="session", on_release=_discard_upload)
def session_uploads() -> UploadFolder:
    """This browser session's private upload folder; deleted when the session ends."""
    return UploadFolder()
