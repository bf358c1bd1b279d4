"""The Calibration page's "Abstain and escalate" section and its "Drift" panel.

Abstain and escalate: pick the error rate allowed among the verdicts the judge is trusted with
(the alpha slider); :func:`judges.workflows.selective.select`, the function behind ``calibrate
judge select``, certifies the acceptance rule on the labelled rows and shows what share of the
target it settles, with the guarantee. One button sends the rest to the Label queue's escalated
order, and a link opens the Label page on them.

Drift: a judge card (this judge's calibration, built now, or a card file) tested by
:func:`judges.workflows.gate.drift_stored` (the drift check behind ``calibrate drift``) on the
judge's stored verdicts of a dataset, with the card's anchor rows as re-scored in the database and
the dataset's expert labels. Names, reasons and sentences are data: escaped or plain text only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from calibrate_app import access, resources, state, widgets
from calibrate_app.uploads import check_upload_size
from judges.workflows import card as cards
from judges.workflows import gate, selective
from judges.workflows import report as reports
from judges.workflows.card import JudgeCard
from judges.workflows.report import JudgeReport
from judges.workflows.selective import CascadeReport
from judges.workspace import Workspace

THIS_CARD = "This judge's calibration (built now)"


def _escalate(workspace: Workspace, cascade: CascadeReport) -> None:
    escalation = selective.escalate(workspace, cascade)
    state.flash("success", f"{len(escalation.item_ids)} escalated rows are now the Label queue "
                           f"of {cascade.target} ({cascade.criterion}), in random order.")


@st.fragment
def render_abstain(workspace: Workspace, report: JudgeReport) -> None:
    """The section: the alpha slider, what the certified rule accepts, the escalation."""
    st.subheader("Abstain and escalate")
    st.caption(
        "Which verdicts can be taken as they are? The judge's own signals (its calls agreeing "
        "across repeats and swapped orders, its verdict probability) rank the rows; Learn then "
        "Test certifies the rule under which at most α of the accepted verdicts are wrong, "
        "with probability 1 − δ (fixed-sequence testing, exact binomial p-values, on the "
        "labelled rows). The rest go to experts.")
    if not st.toggle("Certify which verdicts can be taken as they are", key="cal_abstain_on"):
        return
    cols = st.columns([3, 2])
    alpha = cols[0].slider("Error rate allowed among accepted verdicts (α)", min_value=0.01,
                           max_value=0.5, value=0.1, step=0.01, key="cal_abstain_alpha")
    delta = cols[1].number_input("Chance the guarantee may fail (δ)", min_value=0.01,
                                 max_value=0.5, value=0.1, step=0.01, format="%.2f",
                                 key="cal_abstain_delta")
    cascade = widgets.or_warning(lambda: selective.select(
        workspace, report, alpha=float(alpha), delta=float(delta)))
    if cascade is None:
        return
    data = cascade.to_json()
    stage = data["stages"][0]
    m = st.columns(4)
    m[0].metric("Accepted", f"{stage['settled_share']:.1%}",
                help=f"{stage['accepted']} of the {data['rows']} rows of the target.")
    m[1].metric("Escalated to experts", f"{data['escalated']:,}")
    m[2].metric("Error among accepted", f"≤ {alpha:g}",
                help=widgets.escape_markdown(stage["guarantee"]))
    m[3].metric("Observed on labelled rows", "—" if stage["error_estimate"] is None
                else f"{stage['error_estimate']:.3f}",
                help=f"{stage['errors']} of the {stage['accepted_labelled']} accepted labelled "
                     "rows are wrong (population-weighted).")
    if stage["refused"]:
        widgets.message("warning", f"No rule accepts anything: {stage['reason']}")
    else:
        bars = "; ".join(f"{name}: score ≥ {t:.3f}" if t is not None else f"{name}: none"
                         for name, t in stage["thresholds"].items())
        st.caption(widgets.escape_markdown(
            f"Rule {data['rule_id']} ({', '.join(stage['signals'])}): {bars}. "
            f"{data['design']}."))
    p = data["pass_rate"]
    if p is not None and p["estimate"] is not None:
        st.caption(f"Whole-run pass rate, accepted verdicts and the experts' labels on the "
                   f"escalated rows combined: {p['estimate']:.3f} "
                   f"[{p['low']:.3f}, {p['high']:.3f}] ({data['expert']['labelled']} of "
                   f"{data['escalated']} escalated rows labelled).")
    for warning in data["warnings"]:
        st.text(warning)
    if selective.escalation_sent(workspace, cascade):
        st.caption("These escalated rows are the Label queue already.")
    elif data["escalated"] and access.is_owner():  # the queue is everyone's
        st.button(f"Send the {data['escalated']:,} escalated rows to the Label queue",
                  key="cal_escalate", icon=":material/forward_to_inbox:", on_click=_escalate,
                  args=(workspace, cascade),
                  help="Records them and sets the Label page's queue of the target to the "
                       "escalated order, for everyone labelling it.")
    access.page_link("label", "Label the escalated rows", ":material/task_alt:",
                     query_params={"dataset": cascade.target, "criterion": cascade.criterion})


def _uploaded_card() -> JudgeCard | None:
    max_mb = resources.get_settings().max_upload_mb
    upload = st.file_uploader("Judge card (JSON or YAML)", type=["json", "yaml", "yml"],
                              key="cal_drift_card", max_upload_size=max_mb)
    if upload is None:
        return None
    check_upload_size(upload.name, upload.size, max_mb)
    text = upload.getvalue().decode("utf-8", errors="replace")
    if upload.name.lower().endswith(".json"):
        return cards.loads_card(text, source=upload.name, format="json")
    return cards.loads_card(text, source=upload.name, format="yaml")


def render_drift(workspace: Workspace, report: JudgeReport) -> None:
    """The panel: a card tested for judge and system drift on the database's verdicts."""
    st.subheader("Drift")
    st.caption(
        "Is the card still true? The anchor rows (the card's labelled rows) re-scored by the "
        "judge tell judge drift from system drift; anytime-valid e-processes keep the "
        "false-alarm rate at α however often you look.")
    cols = st.columns(3)
    choice = cols[0].radio("Card", [THIS_CARD, "A card file"], key="cal_drift_source")
    uploaded = None
    if choice != THIS_CARD:
        uploaded = widgets.or_warning(_uploaded_card)
        if uploaded is None:
            return
    config = report.judge.config_id if uploaded is None else uploaded.judge.config_id
    home = report.dataset if uploaded is None else uploaded.calibration.dataset
    judged = reports.judged_datasets(workspace, config)
    if not judged:
        st.info("No dataset has verdicts of this card's judge config in this database.")
        return
    none = "(none)"
    default_new = report.target if report.target in judged else judged[0]
    new = cols[1].selectbox("New verdicts: the judge on", judged, key="cal_drift_new",
                            index=judged.index(default_new))
    anchors = [none, *judged]
    anchor = cols[2].selectbox("Anchor rows re-scored on", anchors, key="cal_drift_anchor",
                               index=anchors.index(home) if home in anchors else 0)
    use_labels = st.checkbox("Test the card's sensitivity and specificity on the new rows' "
                             "expert labels", key="cal_drift_labels")
    if not st.button("Test for drift", key="cal_drift_run", icon=":material/monitor_heart:"):
        return
    card = uploaded if uploaded is not None else cards.for_report(workspace, report)
    labels = None
    if use_labels:
        labels = gate.expert_labels(workspace, new, card.judge.criterion)
    result = widgets.or_warning(lambda: gate.drift_stored(
        workspace, card, new, anchor=None if anchor == none else anchor, labels=labels))
    if result is None:
        return
    data = result.to_json()
    widgets.message("error" if data["drifted"] else "success", data["sentence"])
    st.dataframe(pd.DataFrame([{
        "test": t["name"], "rows": t["n"], "mean": t["mean"], "null": t["null"],
        "e-value": t["e_max"], "needs": 1 / t["level"],
        "drift at row": t["crossed_at"]} for t in data["tests"]]),
        hide_index=True, key="cal_drift_tests")
    for warning in data["warnings"]:
        st.text(warning)

