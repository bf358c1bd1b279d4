"""Export page: the judge card for CI, and the labels and verdicts as files.

The card is :func:`judges.workflows.card.for_judge`: the card of the same report the Calibration
page shows (``calibrate card export`` on the command line), previewed before download; a card the
rules refuse (:func:`judges.outputs.card.card_problems`) downloads only after "Export anyway", and
then says so inside. Files go through :func:`judges.workflows.card.table_bytes`, which
neutralises spreadsheet formulas in CSV cells.
"""

from __future__ import annotations

import streamlit as st

from calibrate_app import access, resources, widgets
from judges.calibration import format_point
from judges.workflows import card as cards
from judges.workflows import report as reports
from judges.workspace import Workspace

FORMATS = {"CSV": ".csv", "Parquet": ".parquet", "JSONL": ".jsonl"}
MIME = {".csv": "text/csv", ".parquet": "application/octet-stream",
        ".jsonl": "application/x-ndjson"}


def _card_section(workspace: Workspace, dataset: str) -> None:
    st.subheader("Judge card")
    st.caption(
        "One file with the judge's full config and content hash, its measured sensitivity and "
        "specificity with intervals, kappa, flip rates, this dataset's content hash, the "
        "annotators and the package versions; never an API key. In CI: "
        "`calibrate gate --card card.json verdicts.csv --min-pass-rate 0.8`."
    )
    judges = reports.judges(workspace, dataset)
    if not judges:
        st.info("No judge has verdicts on this dataset yet.")
        return
    by_id = {j.config_id: j for j in judges}
    config_id = st.selectbox(
        "Judge", list(by_id), key="export_judge",
        format_func=lambda c: f"{by_id[c].name} r{by_id[c].revision} · {c[:11]}",
    )
    fmt = st.radio("Card format", ["JSON", "YAML"], horizontal=True, key="export_card_format")
    card = widgets.or_warning(lambda: cards.for_judge(workspace, dataset, by_id[config_id]))
    if card is None:
        return
    m = card.metrics
    if card.judge.stand_in:
        widgets.message("warning", "Stand-in judge: these verdicts come from the scripted "
                        "provider (a script), not a model.", icon=":material/science:")
    cols = st.columns(3)
    cols[0].metric("Sensitivity", format_point(m.sensitivity.model_dump()))
    cols[1].metric("Specificity", format_point(m.specificity.model_dump()))
    cols[2].metric("Labelled rows used", f"{m.n} of {card.calibration.labelled_rows}")
    st.caption(widgets.escape_markdown(
        f"Sensitivity {m.sensitivity.format()}, specificity {m.specificity.format()}. "
        f"{cards.card_counts(card)}."))
    suffix = ".json" if fmt == "JSON" else ".yaml"
    forced = False
    if card.forced:
        with st.container(border=True, key="export_card_refused"):
            st.error("This card would mislead, so it is not exported by default:",
                     icon=":material/block:")
            for reason in card.forced:
                widgets.literal(f"• {reason}")
            forced = st.checkbox(
                "Export anyway (the card lists these reasons inside, under `forced`)",
                key=f"export_card_force_{config_id}",
            )
    text = cards.dumps_card(card, format="json" if fmt == "JSON" else "yaml")
    with st.expander("Preview the card", icon=":material/visibility:",
                     expanded=bool(card.forced)):
        st.code(text, language="json" if fmt == "JSON" else "yaml", height=320)
    st.download_button(
        "Download judge card", data=text.encode("utf-8"),
        file_name=widgets.file_name(f"{card.judge.name}-card{suffix}"),
        mime="application/json" if suffix == ".json" else "application/yaml",
        key="export_card", icon=":material/download:", type="primary",
        disabled=bool(card.forced) and not forced,
        on_click=access.record_export, args=(f"judge card of {card.judge.name} on {dataset}",),
    )


def _files_section(workspace: Workspace, dataset: str) -> None:
    st.subheader("Labels and verdicts")
    fmt = st.radio("File format", list(FORMATS), horizontal=True, key="export_format")
    suffix = FORMATS[fmt]
    labels = workspace.labels.current_labels(dataset)
    st.download_button(
        f"Download current labels ({len(labels)})", data=cards.table_bytes(labels, suffix),
        file_name=widgets.file_name(f"{dataset}-labels{suffix}"), mime=MIME[suffix],
        key="export_labels",
        disabled=labels.empty, icon=":material/download:",
        on_click=access.record_export, args=(f"current labels of {dataset}",),
    )
    for ref in reports.judges(workspace, dataset):
        frame = cards.verdicts_table(workspace, dataset, ref.config_id)
        st.download_button(
            f"Download verdicts of {widgets.escape_markdown(ref.name)} r{ref.revision} "
            f"({len(frame)} calls)",
            data=cards.table_bytes(frame, suffix),
            file_name=widgets.file_name(f"{dataset}-{ref.name}-r{ref.revision}-verdicts{suffix}"),
            mime=MIME[suffix], key=f"export_verdicts_{ref.config_id}",
            icon=":material/download:",
            on_click=access.record_export,
            args=(f"verdicts of {ref.name} r{ref.revision} on {dataset}",),
        )


def _page() -> None:
    access.require_page("export")
    st.header("Export")
    workspace = resources.get_workspace()
    datasets = [d.name for d in workspace.labels.datasets()]
    if not datasets:
        st.info("Nothing to export yet: import a dataset on the Data page.")
        return
    wanted = st.query_params.get("dataset")
    dataset = st.selectbox("Dataset", datasets, key="export_dataset",
                           index=datasets.index(wanted) if wanted in datasets else 0)
    _card_section(workspace, dataset)
    _files_section(workspace, dataset)


_page()
