"""The Calibration page's view of a pairwise (A vs B) judge.

Every number comes from :func:`judges.workflows.report.pairwise`, the function behind
``calibrate report`` on a pairwise dataset. Row text and model names are data: they reach the
page through ``st.dataframe``, charts and ``st.text`` only, never markdown.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from calibrate_app import widgets
from judges.calibration import describe_interval
from judges.workflows import report as reports
from judges.workflows.report import JudgeRef, PairwiseReport
from judges.workspace import Workspace

CLASSES = ("a", "b", "tie")


def _metric(col: Any, title: str, value: dict[str, Any], help_text: str, unit: str) -> None:
    widgets.interval_metric(col, title, value, help_text, after_n=f" {unit}")


def _headline(data: dict[str, Any]) -> None:
    ag, human = data["agreement"], data["human_agreement"]
    cols = st.columns(5)
    _metric(cols[0], "Agreement (with ties)", ag["with_ties"],
            "Share of human votes equal to the judge's verdict on that row, counted per vote "
            "(Zheng et al. 2023); row-bootstrap interval.", "votes")
    _metric(cols[1], "Agreement (without ties)", ag["without_ties"],
            "The same over the votes where neither the annotator nor the judge said tie.",
            "votes")
    _metric(cols[2], "Cohen's kappa (a/b/tie)", data["kappa"],
            "Judge vs human votes beyond chance, three classes.", "votes")
    if human:
        _metric(cols[3], "Human–human (with ties)", human["with_ties"],
                f"The ceiling: every pair of votes on one of {human['rows']} shared rows.",
                "pairs")
    else:
        cols[3].metric("Human–human", "—", help="Needs two votes on the same row.")
    flip = data["position_consistency"]["flip_rate"]
    _metric(cols[4], "Position flip rate", flip,
            "Share of rows whose verdict changed when A and B swapped places.", "rows")


def _confusion_chart(data: dict[str, Any]) -> alt.LayerChart:
    table = data["confusion"]["table"]
    frame = pd.DataFrame([
        {"human": h, "judge": j, "count": table[i][k]}
        for i, h in enumerate(CLASSES) for k, j in enumerate(CLASSES)
    ])
    frame["dark"] = frame["count"] > frame["count"].max() / 2
    base = alt.Chart(frame).encode(
        x=alt.X("judge:N", title="Judge verdict", sort=list(CLASSES),
                axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("human:N", title="Human vote", sort=list(CLASSES)),
    )
    rect = base.mark_rect().encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues"), legend=None),
        tooltip=["human", "judge", "count"],
    )
    text = base.mark_text(fontSize=18).encode(
        text="count:Q", color=alt.condition("datum.dark", alt.value("white"), alt.value("black")),
    )
    return alt.LayerChart(layer=[rect, text]).properties(height=260,
                                                         title="Votes: human x judge")


def _win_frame(entries: list[tuple[str, dict[str, Any]]]) -> pd.DataFrame:
    rows = []
    for name, win in entries:
        row: dict[str, Any] = {"rows": name, "n": win["n_target"]}
        for side in CLASSES:
            row[f"observed {side}"] = describe_interval(win["observed"][side])
            row[f"corrected {side}"] = describe_interval(win["corrected"][side])
        row["note"] = win["reason"] or ("projected onto [0, 1]" if win["clipped"] else "")
        rows.append(row)
    return pd.DataFrame(rows)


def _win_rates(data: dict[str, Any]) -> None:
    st.subheader("Win rate")
    st.caption(
        "Share of target rows where answer A truly wins, B wins, or it is a tie: the judge's "
        "own shares, and the shares corrected for its errors by the estimator the labels' "
        "provenance supports (how the labelled rows were drawn). Per model pair, A is the "
        "first model."
    )
    st.text(f"Design: {data['design'] or 'refused'} ({data['design_reason']}); method "
            f"{data['win_rate']['method']}. Estimates {data['population']}.")
    entries = [("all rows", data["win_rate"])]
    entries += [(f"{p['model_a']} vs {p['model_b']}", p) for p in data["by_pair"]]
    st.dataframe(_win_frame(entries), hide_index=True, key="cal_pairwise_win")
    labels = data["labels_only"]
    st.text("Labels alone (the human shares of the labelled rows"
            + ("" if labels["valid_for_target"] else "; not an estimate of the target")
            + "): " + "  ".join(f"{side} {describe_interval(labels[side])}" for side in CLASSES))


def _disagreements(report: PairwiseReport) -> None:
    votes = report.votes
    differ = votes[votes["human"] != votes["judge"]]
    st.subheader(f"Votes the judge disagrees with ({len(differ)} of {len(votes)})")
    st.dataframe(differ, hide_index=True, key="cal_pairwise_disagreements")


def render(workspace: Workspace, dataset: str, judge: JudgeRef, *, rule: str | None) -> None:
    """The pairwise report of ``judge`` on ``dataset``, on the Calibration page."""
    report = widgets.or_warning(lambda: reports.pairwise(workspace, dataset, judge, rule=rule))
    if report is None:
        return
    data = report.to_json()
    widgets.judge_caption(report.judge, f"{data['n_votes']} human votes on {data['n_rows']} "
                          f"rows, criterion {report.criterion!r}, aggregation {report.rule}.",
                          kind="Pairwise judge ")
    _headline(data)
    left, right = st.columns(2)
    left.altair_chart(_confusion_chart(data), key="cal_pairwise_confusion")
    with right:
        st.caption("Reading the numbers")
        st.text(
            "Agreement is counted per human vote: a row with three annotators counts three "
            "times, as Zheng et al. (2023) count it. Without ties drops every vote where "
            "either side said tie. Human-human agreement over pairs of votes on the same row "
            "is the ceiling a judge can reach."
        )
    _win_rates(data)
    widgets.warnings_expander(data["warnings"])
    _disagreements(report)
