"""The Label page's own-work tools: "My labels" (M), the guidelines panel (G), the status line.

"My labels" lists the signed-in (or named) annotator's own labels and skipped rows, read by
:meth:`labels.LabelStore.own_history`, which filters by that annotator in its SQL: the list is
blind to other annotators by construction. Every value in it (notes, tags, questions, ids) is
shown with ``st.text``; only constant words go into labels and captions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence

import streamlit as st

from calibrate_app import resources, state, widgets
from labels import Criterion, LabelStore
from labels.models import SKIPPED, OwnRow

HISTORY_KEY, GUIDELINES_KEY = "M", "G"
PAGE_ROWS = 8
"""Rows per page of "My labels": each is one text block and an Open button."""
_ALL = "all"
_SEARCH, _SHOW, _PAGE = "history_search", "history_show", "history_page"
_NOTE_CHARS, _QUESTION_CHARS = 300, 200

Opener = Callable[[str, str], None]
"""Called with (item id, status) when the annotator opens a row of the list."""


def _clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(row: OwnRow) -> str:
    """The plain-text block that shows one row of the list (rendered with ``st.text``)."""
    when = row.at.strftime("%Y-%m-%d %H:%M UTC") if row.at.tzinfo else str(row.at)
    if row.status == SKIPPED:
        head = f"{when} · SKIPPED · id {row.item_id}"
    else:
        versions = f" · {row.versions} versions" if row.versions > 1 else ""
        head = f"{when} · {str(row.verdict).upper()}{versions} · id {row.item_id}"
    lines = [head, _clip(row.question, _QUESTION_CHARS)]
    if row.failure_tags:
        lines.append("Tags: " + ", ".join(row.failure_tags))
    if row.note:
        lines.append("Note: " + _clip(row.note, _NOTE_CHARS))
    return "\n".join(lines)


def _reset_page() -> None:
    state.set_value(_PAGE, 0)


def _turn(step: int) -> None:
    state.set_value(_PAGE, max(int(state.widget_value(_PAGE, 0) or 0) + step, 0))


def history_dialog(store: LabelStore, scope: state.Scope, verdicts: Sequence[str],
                   on_open: Opener) -> None:
    """Open "My labels": the annotator's rows of ``scope``, searchable, each one click away.

    ``scope`` is (dataset, criterion, annotator); ``verdicts`` are the dataset kind's verdict
    words, offered as filters with ``skipped``. ``on_open`` runs as the Open button's callback,
    then the whole page reruns, which closes the drawer and shows the row.
    """
    dataset, criterion, annotator = scope

    @st.dialog("My labels", width=640, position="right")
    def show() -> None:
        search_col, show_col = st.columns([3, 2], vertical_alignment="bottom")
        search = search_col.text_input(
            "Search your notes, tags, row ids and questions", key=_SEARCH,
            placeholder="Type, then Enter", on_change=_reset_page)
        choices = [_ALL, *verdicts, SKIPPED]
        shown = show_col.selectbox("Show", choices, key=_SHOW, on_change=_reset_page)
        page = int(state.widget_value(_PAGE, 0) or 0)
        history = store.own_history(
            dataset, criterion, annotator, search=str(search or ""),
            verdict=None if shown in (None, _ALL) else str(shown), limit=PAGE_ROWS,
            offset=page * PAGE_ROWS)
        if page and not history.rows and history.matching:  # the list shrank under the page
            _reset_page()
            st.rerun(scope="fragment")
        first = page * PAGE_ROWS + 1 if history.rows else 0
        last = page * PAGE_ROWS + len(history.rows)
        st.caption(
            f"{history.labelled:,} labelled and {history.skipped:,} skipped by you here; "
            f"{history.matching:,} match"
            + (f", showing {first:,}–{last:,}" if history.rows else "")
            + ". Only you see this list. Tab to a row's Open, then Enter; Esc closes.")
        if not history.rows:
            st.info("Nothing matches." if history.labelled or history.skipped else
                    "You have not labelled or skipped any row here yet.")
        for n, row in enumerate(history.rows):
            with st.container(border=True, key=f"history_row_{n}", horizontal=True,
                              vertical_alignment="center"):
                st.text(describe(row), width="stretch")
                if st.button("Open", key=f"history_open_{n}", on_click=on_open,
                             args=(row.item_id, row.status), icon=":material/open_in_new:"):
                    st.rerun()  # the whole page: closes the drawer and shows the row
        with st.container(horizontal=True, key="history_pages"):
            st.button("Newer", key="history_newer", disabled=page == 0,
                      icon=":material/chevron_left:", on_click=_turn, args=(-1,))
            st.button("Older", key="history_older",
                      disabled=first == 0 or last >= history.matching,
                      icon=":material/chevron_right:", on_click=_turn, args=(1,))
        # Straight into the search box, so M, a few letters and Enter find a row.
        widgets.focus_in_dialog(f".st-key-{_SEARCH} input", f"h{time.monotonic_ns()}")

    show()


def open_row(store: LabelStore, scope: state.Scope, item_id: str, status: str, *,
             assigned: Collection[str]) -> None:
    """Show a row opened from "My labels": an earlier label to revise, or a skipped row.

    A labelled row is revisited exactly as Back reaches it (``queue.back`` counts back through
    :meth:`LabelStore.labelled_in_order`), so a new verdict is saved with the provenance its
    row was first served with (:meth:`LabelStore.current_provenance`), as an edit after Back
    is. A skipped row becomes this tab's queue row, as when the queue serves it at the end: it
    is held, and its label records how the plan that serves it chose it. A skipped row that no
    longer needs this annotator (others filled its overlap, and it is not in ``assigned``, the
    rows assigned to them) is not opened.
    """
    dataset, criterion, annotator = scope
    queue = state.queue_state(scope)
    order = store.labelled_in_order(dataset, annotator, criterion)
    if item_id in order:  # also a skipped row labelled since, in another tab
        queue.back = len(order) - order.index(item_id)
        queue.from_history = True
        return
    if status != SKIPPED:
        state.flash("warning", "That label is no longer yours to revise here.")
        return
    hold_scope = (store.db.path, dataset, criterion)
    holds = resources.get_holds()
    others = {label.annotator for label in store.history(dataset, item_id, criterion=criterion)}
    taken = len(others) + holds.held_by_others(hold_scope, annotator).get(item_id, 0)
    if item_id not in assigned and taken >= store.queue_settings(dataset, criterion).overlap:
        state.flash("info", "That skipped row has all the labels it needs now, so it has "
                            "left your queue.")
        return
    queue.back, queue.from_history = 0, False
    queue.current, queue.provenance = item_id, None  # provenance: from the serving plan
    holds.hold(hold_scope, annotator, item_id)


def history_button(store: LabelStore, scope: state.Scope, verdicts: Sequence[str],
                   on_open: Opener) -> None:
    """The "My labels" button (key M); pressing it opens :func:`history_dialog`."""
    # No icon on this button or the guidelines toggle: without them both fit one line of the
    # question row at 800 px, which leaves the evidence 55 px more.
    if st.button("My labels", key="nav_history", shortcut=HISTORY_KEY,
                 help="Your labels and skipped rows (M)"):
        history_dialog(store, scope, verdicts, on_open)


def side_column(store: LabelStore, scope: state.Scope, criterion: Criterion,
                verdicts: Sequence[str], on_open: Opener, *, first_row: bool) -> None:
    """The Guidelines and My labels buttons, and the guidelines panel when it is open.

    The panel is open by default on ``first_row`` (the progress line reads 0: a criterion's
    first row for this annotator), then as this tab last left it (G).
    """
    chosen = state.guidelines_open(criterion.name)
    show = chosen if chosen is not None else first_row
    # One horizontal container: the panel, when open, is placed by the page's CSS out of the
    # row (a container for the two buttons would be one more message on every key press).
    with st.container(horizontal=True, key="side_column", horizontal_alignment="right"):
        guidelines_button(criterion.name, show)
        history_button(store, scope, verdicts, on_open)
        if show:
            guidelines_panel(criterion)


def guidelines_button(criterion: str, is_open: bool) -> None:
    """The guidelines toggle (key G): primary while the panel is open."""
    st.button("Guidelines", key="nav_guidelines", shortcut=GUIDELINES_KEY,
              type="primary" if is_open else "secondary",
              on_click=state.set_guidelines_open, args=(criterion, not is_open),
              help="Show or hide the guidelines panel (G)")


def guidelines_panel(criterion: Criterion) -> None:
    """The criterion's guidelines as a side panel (the page's CSS places it), as written.

    Anyone with the access code can edit them on the Data page, and the CLI imports them, so
    they are shown literally like row text rather than rendered as markdown.
    """
    with st.container(key="guidelines_panel", border=True):
        st.caption(f"Guidelines: {widgets.escape_markdown(criterion.name)} · G hides them")
        if criterion.guidelines.strip():
            widgets.literal(criterion.guidelines)
        else:
            st.caption("No guidelines written yet (the Data page edits them).")
        if criterion.failure_tags:
            st.caption("Failure tags (keys 1–9)")
            widgets.literal("\n".join(f"{n}. {tag}" for n, tag in
                                      enumerate(criterion.failure_tags[:9], start=1)))


def status_line(text: str | None) -> None:
    """The last save's confirmation, in a line that keeps its height when empty.

    In place of a toast: Streamlit's toasts appear over the top right corner of the page,
    where they covered the switch-user / sign-out button for four seconds after every label.
    A caption of its own, in no container: the page's CSS finds it in the progress container.
    """
    st.caption(widgets.escape_markdown(text) if text else "\u00a0")
