"""The only module that names ``st.session_state`` keys, with typed getters and setters.

Session state is per browser tab and lives as long as its websocket. What must survive a reload
lives elsewhere: the annotator, dataset and criterion in the URL query parameters, the labels in
the database.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from labels import Provenance
from labels.sampling import QueuePlan

_ACCESS = "_calibrate_access_ok"
_QUEUES = "_calibrate_queues"
_FLASH = "_calibrate_flash"
_REMEMBERED = "_calibrate_remembered"
_UPLOADS = "_calibrate_upload_generation"
_KEPT = "_calibrate_kept_widgets"
_DISMISSED = "_calibrate_dismissed_jobs"
_VISITOR = "_calibrate_visitor_of_this_run"
_GUIDELINES = "_calibrate_guidelines_open"
_PENDING = object()  # the entry point started a run whose visitor is not known yet

Scope = tuple[str, str, str]
"""(dataset, criterion, annotator): one annotator's queue."""


@dataclass
class QueueState:
    """Per-tab state of one annotator's queue.

    Attributes:
        back: 0 while labelling new rows; k > 0 while revisiting the k-th most recent own label.
        from_history: the label being revisited was opened from "My labels": saving it or
            Next returns to the queue, where Back's revisits step forward one label.
        shown_at: item id → monotonic time it was first shown (for ``seconds_spent``).
        pending: item id → verdict chosen with Shift+key, saved with the note on Ctrl+Enter.
        tags: item id → failure tags toggled so far.
        current: the queue's row for this annotator (kept until labelled or skipped).
        showing: the row the last run put on screen (a queue row or one being revisited);
            button presses for any other row are stale and ignored.
        settled: (weak reference to a queue plan, overlap, n): the first n rows of that plan
            are labelled, full or skipped for this annotator
            (:func:`labels.sampling.settled_prefix`), so the search for the next row starts
            at n.
        provenance: (item id, how the queue chose it) for ``current``, taken once when it
            became current, from the plan that served it: the plan may be rebuilt while the
            row is on screen (newer verdicts, an import), and the label must record the
            stratum, probability and judge it was actually served under.
        skipped: the rows this annotator skipped here, oldest skip first, as read at this
            tab's last full page run and kept up to date by its own skips (a key press then
            costs no query for them); None: read them again.
    """

    back: int = 0
    from_history: bool = False
    shown_at: dict[str, float] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)
    tags: dict[str, list[str]] = field(default_factory=dict)
    current: str | None = None
    showing: str | None = None
    settled: tuple[weakref.ref[QueuePlan], int, int] | None = None
    provenance: tuple[str, Provenance] | None = None
    skipped: list[str] | None = None

    def mark_shown(self, item_id: str) -> None:
        """Start the clock for ``item_id`` unless it is already running."""
        self.shown_at.setdefault(item_id, time.monotonic())

    def seconds_on(self, item_id: str) -> float | None:
        """Seconds since ``item_id`` was first shown in this tab, or None."""
        started = self.shown_at.get(item_id)
        return None if started is None else round(time.monotonic() - started, 3)

    def forget(self, item_id: str) -> None:
        """Drop the per-row scratch state of ``item_id`` once its label is saved."""
        self.shown_at.pop(item_id, None)
        self.pending.pop(item_id, None)
        self.tags.pop(item_id, None)

    def leave_revisit(self) -> None:
        """Leave a revisited label: to the next newer one, or to the queue after "My labels"."""
        self.back = 0 if self.from_history else max(self.back - 1, 0)
        self.from_history = False

    def toggle_tag(self, item_id: str, tag: str) -> None:
        """Add or remove a failure tag on ``item_id``."""
        chosen = self.tags.setdefault(item_id, [])
        if tag in chosen:
            chosen.remove(tag)
        else:
            chosen.append(tag)


def queue_state(scope: Scope) -> QueueState:
    """The state of one annotator's queue in this tab (created on first use)."""
    queues: dict[Scope, QueueState] = st.session_state.setdefault(_QUEUES, {})
    if scope not in queues:
        queues[scope] = QueueState()
    return queues[scope]


def access_granted() -> bool:
    """True once this tab entered the right access code."""
    return bool(st.session_state.get(_ACCESS, False))


def grant_access() -> None:
    """Remember for this tab that the access code was right."""
    st.session_state[_ACCESS] = True


def start_visitor_run() -> None:
    """Forget the previous run's visitor; the entry point calls this first on every run."""
    st.session_state[_VISITOR] = _PENDING


def run_visitor() -> tuple[bool, Any]:
    """(whether this run may keep its visitor, the visitor kept so far or None).

    Only a run the entry point started keeps one (:func:`start_visitor_run`); a page script
    run any other way works its visitor out at each call.
    """
    value = st.session_state.get(_VISITOR)
    if value is None:
        return False, None
    return True, None if value is _PENDING else value


def keep_run_visitor(value: Any) -> None:
    """Keep this run's visitor for the rest of the run (see :func:`run_visitor`)."""
    st.session_state[_VISITOR] = value


def flash(kind: str, message: str) -> None:
    """Queue a message (``success``/``info``/``warning``/``error``) for the next run to show."""
    st.session_state[_FLASH] = (kind, message)


def pop_flash() -> tuple[str, str] | None:
    """The queued message, removed; None when there is none."""
    value: Any = st.session_state.pop(_FLASH, None)
    return value if isinstance(value, tuple) else None


def widget_value(key: str, default: Any = None) -> Any:
    """The current value of the widget with ``key`` (``default`` before it first renders)."""
    return st.session_state.get(key, default)


def prefill_widget(key: str, value: Any) -> None:
    """Give a widget ``value`` unless it already has one (the user's edits win)."""
    st.session_state.setdefault(key, value)


def set_value(key: str, value: Any) -> None:
    """Set a session value that no widget owns (e.g. a pending confirmation)."""
    st.session_state[key] = value


def clear_widget(key: str) -> None:
    """Forget a widget's value so it renders empty next time."""
    st.session_state.pop(key, None)


def remember(name: str, value: str | None) -> None:
    """Keep a URL parameter's value for this tab (navigating between pages drops the URL's)."""
    remembered: dict[str, str] = st.session_state.setdefault(_REMEMBERED, {})
    if value is None:
        remembered.pop(name, None)
    else:
        remembered[name] = value


def remembered(name: str) -> str | None:
    """The value :func:`remember` kept for ``name``, if any."""
    value = st.session_state.get(_REMEMBERED, {}).get(name)
    return value if isinstance(value, str) else None


def upload_key() -> str:
    """The file uploader's widget key; :func:`reset_upload` changes it to empty the widget."""
    return f"upload_{int(st.session_state.get(_UPLOADS, 0))}"


def reset_upload() -> None:
    """Empty the file uploader on the next run (after its file was imported and deleted)."""
    st.session_state[_UPLOADS] = int(st.session_state.get(_UPLOADS, 0)) + 1


def keep(key: str) -> str:
    """Keep the value of the widget ``key`` while it is not on screen; returns ``key``.

    Streamlit forgets a widget's value at the end of any run that does not draw it: a switch
    to another page, or to another judge config whose editor has its own key, would lose
    unsaved edits and choices. :func:`keep_alive` (run by the entry point on every run)
    re-saves the kept keys, which stops that clean-up for them.
    """
    kept: set[str] = st.session_state.setdefault(_KEPT, set())
    kept.add(key)
    return key


def keep_alive() -> None:
    """Re-save every kept widget value (see :func:`keep`); call once at the top of each run."""
    for key in list(st.session_state.get(_KEPT, ())):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def kept_keys(prefix: str) -> list[str]:
    """Kept widget keys starting with ``prefix`` that hold a value."""
    return sorted(k for k in st.session_state.get(_KEPT, ())
                  if k.startswith(prefix) and k in st.session_state)


def dismiss_job(job_id: str) -> None:
    """Hide a finished background job's card in this tab."""
    dismissed: set[str] = st.session_state.setdefault(_DISMISSED, set())
    dismissed.add(job_id)


def job_dismissed(job_id: str) -> bool:
    """Whether this tab dismissed the job's card."""
    return job_id in st.session_state.get(_DISMISSED, set())


def guidelines_open(criterion: str) -> bool | None:
    """Whether this tab's guidelines panel of ``criterion`` was toggled open (None: never)."""
    value = st.session_state.get(_GUIDELINES, {}).get(criterion)
    return value if isinstance(value, bool) else None


def set_guidelines_open(criterion: str, is_open: bool) -> None:
    """Remember for this tab that the guidelines panel of ``criterion`` is open or closed."""
    chosen: dict[str, bool] = st.session_state.setdefault(_GUIDELINES, {})
    chosen[criterion] = is_open
