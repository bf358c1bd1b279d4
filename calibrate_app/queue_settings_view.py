"""The Label page's queue settings (eval owner): order, seed and overlap, for everyone.

They apply to every annotator labelling a dataset and criterion, so only an owner sees them.
"""

from __future__ import annotations

import streamlit as st

from calibrate_app import state, widgets
from labels import LabelStore
from labels.sampling import ORDER_GUARANTEES, QUEUE_ORDERS, QueueSettings


def _queue_key(dataset: str, criterion: str, name: str) -> str:
    # Per (dataset, criterion), so switching datasets shows that dataset's settings.
    return widgets.short_key(f"queue_{name}", f"{dataset}\x1f{criterion}")


def _save_queue_settings(store: LabelStore, dataset: str, criterion: str) -> None:
    def value(name: str) -> object:
        return state.widget_value(_queue_key(dataset, criterion, name))

    try:
        settings = QueueSettings(
            order=value("order"),  # type: ignore[arg-type]
            seed=int(value("seed")),  # type: ignore[call-overload]
            overlap=int(value("overlap")),  # type: ignore[call-overload]
        )
    except (TypeError, ValueError) as error:
        state.flash("error", str(error))
        return
    store.save_queue_settings(dataset, criterion, settings)
    state.flash("success", "Queue settings saved for everyone labelling this dataset.")


def queue_settings(store: LabelStore, dataset: str, criterion: str,
                    current: QueueSettings, note: str | None) -> None:
    """The queue settings expander: order, seed and overlap, saved for every annotator."""
    with st.expander("Queue settings (eval owner: applies to everyone labelling this "
                     "dataset and criterion)", icon=":material/settings:"):
        if note:
            widgets.message("info", note)
        cols = st.columns(3)
        orders = list(QUEUE_ORDERS)
        cols[0].selectbox("Order", orders, index=orders.index(current.order),
                          format_func=QUEUE_ORDERS.__getitem__,
                          key=_queue_key(dataset, criterion, "order"))
        cols[1].number_input("Seed", value=current.seed, step=1,
                             key=_queue_key(dataset, criterion, "seed"))
        cols[2].number_input("Annotators per row (overlap)", min_value=1, max_value=50,
                             value=current.overlap, step=1,
                             key=_queue_key(dataset, criterion, "overlap"))
        st.caption(
            "Each label records how its row was chosen, and the report estimates from that. "
            + " ".join(f"{QUEUE_ORDERS[o]}: {ORDER_GUARANTEES[o]}." for o in QUEUE_ORDERS)
            + " Stratified, flips-first and active use the judge's verdicts once a judge has "
            "run (never shown here). Rows that already have as many annotators as the overlap "
            "leave everybody's queue."
        )
        st.button("Save queue settings", key="queue_save", on_click=_save_queue_settings,
                  args=(store, dataset, criterion))
