"""Calibration page: how far to trust a judge, and what the true pass rate is.

Every number comes from :func:`judges.workflows.report.report`, the function behind
``calibrate report``, so the page and the CLI agree. Row text (questions, answers, the judge's
reasoning, annotators' notes) is untrusted: it goes through ``st.text`` only, never markdown or a
widget label; charts and tables get it as data.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from calibrate_app import (
    access,
    compare_view,
    pairwise_view,
    resources,
    selective_view,
    state,
    widgets,
)
from judges.calibration import describe_interval, expected_active_saving, format_point
from judges.calibration.vocabulary import AGGREGATION_RULES, describe_counts, describe_used
from judges.workflows import queue as label_queue
from judges.workflows import report as reports
from judges.workflows.report import SMALL_SAMPLE, JudgeRef, JudgeReport, QueueOrder
from judges.workspace import Workspace
from labels.errors import NotFoundError

AUTO = "auto"
SAME = "(the labelled dataset)"
DESIGN_TEXT = {
    AUTO: "Automatic (from the target and the Label page's queue)",
    "same_run_random": "Random sample of this dataset",
    "same_run_stratified": "Sampled within judge-pass / judge-fail strata",
    "separate_calibration": "Separate calibration set (label shift allowed)",
}
JUDGE_RULE = "judge"
RULE_TEXT = {
    JUDGE_RULE: "The judge's own rule",
    "all_agree": "All must agree (MT-Bench)",
    "majority": "Majority",
}


def _pick_inputs(workspace: Workspace) -> dict[str, Any] | None:
    store = workspace.labels
    datasets = [d for d in store.datasets() if d.labels > 0]
    if not datasets:
        st.info("No dataset has human labels yet: import rows on the Data page and "
                "label some on the Label page (or `calibrate labels import`).")
        return None
    names = [d.name for d in datasets]
    wanted = st.query_params.get("dataset")
    top = st.columns([3, 4, 3], vertical_alignment="bottom")
    dataset = top[0].selectbox(
        "Dataset with human labels", names,
        index=names.index(wanted) if wanted in names else 0, key="cal_dataset",
    )
    judges = reports.judges(workspace, dataset)
    if not judges:
        st.info("No judge has verdicts on this dataset yet: run one on the Judges page, or "
                "import verdicts (`calibrate verdicts import`).")
        return None
    by_id = {j.config_id: j for j in judges}

    def label(config_id: str) -> str:
        j = by_id[config_id]
        return f"{j.name} r{j.revision} · {j.model} · {config_id[:11]}"

    # Open on the judge with the most usable labelled rows (ties: the newest), not simply the
    # newest: a judge run on two rows is not the story a newcomer should see first.
    pairwise = reports.is_pairwise(workspace, dataset)
    best = None if pairwise else reports.first_judge(workspace, dataset)
    ids = list(by_id)
    main = top[1].selectbox("Judge", ids, format_func=label, key="cal_judge",
                            index=ids.index(best.config_id) if best is not None else 0)
    others = [c for c in by_id if c != main]
    if pairwise:
        # A pairwise judge has its own report (pairwise_view): no pass rate, plan or design.
        rule = top[2].selectbox("Repeats / swapped orders", [JUDGE_RULE, *AGGREGATION_RULES],
                                key="cal_pairwise_rule", format_func=RULE_TEXT.__getitem__)
        return {"pairwise": True, "dataset": dataset, "judge": by_id[main],
                "rule": None if rule == JUDGE_RULE else rule}
    # The other real judges start in the leaderboard, so why one ranks last is in view.
    compare = top[2].multiselect("Compare with", others, format_func=label, key="cal_compare",
                                 default=[c for c in others if not by_id[c].stand_in][:3])
    with st.expander("Options: target, sampling design, aggregation, criterion, plan",
                     icon=":material/tune:"):
        cols = st.columns(5)
        # Only datasets this judge config has verdicts on: another judge's target would be
        # an error, and Streamlit resets the choice when the options change.
        others = reports.judged_datasets(workspace, main, besides=dataset)
        targets = [SAME, *others]
        judged_target = reports.first_target(workspace, dataset, by_id[main])
        target = cols[0].selectbox(
            "Pass rate of", targets, key="cal_target",
            index=targets.index(judged_target) if judged_target in targets else 0,
            help="Another dataset judged by the same config: its pass rate is corrected with "
                 "the error rates measured here (label shift allowed).",
        )
        design = cols[1].selectbox("Sampling design of the labels", list(DESIGN_TEXT),
                                   format_func=DESIGN_TEXT.__getitem__, key="cal_design")
        rule = cols[2].selectbox(
            "Repeats / swapped orders", [JUDGE_RULE, *AGGREGATION_RULES], key="cal_rule",
            format_func=RULE_TEXT.__getitem__,
            help="How the calls of one row combine; by default the judge config's "
                 "aggregation (all must agree for imported verdicts).",
        )
        criteria = [c.name for c in store.criteria() if c.kind == "pointwise"]
        default = by_id[main].criterion
        criterion = cols[3].selectbox(
            "Criterion", criteria, index=criteria.index(default) if default in criteria else 0,
            key="cal_criterion",
        )
        half_width = cols[4].number_input(
            "Plan for ± (half-width)", min_value=0.005, max_value=0.5, value=0.05, step=0.005,
            format="%.3f", key="cal_half_width",
            help="How narrow the corrected pass rate's interval should become.",
        )
        bars = st.columns(2)
        min_sens = bars[0].number_input(
            "Certify when the lower bound of sensitivity is at least", min_value=0.0,
            max_value=1.0, value=0.80, step=0.05, format="%.2f", key="cal_min_sensitivity",
        )
        min_spec = bars[1].number_input(
            "… and the lower bound of specificity is at least", min_value=0.0, max_value=1.0,
            value=0.80, step=0.05, format="%.2f", key="cal_min_specificity",
        )
    return {
        "dataset": dataset, "judge": by_id[main], "compare": [by_id[c] for c in compare],
        "target": None if target == SAME else target,
        "design": None if design == AUTO else design, "rule": None if rule == JUDGE_RULE else rule,
        "criterion": criterion,
        "half_width": float(half_width),
        "certify": {"min_sensitivity": float(min_sens), "min_specificity": float(min_spec)},
    }


def _metric(col: Any, title: str, value: dict[str, Any], help_text: str, *,
            agreement: bool = False) -> None:
    small = value["estimate"] is not None and value["n"] < SMALL_SAMPLE
    widgets.interval_metric(col, title, value, help_text, agreement=agreement,
                            after_n=" · small sample" if small else "")


# How each certification status is shown: the box and an icon that says the same thing (a
# check badge only for a certified judge).
STATUS_BOX: dict[str, tuple[str, str]] = {
    "certified": ("success", ":material/verified:"),
    "not certified": ("error", ":material/cancel:"),
    "undecided": ("warning", ":material/help:"),
}


def _verdict(report: JudgeReport, bars: dict[str, float]) -> None:
    """The first screen: the trust verdict beside the true pass rate, above every number."""
    verdict = reports.trust(report, **bars)
    with st.container(key="cal_verdict", border=True):
        trust, answer = st.columns(2, gap="medium")
        with trust:
            # Numbers and fixed words only: no row or judge text goes into this markdown.
            st.markdown(f"##### {verdict.headline}")
            kind, icon = STATUS_BOX[verdict.status]
            widgets.message(kind, verdict.certification, icon=icon)
            if verdict.small_sample_note:
                st.warning(verdict.small_sample_note, icon=":material/warning:")
        with answer:
            _answer(report)


def _answer(report: JudgeReport) -> None:
    """The library's answer to "what is the true pass rate?", or its plain "can't say"."""
    summary = report.answer.summary()
    h = summary.headline
    title = f"True pass rate of {widgets.escape_markdown(report.target)}"
    help_text = ("The headline of the one estimation path (judges.calibration.answer_pass_rate), "
                 "the number calibrate report, the judge card and calibrate score give.")
    with st.container(key="cal_answer"):
        if summary.says:
            st.metric(title, format_point(h), help=help_text)
            st.caption(f"{widgets.interval_text(h)} · n = {h['n']:,} labelled rows · "
                       f"{summary.source}")
        else:
            st.metric(title, "Can't say", help=help_text)
            # The reason names segments: data, so escaped.
            st.caption(widgets.escape_markdown(f"Because {summary.because}."))
            if h["estimate"] is not None:
                st.caption(f"{summary.source.capitalize()}: {summary.interval} · "
                           f"n = {h['n']:,} labelled rows")
        st.caption(widgets.escape_markdown(f"Estimates {summary.estimand}."))


def _headline(data: dict[str, Any]) -> None:
    cols = st.columns(5)
    _metric(cols[0], "Sensitivity", data["sensitivity"],
            "Share of truly passing answers the judge passes (Wilson interval).")
    _metric(cols[1], "False-positive rate", data["fpr"],
            "Share of truly failing answers the judge lets through: what a gate fears most.")
    _metric(cols[2], "Specificity", data["specificity"],
            "Share of truly failing answers the judge fails.")
    _metric(cols[3], "Cohen's kappa", data["kappa"], "Judge vs human agreement beyond chance.",
            agreement=True)
    agreement = data["human_agreement"]
    if agreement:
        _metric(cols[4], "Human–human kappa", agreement["kappa"],
                f"The ceiling: {agreement['annotators']} annotators on {agreement['items']} "
                "shared rows (mean pairwise Cohen's kappa, bootstrap interval).", agreement=True)
    else:
        with cols[4]:
            st.metric("Human–human kappa", "—",
                      help="Needs two annotators on the same rows (Label page: overlap ≥ 2).")
            st.caption("No two annotators share a row yet.")
    counts = st.columns(5)
    vocab = data["counts"]
    labelled, target = vocab["labelled"], vocab["target"]
    counts[0].metric(
        "Labelled rows used", f"{data['n']} of {labelled['rows']}",
        help="Rows with both a human and a judge pass/fail verdict: the rows every rate above "
             "is measured on.")
    counts[1].metric(
        "Labelled rows judged", f"{labelled['judged']} of {labelled['rows']}",
        help=widgets.escape_markdown(describe_counts(labelled, rows="labelled ")))
    counts[2].metric(
        "Target rows judged", f"{target['judged']} of {target['rows']}",
        help=widgets.escape_markdown(describe_counts(target, rows="target ")))
    swap, repeat = data["swap_flip_rate"], data["repeat_flip_rate"]
    counts[3].metric("Swap flip rate", format_point(swap), help=widgets.escape_markdown(
        swap["reason"] or f"{swap['n']} items judged in both orders."))
    counts[4].metric("Repeat flip rate", format_point(repeat), help=widgets.escape_markdown(
        repeat["reason"] or f"{repeat['n']} items judged more than once."))
    st.caption(widgets.escape_markdown(
        describe_used(used=data["n"], m1=data["m1"], m0=data["m0"], labelled=labelled)
        + f". Target: {describe_counts(target, rows='target ')}."))


def _confusion_chart(data: dict[str, Any]) -> alt.LayerChart:
    c = data["confusion"]
    frame = pd.DataFrame([
        {"human": "pass", "judge": "pass", "count": c["tp"], "cell": f"TP {c['tp']}"},
        {"human": "pass", "judge": "fail", "count": c["fn"], "cell": f"FN {c['fn']}"},
        {"human": "fail", "judge": "pass", "count": c["fp"], "cell": f"FP {c['fp']}"},
        {"human": "fail", "judge": "fail", "count": c["tn"], "cell": f"TN {c['tn']}"},
    ])
    frame["dark"] = frame["count"] > frame["count"].max() / 2
    base = alt.Chart(frame).encode(
        x=alt.X("judge:N", title="Judge verdict", sort=["pass", "fail"],
                axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("human:N", title="Human label", sort=["pass", "fail"]),
    )
    rect = base.mark_rect().encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues"), legend=None),
        tooltip=["human", "judge", "count"],
    )
    text = base.mark_text(fontSize=18).encode(
        text="cell:N",
        color=alt.condition("datum.dark", alt.value("white"), alt.value("black")),
    )
    # The constructor rather than `rect + text`: altair types `+` as LayerChart | FacetChart.
    return alt.LayerChart(layer=[rect, text]).properties(
        height=260, title="Confusion matrix (labelled rows)"
    )


FOREST = [
    ("Sensitivity", "sensitivity", "judge vs human"),
    ("Specificity", "specificity", "judge vs human"),
    ("False-positive rate", "fpr", "judge vs human"),
    ("Cohen's kappa", "kappa", "judge vs human"),
    ("Observed pass rate (judge)", "observed_pass_rate", "pass rate"),
    ("Corrected pass rate", "corrected_pass_rate", "pass rate"),
    ("Human pass rate (labelled rows)", "human_pass_rate", "pass rate"),
]


def _forest_chart(data: dict[str, Any]) -> alt.LayerChart | None:
    rows = [
        {"measure": title, "group": group, "estimate": data[key]["estimate"],
         "low": data[key]["low"], "high": data[key]["high"]}
        for title, key, group in FOREST
        if data[key]["estimate"] is not None and data[key]["reason"] is None
    ]
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    lowest = min(0.0, float(frame["low"].min()))
    order = [r["measure"] for r in rows]
    base = alt.Chart(frame).encode(
        y=alt.Y("measure:N", sort=order, title=None,
                axis=alt.Axis(labelLimit=260, labelOverlap=False)),
        color=alt.Color("group:N", title=None, legend=alt.Legend(orient="bottom")),
    )
    rules = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", scale=alt.Scale(domain=[lowest, 1.0]), title="estimate and interval"),
        x2="high:Q",
    )
    points = base.mark_point(filled=True, size=80).encode(
        x="estimate:Q", tooltip=["measure", "estimate", "low", "high"],
    )
    return alt.LayerChart(layer=[rules, points]).properties(
        height=alt.Step(34), title="Estimates with intervals"
    )


_CORRECTED_TITLE = {
    "segment_aware": "Corrected (segment-aware)",
    "bounds": "Corrected (bounded over unsure labels)",
    "labels_only": "Corrected (labels alone)",
}


def _pass_rates(report: JudgeReport, data: dict[str, Any]) -> None:
    st.subheader("Pass rate")
    st.caption(
        f"Target: {widgets.escape_markdown(repr(report.target))}. The judge's own pass rate is "
        "biased by its errors; the "
        "corrected one removes that bias; the labels-only rate leaves the judge out."
    )
    cols = st.columns(3)
    target = data["counts"]["target"]
    human = data["counts"]["human"]
    panels = [
        ("Observed (judge)", data["observed_pass_rate"],
         widgets.escape_markdown(
             f"Judge pass rate, uncorrected, on the "
             f"{describe_counts(target, rows='target ')}.")),
        # What it estimates is said once, beside it on the first screen.
        (_CORRECTED_TITLE.get(data["answer_kind"], "Corrected"), data["corrected_pass_rate"],
         widgets.escape_markdown(
             f"Estimator: {data['method']}. Valid when {data['assumption']}.")),
        ("Labels only", data["labels_only_pass_rate"],
         f"Human pass rate of the {human['decided']} of {human['rows']} labelled rows the "
         "humans decided (Wilson), without the judge: "
         + ("a valid estimate of the target too (the labels are a random sample of it)."
            if data["labels_only_pass_rate"]["valid_for_target"] else
            "not an estimate of the target (the labels are not a random sample of it).")),
    ]
    for col, (title, value, explain) in zip(cols, panels, strict=True):
        with col, st.container(border=True):
            if value["estimate"] is None or value["reason"]:
                st.markdown(f"**{title}**")
                widgets.message("warning", f"No number: {value['reason']}",
                                icon=":material/block:")
            else:
                st.metric(title, format_point(value))
                st.caption(f"{widgets.interval_text(value)} · n={value['n']}")
            st.caption(explain)
    st.caption(widgets.escape_markdown(f"Design: {report.design} — {report.design_reason}."))


def _transfer(report: JudgeReport) -> None:
    """The transfer check of a separate-calibration target (segment mix and accuracy)."""
    t = report.to_json().get("transfer")
    if not t:
        return
    st.subheader("Does the correction transfer to the target?")
    mix, sens, fpr = t["mix_test"], t["sensitivity_test"], t["fpr_test"]
    st.caption(
        f"Segment mix, calibration vs target: p = {mix['p_value']:.3g} ({mix['method']}); "
        f"judge accuracy across segments: sensitivity p = {sens['p_value']:.3g}, FPR p = "
        f"{fpr['p_value']:.3g}."
    )
    if t["warning"]:
        widgets.message("warning", t["warning"])  # segment names are data: escaped
    aware = t["segment_aware_pass_rate"]
    st.metric("Segment-aware corrected", format_point(aware))
    st.caption(f"{widgets.interval_text(aware)} · n={aware['n']}: per-segment rates weighted by "
               "the target's segment shares (sparse segments pooled).")
    st.dataframe(pd.DataFrame([{
        "segment": s["segment"], "n_labelled": s["n"],
        "calibration_share": f"{s['calibration_share']:.0%}",
        "target_share": f"{s['target_share']:.0%}",
        "sensitivity": describe_interval(s["sensitivity"]), "fpr": describe_interval(s["fpr"]),
        "group": s["group"],
    } for s in t["segments"]]), hide_index=True, key="cal_transfer")


def _segments(report: JudgeReport) -> None:
    frame = report.segments_frame()
    if frame.empty:
        return
    st.subheader("Per segment")
    st.caption("Small segments get wide intervals or refusals (—): that is the honest answer.")
    st.dataframe(frame, hide_index=True, key="cal_segments")


def _open_row(workspace: Workspace, report: JudgeReport, row: pd.Series) -> None:
    store = workspace.labels
    item_id = str(row["item_id"])
    with st.container(border=True, key="cal_row"):
        st.caption("Item id")
        widgets.literal(item_id)
        cols = st.columns(3)
        cols[0].metric("Human", widgets.escape_markdown(row["human"]))
        cols[1].metric("Judge", widgets.escape_markdown(row["judge"]))
        cols[2].metric("Flipped", "yes" if bool(row["flipped"]) else "no")
        try:
            item = store.item(report.dataset, item_id)
            criterion = store.criterion(report.criterion)
        except NotFoundError:
            item = None
        if item is not None:
            widgets.item_card(item, criterion, height=220)
        if access.is_owner():  # annotators' own words: owners only, like their names
            st.caption("Human note(s)")
            widgets.literal(row["note"] if isinstance(row["note"], str) else None,
                            empty="(no note)")
        calls = report.judge_items.call_rows([item_id])
        st.caption(f"Judge calls ({len(calls)})")
        for _, call in calls.iterrows():
            st.caption(f"repeat {int(call['repeat'])} · "
                       f"{widgets.escape_markdown(call['order'])} · verdict")
            widgets.literal(str(call["verdict"]))
            reasoning = call["reasoning"] if isinstance(call["reasoning"], str) else None
            reason = call["unscored_reason"]
            widgets.literal(reasoning or (f"unscored: {reason}" if isinstance(reason, str)
                                          else None), empty="(no reasoning)")


def _annotators(workspace: Workspace, report: JudgeReport, data: dict[str, Any]) -> None:
    """Owners: each annotator's progress and the annotator x annotator agreement matrix."""
    annotators = reports.annotators(workspace, report, team=access.visitor().team,
                                    human_agreement=data["human_agreement"])
    progress, matrix = annotators.progress, annotators.agreement
    if progress.empty:
        return
    with st.expander(f"Annotators ({len(progress)}): progress and agreement",
                     icon=":material/groups:"):
        st.dataframe(progress, column_config={
            "share": st.column_config.ProgressColumn("share of rows", format="percent",
                                                     min_value=0.0, max_value=1.0)},
            key="cal_annotators")
        if matrix.empty:
            st.caption("No two annotators share a row yet, so there is no agreement to show.")
            return
        st.caption("Cohen's kappa of each pair on the rows both labelled (item-bootstrap "
                   "interval); the human-human kappa above is their mean.")
        st.dataframe(matrix, key="cal_agreement_matrix")


def _disagreements(workspace: Workspace, report: JudgeReport) -> None:
    frame = report.disagreements()
    st.subheader(f"Disagreements ({len(frame)})")
    if frame.empty:
        st.caption("The judge agrees with the human on every labelled row, with no flips.")
        return
    st.caption("Rows where judge ≠ human, then rows whose verdict flipped across repeats or "
               "orders. Select a row (or type its number) to read both sides.")
    # Missing cells read "—", never None/NaN.
    shown = frame[["kind", "item_id", "human", "judge", "segment", "flipped"]].astype(
        object).where(lambda f: f.notna(), "—")
    event = st.dataframe(shown, key="cal_disagreements", on_select="rerun",
                         selection_mode="single-row", hide_index=False)
    selected = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    number = st.number_input("Open row", min_value=0, max_value=len(frame) - 1, value=0,
                             step=1, key="cal_open_row")
    index = int(selected[0]) if selected else int(number)
    _open_row(workspace, report, frame.iloc[index])


def _leaderboard(workspace: Workspace, report: JudgeReport, compare: list[JudgeRef]) -> None:
    if not compare:
        return
    st.subheader("Leaderboard")
    board = reports.leaderboard(workspace, report.dataset, [report.judge, *compare],
                                criterion=report.criterion, rule=report.rule)
    st.caption(f"{board.n_items} labelled rows, sorted by kappa; McNemar's exact test against "
               "the best judge (only rows where exactly one judge is right count).")
    st.dataframe(board.frame(), hide_index=True, key="cal_leaderboard")
    for ref, entry in zip(board.judges, board.to_json(), strict=True):
        if entry["note"]:
            # Judge names are data: plain text, never markdown.
            st.text(f"{entry['rank']}. {ref.name}: {entry['note']}")


_ORDER_MESSAGES = {
    "stratified": "The Label page's queue now alternates judge-pass and judge-fail rows for "
                  "everyone labelling this dataset and criterion.",
    "active": "The Label page's queue now serves judge-uncertain rows more often (active "
              "order); the report reweights each label by its recorded chance of being served.",
}


def _use_order(workspace: Workspace, dataset: str, criterion: str, order: QueueOrder) -> None:
    reports.use_queue_order(workspace, dataset, criterion, order)
    state.flash("success", _ORDER_MESSAGES[order])


def _active_offer(workspace: Workspace, report: JudgeReport, order: QueueOrder) -> None:
    """The active order with its expected saving, from the judge's flips on this dataset."""
    scores = label_queue.uncertainty(workspace, report.dataset)
    if not scores:
        return
    saving = expected_active_saving(list(scores.values()))
    st.caption(
        f"Active order (judge-uncertain rows served more often, each label reweighted by its "
        f"chance of being served): about {saving:.0%} fewer labels than a random order for the "
        f"same interval, if the judge errs where its verdicts flip ({len(scores):,} rows scored; "
        "bench/label_budget.py measured 26–30 % fewer where they do, about 20 % more where the "
        "flips are unrelated to its errors)."
    )
    if order == "active":
        st.caption("The Label page's queue is already in active order.")
    elif saving > 0 and access.is_owner():  # the queue's order is everyone's
        st.button(
            "Label in active order", key="cal_active", icon=":material/target:",
            on_click=_use_order, args=(workspace, report.dataset, report.criterion, "active"),
            help="Sets the Label page's queue to the active order for everyone labelling this "
                 "dataset and criterion.",
        )


def _plan(workspace: Workspace, report: JudgeReport) -> None:
    st.subheader("How many more labels")
    plan = report.plan
    st.text(plan.message)
    if plan.gap is not None:
        g = plan.gap
        st.caption(
            f"Labelled split: {g.m0} failing / {g.m1} passing; the variance-optimal split for "
            f"the same total is about {g.optimum_m0:.0f} / {g.optimum_m1:.0f} "
            f"({g.variance_inflation:.2f}× the optimal calibration variance)."
        )
    current = workspace.labels.queue_settings(report.dataset, report.criterion)
    if current.order == "stratified":
        st.caption("The Label page's queue is already stratified by judge verdict.")
    elif access.is_owner() and plan.needed is not None and plan.needed.achievable and (
        plan.needed.extra_m0 or plan.needed.extra_m1
    ):
        st.button(
            "Label in stratified order", key="cal_stratify", icon=":material/low_priority:",
            on_click=_use_order, args=(workspace, report.dataset, report.criterion,
                                       "stratified"),
            help="Sets the Label page's queue to alternate judge-pass and judge-fail rows, "
                 "which finds the failing rows the plan asks for sooner.",
        )
    _active_offer(workspace, report, current.order)
    access.page_link("label", "Go to Label", ":material/task_alt:",
                     query_params={"dataset": report.dataset, "criterion": report.criterion})


def _page() -> None:
    access.require_page("calibration")
    st.header("Calibration")
    workspace = resources.get_workspace()
    message = state.pop_flash()
    if message is not None:
        widgets.message("success" if message[0] == "toast" else message[0], message[1])
    picked = _pick_inputs(workspace)
    if picked is None:
        return
    if picked.get("pairwise"):
        pairwise_view.render(workspace, picked["dataset"], picked["judge"], rule=picked["rule"])
        return
    report = widgets.or_warning(lambda: reports.report(
        workspace, picked["dataset"], picked["judge"], criterion=picked["criterion"],
        target=picked["target"], design=picked["design"], rule=picked["rule"],
        half_width=picked["half_width"],
    ))
    if report is None:
        return
    data = report.to_json()
    widgets.judge_caption(report.judge, f"{len(report.human.annotators)} annotator(s), "
                          f"criterion {report.criterion!r}, "
                          f"{int(data['confidence'] * 100)}% intervals.")
    if report.stand_in:
        widgets.message(
            "warning", f"Stand-in judge ({', '.join(report.stand_in)}): the scripted provider "
            "follows a script, not a model. These numbers test the plumbing, "
            "never a judge.", icon=":material/science:")
    if data["worse_than_chance"]:
        widgets.message("error", f"Worse than chance: {data['worse_than_chance']}.",
                        icon=":material/dangerous:")
    _verdict(report, picked["certify"])
    _headline(data)
    left, right = st.columns(2)
    left.altair_chart(_confusion_chart(data), key="cal_confusion")
    forest = _forest_chart(data)
    if forest is not None:
        right.altair_chart(forest, key="cal_forest")
    _pass_rates(report, data)
    widgets.warnings_expander(data["warnings"])
    _segments(report)
    _transfer(report)
    if access.is_owner():  # other annotators' identities and work: owners only
        _annotators(workspace, report, data)
    _disagreements(workspace, report)
    _leaderboard(workspace, report, picked["compare"])
    compare_view.render(workspace, report)
    selective_view.render_abstain(workspace, report)
    selective_view.render_drift(workspace, report)
    _plan(workspace, report)


_page()
