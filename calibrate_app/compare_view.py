"""The Calibration page's comparison of two target datasets judged by the same judge.

Did a change make the system better or worse? Pick a baseline and a candidate dataset (the same
questions answered before and after a change, rows matched by id), both judged by the page's
judge: the view shows each corrected pass rate, their paired difference with its interval, the
exact McNemar p-value, how many rows pair up and how many are in one dataset only, the per-segment
table and the warnings. Every number comes from :func:`judges.workflows.gate.compare_datasets`,
which reads the stored verdicts through the same card and verdicts parser as ``calibrate
compare``, so the page and the CLI agree. Dataset names and warnings are data: they go through
``st.text``, data frames or escaped markdown only.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from calibrate_app import widgets
from judges.calibration import collapsed, describe_interval, format_point
from judges.workflows import gate
from judges.workflows import report as reports
from judges.workflows.report import JudgeReport
from judges.workspace import Workspace

STAND_IN_NOTE = (
    "This judge is a scripted stand-in, not a judge: its verdicts are simulated or scripted "
    "(see its config's description). The comparison shows how the method works; it says "
    "nothing about what a real judge would find."
)


def _targets(workspace: Workspace, report: JudgeReport) -> list[str]:
    """Pointwise datasets other than the labelled one that the page's judge has verdicts on."""
    return reports.judged_datasets(workspace, report.judge.config_id, besides=report.dataset)


def _judges_with_two_targets(workspace: Workspace, report: JudgeReport) -> list[str]:
    """Names of other judges with verdicts on the labelled dataset and two other datasets."""
    targets: dict[str, set[str]] = {}
    for d in workspace.labels.datasets():
        if d.kind != "pointwise" or d.name == report.dataset:
            continue
        for j in reports.judges(workspace, d.name):
            targets.setdefault(j.config_id, set()).add(d.name)
    return sorted({j.name for j in reports.judges(workspace, report.dataset)
                   if j.config_id != report.judge.config_id
                   and len(targets.get(j.config_id, ())) >= 2})


def _metric(col: Any, title: str, value: dict[str, Any], help_text: str, *,
            signed: bool = False) -> None:
    with col:
        st.metric(title, format_point(value, signed=signed), help=help_text)
        if value["estimate"] is None:
            st.caption(f"Not computed: {widgets.escape_markdown(value['reason'])}")
        else:
            text = describe_interval(value, signed=signed)
            st.caption(f"{text if collapsed(value) else 'CI ' + text} · n={value['n']}")


def _segments_frame(data: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame([
        {"segment": s["segment"], "n paired": s["n_paired"],
         "baseline": describe_interval(s["baseline"]),
         "candidate": describe_interval(s["candidate"]),
         "difference": describe_interval(s["difference"], signed=True),
         "McNemar p": s["mcnemar_p"]}
        for s in data["segments"]
    ])


def _show(data: dict[str, Any]) -> None:
    """The comparison's numbers (its ``to_json`` form, as ``calibrate compare --json``)."""
    cols = st.columns(3)
    _metric(cols[0], "Baseline corrected pass rate", data["baseline"],
            "The baseline's pass rate on the paired rows, corrected with the judge's error "
            "rates measured on the labelled rows.")
    _metric(cols[1], "Candidate corrected pass rate", data["candidate"],
            "The candidate's pass rate on the same rows, corrected the same way.")
    _metric(cols[2], "Difference (candidate − baseline)", data["difference"],
            widgets.escape_markdown(f"{data['method']}. Valid when {data['assumption']}."),
            signed=True)
    p = data["mcnemar_p"]
    table, excluded = data["table"], data["excluded"]
    counts = st.columns(4)
    counts[0].metric("McNemar p", "—" if p is None else f"{p:.4g}",
                     help=widgets.escape_markdown(
                         f"Exact test on the discordant pairs ({data['mcnemar_method']}): "
                         f"{table['candidate_only']} rows gained a pass, "
                         f"{table['baseline_only']} lost one."))
    counts[1].metric("Rows paired", data["n_paired"],
                     help="Rows with a pass/fail verdict in both datasets (matched by id).")
    counts[2].metric("Only in the baseline", excluded["baseline_only"],
                     help="Rows of the baseline with no row of the same id in the candidate: "
                          "left out, never silently.")
    counts[3].metric("Only in the candidate", excluded["candidate_only"],
                     help=f"Also left out: {excluded['not_pass_fail']} paired rows that are not "
                          "pass/fail in both.")
    observed = data["observed_difference"]
    st.caption(
        ("" if observed is None else f"The judge's own pass rates differ by {observed:+.3f}. ")
        + (f"Clustered by {data['documents']} documents (design effect "
           f"{data['design_effect']:.2f}). " if data["documents"] else "")
        + f"{int(data['confidence'] * 100)}% intervals."
    )
    if data["segments"]:
        st.caption("Per segment (each segment's interval on its own, not adjusted for "
                   "multiplicity):")
        st.dataframe(_segments_frame(data), hide_index=True, key="cmp_segments")
    if data["warnings"]:
        st.caption(f"Warnings ({len(data['warnings'])})")
        for warning in data["warnings"]:
            st.text(warning)


def render(workspace: Workspace, report: JudgeReport) -> None:
    """The comparison section for the page's judge and calibration (``report``)."""
    st.subheader("Compare two target datasets")
    if report.judge.stand_in:
        st.warning(STAND_IN_NOTE, icon=":material/science:")
    targets = _targets(workspace, report)
    if len(targets) < 2:
        others = _judges_with_two_targets(workspace, report)
        hint = (f" Judges with verdicts on two target datasets: {', '.join(others)}."
                if others else "")
        st.caption("Needs this judge's verdicts on two datasets besides the labelled one, e.g. "
                   "the same questions answered before and after a change.")
        if hint:
            st.text(hint.strip())
        return
    st.caption("The same judge on the same questions answered before and after a change "
               "(rows matched by id): did the change make the system better or worse? The "
               "judge's error rates come from the labelled rows above, so the calibration "
               "uncertainty largely cancels in the difference.")
    cols = st.columns(2)
    baseline = cols[0].selectbox("Baseline", targets, index=0, key="cmp_baseline")
    candidate = cols[1].selectbox("Candidate", targets, index=len(targets) - 1,
                                  key="cmp_candidate")
    if baseline == candidate:
        st.info("Pick two different datasets.")
        return
    comparison = widgets.or_warning(
        lambda: gate.compare_datasets(workspace, report, baseline=baseline,
                                      candidate=candidate))
    if comparison is None:
        return
    _show(comparison.to_json())
