"""Label page: one row at a time, keyboard only, blind to judges and to other annotators.

Every verdict is written in the button's callback, which Streamlit runs before the page script:
the label is committed (``LabelStore.add_label`` returns after COMMIT) before the next row is
rendered. Who is labelling, the dataset and the criterion live in the URL, so a reload resumes.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

from calibrate_app import access, label_history, queue_settings_view, resources, state, widgets
from judges.workflows.queue import QueueCounts
from labels import LabelStore, Provenance
from labels.assignments import assignment_progress, open_elsewhere
from labels.errors import AlreadyLabelledError, CalibrateError
from labels.models import DEFAULT_CRITERION, Criterion, Item, Kind
from labels.sampling import (
    Progress,
    QueuePlan,
    QueueSettings,
    next_item,
    progress,
    settled_prefix,
)

NAME_PATTERN = re.compile(r"^[\w][\w .@-]{0,63}$")

# (verdict, button text, key) per dataset kind.
VERDICTS: dict[Kind, list[tuple[str, str, str]]] = {
    "pointwise": [("pass", "Pass", "P"), ("fail", "Fail", "F"), ("unsure", "Unsure", "U")],
    "pairwise": [("a", "A is better", "A"), ("b", "B is better", "B"), ("tie", "Tie", "T")],
}
SKIP_KEY, BACK_KEY, HELP_KEY, SAVE_NOTE_KEY = "S", "Left", "H", "Ctrl+Enter"
# The note box's widget key, the same on every row (its value is reset on a new row), and the
# hidden text box holding the token of the row the browser last received (see _stale). No
# docstrings here: Streamlit would show a bare string of a page script on the page.
NOTE_KEY, SEEN_KEY = "note", "row_seen"


@dataclass(frozen=True)
class Row:
    """What a button callback needs to know about the row on screen."""

    store: LabelStore
    dataset: str
    criterion: str
    annotator: str
    item_id: str
    token: str  # a short hash of (dataset, criterion, item): names the row to the browser
    editing: bool
    provenance: Provenance  # how the queue chose this row (issue 13), saved with its label

    def key(self, name: str) -> str:
        """The widget key of ``name`` on this row: the same on every row.

        A button whose key changed mounts anew in the browser, which cost ~30 ms on every key
        press. A key pressed twice in quick succession must still not apply to a row the
        annotator has not seen yet: :func:`_stale` compares the row the browser last received
        (:data:`SEEN_KEY`) with the row the press is for.
        """
        return name

    @property
    def scope(self) -> state.Scope:
        """The (dataset, criterion, annotator) this annotator's queue state is kept under."""
        return (self.dataset, self.criterion, self.annotator)

    @property
    def hold_scope(self) -> tuple[str, str, str]:
        """The scope of the row holds shared by every annotator of this dataset and criterion."""
        return (self.store.db.path, self.dataset, self.criterion)


# -- callbacks (run before the page script, so the page shows their effect) ------------------


def _stale(row: Row) -> bool:
    """True when a press belongs to a row that is no longer on screen (a quick double press).

    The buttons keep their keys from row to row, so a second press sent before the browser
    received the next row arrives with that next row's callback arguments; the hidden
    :data:`SEEN_KEY` box, which every press sends with the browser's widget values, still
    names the row on screen then.
    """
    seen = state.widget_value(SEEN_KEY)
    return state.queue_state(row.scope).showing != row.item_id or (
        seen is not None and seen != row.token)


def _save(row: Row, verdict: str) -> None:
    if _stale(row):
        return
    queue = state.queue_state(row.scope)
    note = str(state.widget_value(NOTE_KEY) or "").strip()
    tags = list(queue.tags.get(row.item_id, []))
    with resources.get_save_lock():
        # Checked in the transaction that saves: another tab of the same annotator may have
        # labelled this row.
        try:
            row.store.add_label(
                row.dataset, row.item_id, row.annotator, verdict, criterion=row.criterion,
                note=note, failure_tags=tags, seconds_spent=queue.seconds_on(row.item_id),
                provenance=row.provenance, new_only=not row.editing,
            )
        except AlreadyLabelledError:
            state.flash("warning", "You had already labelled that row (in another tab?); "
                                   "your earlier label stands. Here is the next one.")
            _leave(row)
            return
        except CalibrateError as error:
            state.flash("error", f"Not saved: {error}")
            return
    word = "Edited" if row.editing else "Saved"
    state.flash("toast", f"{word}: {verdict}" + (" with a note" if note else ""))
    _leave(row)


def _provenance(plan: QueuePlan, item_id: str) -> Provenance:
    """How a row was chosen: the queue order, stratum, probability and judge (issue 13).

    Taken from the plan that served the row (which names the judge config its verdicts came
    from), so saving the label costs no query for it.
    """
    return Provenance(**plan.provenance(item_id))  # type: ignore[arg-type]


def _leave(row: Row) -> None:
    queue = state.queue_state(row.scope)
    queue.forget(row.item_id)
    if row.editing:
        queue.leave_revisit()
    elif queue.current == row.item_id:
        queue.current = None
        resources.get_holds().release(row.hold_scope, row.annotator)


def _choose(row: Row, verdict: str) -> None:
    if _stale(row):
        return
    queue = state.queue_state(row.scope)
    queue.pending[row.item_id] = verdict


def _skip(row: Row) -> None:
    if _stale(row):
        return
    queue = state.queue_state(row.scope)
    if row.editing:
        queue.leave_revisit()
        return
    # Stored, so the row stays at the end of this annotator's queue after a reload too.
    row.store.skip(row.dataset, row.criterion, row.annotator, row.item_id)
    if queue.skipped is not None:  # as stored: a row skipped again moves to the end
        queue.skipped = [i for i in queue.skipped if i != row.item_id] + [row.item_id]
    queue.current = None
    resources.get_holds().release(row.hold_scope, row.annotator)


def _back(scope: state.Scope) -> None:
    queue = state.queue_state(scope)
    queue.back += 1
    queue.from_history = False  # stepping back from here: forward again one label at a time


def _toggle_tag(row: Row, tag: str) -> None:
    if not _stale(row):
        state.queue_state(row.scope).toggle_tag(row.item_id, tag)


def _set_param(name: str, widget_key: str) -> None:
    value = state.widget_value(widget_key)
    if value is None:
        st.query_params.pop(name, None)
        state.remember(name, None)
    else:
        st.query_params[name] = str(value)
        state.remember(name, str(value))


# -- page sections ----------------------------------------------------------------------------


def _who(store: LabelStore) -> str:
    """The annotator named in the URL; otherwise ask once and put the name in the URL."""
    name = st.query_params.get("user") or state.remembered("user") or ""
    if NAME_PATTERN.match(name):
        if st.query_params.get("user") != name:
            st.query_params["user"] = name
        state.remember("user", name)
        return name
    st.subheader("Who is labelling?")
    st.caption(access.mode_caption(access.LOCAL))
    st.caption(
        "Your name goes into the page address, so a reload (or a bookmark) resumes where you "
        "stopped. Labels are never shown to other annotators while they label."
    )
    known = store.annotators()
    with st.form("who"):
        picked = None
        if known:
            picked = st.selectbox("Your name", known, index=None, placeholder="Pick your name")
        typed = st.text_input("New name" if known else "Your name", max_chars=64)
        go = st.form_submit_button("Start labelling", type="primary")
    if go:
        chosen = (typed or picked or "").strip()
        if NAME_PATTERN.match(chosen):
            store.add_annotator(chosen)
            st.query_params["user"] = chosen
            st.rerun()
        st.error("A name is 1-64 letters, digits, spaces, dots, @, _ or -, starting with a "
                 "letter or digit.")
    st.stop()


def _pick(label: str, options: list[str], param: str, default: str | None) -> str:
    """A dropdown whose value lives in the URL parameter ``param`` (``default`` when absent)."""
    wanted = st.query_params.get(param) or state.remembered(param)
    if wanted not in options:
        wanted = default if default in options else options[0]
    if st.query_params.get(param) != wanted:
        st.query_params[param] = wanted
    state.remember(param, wanted)
    key = f"pick_{param}"
    if state.widget_value(key) not in options:
        state.clear_widget(key)
    return str(st.selectbox(label, options, index=options.index(wanted), key=key,
                            on_change=_set_param, args=(param, key)))


def _help() -> None:
    @st.dialog("Keyboard shortcuts", width="medium")
    def show() -> None:
        st.markdown(
            """
| key | what it does |
|---|---|
| **P** / **F** / **U** | save Pass / Fail / Unsure (with any note and tags), next row |
| **A** / **B** / **T** | the same for pairwise rows: A is better / B is better / Tie |
| **Shift + verdict key** | choose that verdict and jump into the note box |
| **Ctrl + Enter** | save the chosen verdict with the note (works while typing) |
| **1** … **9** | toggle failure tag 1 … 9 |
| **S** | skip: the row goes to the end of your queue |
| **J** / **K** | scroll the sources down / up |
| **N** / **Shift + N** | next / previous source passage (**Enter** opens a folded one) |
| **]** / **[** | next / previous answer sentence (or click one): marks its sources |
| **←** (Left arrow) | back to your previous label; a verdict saves a new version |
| **M** | My labels: your labels and skipped rows, searchable; open any of them |
| **G** | show or hide the guidelines panel |
| **?** or **H** | this help; **Esc** closes it |

Letter keys do nothing while the cursor is in the note box; click outside it or press
**Tab** to leave it. You never see the judge's verdicts or other annotators' labels here.
"""
        )

    show()


def _first_open(store: LabelStore, annotator: str) -> tuple[str | None, str | None]:
    """The first (dataset, criterion) that still has rows for ``annotator``, if any.

    Only when the URL and this tab name no dataset yet: a newcomer should not land on a
    dataset that is already fully labelled.
    """
    if st.query_params.get("dataset") or state.remembered("dataset"):
        return None, None
    work = store.open_work(annotator)
    return (work[0][0], work[0][1]) if work else (None, None)


def _top_bar(store: LabelStore, annotator: str,
             who: access.Visitor) -> tuple[str, Kind, Criterion] | None:
    kinds = store.dataset_kinds()
    if not kinds:
        st.info("No datasets yet: import one on the Data page." if who.may_open("data") else
                "No datasets yet: an owner imports them.")
        access.page_link("data", "Go to Data", ":material/upload_file:")
        return None
    open_dataset, open_criterion = _first_open(store, annotator)
    cols = st.columns([3, 3, 2], vertical_alignment="bottom")
    with cols[0]:
        dataset = _pick("Dataset", list(kinds), "dataset", open_dataset)
    kind = kinds[dataset]
    criteria = {c.name: c for c in store.criteria() if c.kind == kind}
    if not criteria:
        st.error(f"There is no {widgets.escape_markdown(kind)} criterion to label against; add "
                 "one on the Data page.")
        return None
    default = open_criterion or (DEFAULT_CRITERION if kind == "pointwise" else None)
    with cols[1]:
        criterion = _pick("Criterion", list(criteria), "criterion", default)
    with cols[2]:
        if who.team:
            access.sign_out_button(help=access.mode_caption(who))
        elif st.button(f"Not {widgets.escape_markdown(annotator)}?", key="switch_user",
                       type="tertiary", icon=":material/person:",
                       help=access.mode_caption(who)):
            st.query_params.pop("user", None)
            state.remember("user", None)
            st.rerun()
    return dataset, kind, criteria[criterion]


def _hand_back_keys(kind: Kind) -> dict[str, str]:
    """Letter keys -> their buttons, for a key pressed while a dropdown has focus.

    The verdict, skip, My labels and guidelines keys.
    """
    keys = {key: f".st-key-verdict_{verdict} button" for verdict, _, key in VERDICTS[kind]}
    keys[SKIP_KEY] = ".st-key-nav_skip button"
    keys[label_history.HISTORY_KEY] = ".st-key-nav_history button"
    keys[label_history.GUIDELINES_KEY] = ".st-key-nav_guidelines button"
    return keys


def _verdict_bar(row: Row, kind: Kind, criterion: Criterion, pending: str | None,
                 chosen_tags: list[str]) -> None:
    choices = VERDICTS[kind]
    # One horizontal container, not seven columns: every block is a message to the browser
    # on each key press. The page's CSS sets the gap before Back.
    with st.container(horizontal=True, key="button_bar", vertical_alignment="center"):
        for verdict, text, key in choices:
            st.button(
                text, key=row.key(f"verdict_{verdict}"), shortcut=key, width="stretch",
                type="primary" if pending == verdict else "secondary",
                on_click=_save, args=(row, verdict),
            )
        st.button("Back", key="nav_back", shortcut=BACK_KEY, width="stretch",
                  icon=":material/undo:", on_click=_back, args=(row.scope,))
        st.button("Next" if row.editing else "Skip", key=row.key("nav_skip"),
                  shortcut=SKIP_KEY, width="stretch", icon=":material/redo:", on_click=_skip,
                  args=(row,))
        if st.button("Keys", key="nav_help", shortcut=HELP_KEY, width="stretch",
                     icon=":material/keyboard:"):
            _help()

    # The note box beside one wrapping row of tag and note buttons: at 800 px a button moves
    # to the next line rather than truncating its text. The page's CSS titles the tags and
    # starts the note buttons on a line of their own; a container per line, or columns, would
    # each be one more message to the browser on every key press.
    with st.container(horizontal=True, key="note_row"):
        st.text_area(
            "Note (optional)", key=NOTE_KEY, on_change="ignore", height=96,
            label_visibility="collapsed",
            placeholder="Note (optional): Shift + verdict key to write one; Ctrl+Enter saves it.",
        )
        with st.container(horizontal=True, key="note_side", vertical_alignment="center"):
            for n, tag in enumerate(criterion.failure_tags[:9]):
                st.button(
                    widgets.escape_markdown(tag), key=f"tag_{n}", shortcut=str(n + 1),
                    type="primary" if tag in chosen_tags else "secondary",
                    on_click=_toggle_tag, args=(row, tag),
                )
            for verdict, text, key in choices:
                st.button(
                    f"{text} + note", key=f"note_verdict_{verdict}", shortcut=f"Shift+{key}",
                    type="tertiary", on_click=_choose, args=(row, verdict),
                )
            st.button(
                "Save with note", key=row.key("save_note"), shortcut=SAVE_NOTE_KEY,
                type="primary", disabled=pending is None,
                on_click=_save, args=(row, pending or ""),
            )


def _assignments(dataset: str, criterion: str) -> Mapping[str, tuple[str, ...]]:
    """Who is assigned which rows here (team mode only: local names are claims)."""
    if not access.visitor().team:
        return {}
    return resources.get_workspace().team.assignments(dataset, criterion)


def _current_row(
    store: LabelStore, dataset: str, criterion: Criterion, annotator: str,
    tally: QueueCounts, assignments: Mapping[str, tuple[str, ...]],
) -> tuple[str | None, bool, Progress, Provenance | None, Item | None]:
    """(item id, editing?, progress, how the row was chosen, the item if read) for this run.

    A queue row's provenance is taken once, when it becomes this tab's current row, and kept
    until it is labelled or skipped: the shared plan can be rebuilt meanwhile (30 s refresh of
    a judge-based order, an import), and reruns while it is on screen (a note, a tag) must
    not give its label the stratum or probability of a plan that did not serve it.

    Rows assigned to the annotator come first (and the progress counts them while any is
    open); rows assigned to someone else and not yet labelled by them are left to them.
    """
    scope = (dataset, criterion.name, annotator)
    queue = state.queue_state(scope)
    settings = tally.settings
    total, mine, counts = tally.total, tally.mine, tally.counts
    if queue.skipped is None:
        queue.skipped = store.skipped(dataset, criterion.name, annotator)
    skipped = queue.skipped
    done = tally.progress(overlap=settings.overlap, skipped=skipped)
    assigned = assignments.get(annotator, ())
    elsewhere = open_elsewhere(assignments, annotator, tally.by_annotator) \
        if assignments else frozenset()
    plan = resources.queue_plan(store, dataset, total, settings, criterion.name)
    if plan.order == "escalated":
        # The escalated order serves only the rows an acceptance rule abstained on: progress
        # counts those (a few hundred ids, not the dataset).
        rows = frozenset(plan.item_ids)
        done = progress(len(rows), mine=mine & rows,
                        counts={i: counts[i] for i in rows if i in counts},
                        overlap=settings.overlap, skipped=[i for i in skipped if i in rows])
    if assigned:
        in_assignment = assignment_progress(assigned, mine=mine, skipped=skipped)
        if in_assignment.remaining:  # the assignment's size: it does not shrink as others label
            done = in_assignment
    if queue.back > 0:
        seq = store.labelled_in_order(dataset, annotator, criterion.name)
        queue.back = min(queue.back, len(seq))
        if queue.back > 0:
            earlier = seq[-queue.back]  # an edit keeps how the row was first chosen
            return earlier, True, done, store.current_provenance(dataset, earlier, annotator,
                                                                 criterion.name), None
    if queue.current is not None and queue.current not in mine:
        resources.get_holds().hold(
            (store.db.path, dataset, criterion.name), annotator, queue.current
        )
        if queue.provenance is None or queue.provenance[0] != queue.current:
            queue.provenance = (queue.current, _provenance(plan, queue.current))
        return queue.current, False, done, queue.provenance[1], None
    hold_scope = (store.db.path, dataset, criterion.name)
    mine_next = _next_assigned(assigned, plan, mine=mine, skipped=skipped)
    if mine_next is not None:  # wanted from this annotator, whoever else labels it
        resources.get_holds().hold(hold_scope, annotator, mine_next)
        queue.current = mine_next
        queue.provenance = (mine_next, _provenance(plan, mine_next))
        return mine_next, False, done, queue.provenance[1], None
    # Start the search where this tab's last one found every earlier row settled: at 1 M
    # items with many labels, walking the whole labelled head of the queue on each key press
    # costs more than the rest of the page.
    known = queue.settled
    start = known[2] if known is not None and known[0]() is plan \
        and known[1] == settings.overlap else 0
    start = settled_prefix(plan.item_ids, mine=mine, counts=counts, overlap=settings.overlap,
                           skipped=set(skipped), start=start)
    # Only a weak reference: a tab left idle must not keep a replaced plan alive (≈ 35 MB per
    # 200,000 ids); once the shared plans drop it, the tab's next search starts at the top.
    queue.settled = (weakref.ref(plan), settings.overlap, start)
    holds = resources.get_holds()
    holds.release_elsewhere(hold_scope, annotator)  # e.g. after switching datasets
    # Choosing and holding the row is one step, so two annotators whose pages rerun at the
    # same moment are not given the same row. A hold disappears only after its label is
    # committed, so a fresh look at the claimed row catches a label saved since ``counts``
    # was read.
    passed: set[str] = set()
    item: Item | None = None
    while True:
        item_id = holds.claim(
            hold_scope, annotator,
            lambda held: next_item(
                plan.item_ids, mine=mine | passed | elsewhere, counts=counts,
                overlap=settings.overlap,
                held=held, skipped=skipped, start=start,
            ),
        )
        if item_id is None:
            break
        item, who = store.item_and_labellers(dataset, item_id, criterion.name)
        if annotator not in who and len(who) < settings.overlap:
            break
        passed.add(item_id)
        item = None
    if item_id is None:  # nothing else left: the assigned rows this annotator skipped
        item_id = _next_assigned(assigned, plan, mine=mine, skipped=skipped, skipped_ones=True)
        if item_id is not None:
            holds.hold(hold_scope, annotator, item_id)
    queue.current = item_id
    if item_id is None:
        queue.provenance = None
        return None, False, done, None, None
    queue.provenance = (item_id, _provenance(plan, item_id))
    return item_id, False, done, queue.provenance[1], item


def _next_assigned(assigned: Sequence[str], plan: QueuePlan, *, mine: Collection[str],
                   skipped: Sequence[str], skipped_ones: bool = False) -> str | None:
    """The first assigned row not labelled or skipped yet, or None.

    With ``skipped_ones``, the first skipped one instead (served, like any skipped row, once
    nothing else is left). In the escalated order only the rows the plan holds are served.
    """
    if not assigned:
        return None
    in_plan = frozenset(plan.item_ids) if plan.order == "escalated" else None
    later = set(skipped)
    return next((i for i in assigned if i not in mine and (i in later) == skipped_ones
                 and (in_plan is None or i in in_plan)), None)


def _editing_banner(store: LabelStore, row: Row, fresh: bool) -> None:
    """Say which label is being revisited, and pre-fill its note and failure tags.

    A verdict key saves a new version with whatever note and tags are on screen, so they
    start as the earlier label's: re-labelling a row must not silently drop them. The note
    box is filled when the row has just come on screen (``fresh``); later runs keep its edits.
    """
    history = store.history(row.dataset, row.item_id, annotator=row.annotator,
                            criterion=row.criterion)
    if not history:
        return
    latest = history[-1]
    if fresh:
        state.set_value(NOTE_KEY, latest.note)
    state.queue_state(row.scope).tags.setdefault(row.item_id, list(latest.failure_tags))
    versions = f" ({len(history)} versions)" if len(history) > 1 else ""
    onward = ("goes back to your queue" if state.queue_state(row.scope).from_history
              else "goes forward")
    with st.container(key="revisit_banner"):  # keyed: the guidelines panel keeps beside it
        st.warning(
            f"Revisiting your earlier label: {widgets.escape_markdown(latest.verdict.upper())}"
            f"{versions}. A verdict key saves "
            f"a new version; Next (S) {onward} without changing it.", icon=":material/history:",
        )
        if latest.note:
            st.caption("Your note then (also in the note box below, kept when you save):")
            widgets.literal(latest.note)


def _go_to(dataset: str, criterion: str) -> None:
    for name, value in (("dataset", dataset), ("criterion", criterion)):
        st.query_params[name] = value
        state.remember(name, value)
        state.clear_widget(f"pick_{name}")


def _empty_queue(store: LabelStore, dataset: str, criterion: str, annotator: str,
                 done: Progress, settings: QueueSettings) -> None:
    """Why there is nothing to label here, and where there is."""
    wanted = "one annotator" if settings.overlap == 1 else f"{settings.overlap} annotators"
    st.info(
        f"Nothing left for you here: you labelled {done.labelled:,} of these rows, and every "
        f"other row already has labels from {wanted} (the queue settings' overlap).",
        icon=":material/check_circle:",
    )
    work = [w for w in store.open_work(annotator) if (w[0], w[1]) != (dataset, criterion)]
    if not work:
        st.success("Every dataset and criterion is fully labelled. Thank you!",
                   icon=":material/celebration:")
        return
    st.caption("These still need labels from you:")
    # A table, not markdown: dataset names come from whoever imported the data.
    st.dataframe(
        {"dataset": [w[0] for w in work], "criterion": [w[1] for w in work],
         "rows left for you": [w[2] for w in work]},
        hide_index=True, width="content",
    )
    if st.button("Label the first of these", key="go_open_work", type="primary",
                 icon=":material/arrow_forward:"):
        _go_to(work[0][0], work[0][1])
        st.rerun()  # the whole page: the dataset and criterion pickers are outside this fragment


@st.fragment
def _labelling(store: LabelStore, dataset: str, kind: Kind, criterion: Criterion,
               annotator: str) -> None:
    """The row, its buttons and the progress line.

    A fragment: a verdict reruns only this part of the page, so the top bar and the queue
    settings are neither recomputed nor re-sent to the browser for every label.
    """
    # The counts and the queue settings, read in one statement.
    tally = resources.get_label_tally().snapshot(store, dataset, annotator, criterion.name)
    settings = tally.settings
    item_id, editing, done, provenance, fetched = _current_row(
        store, dataset, criterion, annotator, tally, _assignments(dataset, criterion.name))
    queue = state.queue_state((dataset, criterion.name, annotator))
    queue.showing = item_id
    message = state.pop_flash()
    saved = message[1] if message is not None and message[0] == "toast" else None
    if message is not None and saved is None:
        widgets.message(*message)
    scope = (dataset, criterion.name, annotator)
    verdicts = [verdict for verdict, _, _ in VERDICTS[kind]]

    def open_row(item: str, status: str) -> None:
        label_history.open_row(store, scope, item, status, assigned=_assignments(
            dataset, criterion.name).get(annotator, ()))

    def show_progress() -> None:
        with st.container(key="progress"):
            st.progress(done.labelled / done.wanted if done.wanted else 1.0,
                        text=done.describe())
            label_history.status_line(saved)  # in place of a toast, which covered controls

    if item_id is None or provenance is None:
        show_progress()
        if item_id is None and done.remaining > 0:
            st.info(
                f"The {done.remaining:,} row(s) left for you are being labelled by someone "
                "else right now. They come back to your queue if they are not finished within "
                "ten minutes.", icon=":material/group:",
            )
            st.button("Check again", key="check_again", icon=":material/refresh:")
        elif item_id is None:
            _empty_queue(store, dataset, criterion.name, annotator, done, settings)
        with st.container(horizontal=True):
            st.button("Back", key="nav_back", shortcut=BACK_KEY, icon=":material/undo:",
                      on_click=_back, args=((dataset, criterion.name, annotator),))
            label_history.history_button(store, scope, verdicts, open_row)
        return
    item = fetched if fetched is not None else store.item(dataset, item_id)
    queue.mark_shown(item_id)
    token = widgets.short_key("row", f"{dataset}\x1f{criterion.name}\x1f{item_id}")
    row = Row(store, dataset, criterion.name, annotator, item_id, token, editing, provenance)
    # The question shares its line with the progress and the guidelines: every line above the
    # evidence is a line less of sources on a laptop screen. One horizontal container rather
    # than three columns (four blocks, each a message on every key press): the page's CSS
    # gives its three keyed containers the columns' shares of the width.
    with st.container(horizontal=True, key="top_row"):
        widgets.question(item)
        show_progress()
        label_history.side_column(store, scope, criterion, verdicts, open_row,
                                  first_row=done.labelled == 0)
    # The note box keeps its key from row to row: a row that has just come on screen starts
    # with an empty note (or, revisited, the earlier label's).
    fresh = state.widget_value(SEEN_KEY) != token
    if fresh:
        state.set_value(NOTE_KEY, "")
    if editing:
        _editing_banner(store, row, fresh)
    widgets.item_card(item, criterion, with_question=False, sentences=True, row=token)
    if fresh:
        state.set_value(SEEN_KEY, token)
    st.text_input("Row on screen", key=SEEN_KEY, label_visibility="collapsed")  # CSS hides it
    pending = queue.pending.get(item_id)
    _verdict_bar(row, kind, criterion, pending, queue.tags.get(item_id, []))
    if pending is not None:
        widgets.focus_script(f".st-key-{NOTE_KEY} textarea", token + pending)


def _page() -> None:
    who = access.require_page("label")
    store = resources.get_store()
    # Team mode: the signed-in address is the annotator, never a typed name or ?user=.
    annotator = who.email if who.team and who.email is not None else _who(store)
    picked = _top_bar(store, annotator, who)
    if picked is None:
        return
    dataset, kind, criterion = picked
    # A full run reads the skipped rows afresh (another tab may have skipped some).
    state.queue_state((dataset, criterion.name, annotator)).skipped = None
    _labelling(store, dataset, kind, criterion, annotator)
    settings = store.queue_settings(dataset, criterion.name)
    plan = resources.queue_plan(store, dataset, store.count_items(dataset), settings,
                                criterion.name)
    if who.role == "owner":  # the queue's settings apply to every annotator
        queue_settings_view.queue_settings(store, dataset, criterion.name, settings, plan.note)
    # Constant style and scripts, once per full run: outside the fragment, a key press does
    # not send them again; at the end, where the space each element takes is below the fold.
    widgets.label_page_style()
    widgets.leave_note_on_save()
    widgets.evidence_keys(sentences=True)
    widgets.keyboard_helpers(help_button=".st-key-nav_help button", keys=_hand_back_keys(kind))
    resources.settle_heap()  # after the first run built the queue plan: see its docstring


_page()
