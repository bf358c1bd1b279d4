"""Data page: import rows from a file (upload or pick), map columns, preview, and list datasets.

The import is :func:`judges.workflows.importing.import_rows`, the same workflow as ``calibrate
import``, so the app and the CLI accept the same files and report the same errors (file, row,
column).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from calibrate_app import access, resources, state, widgets
from calibrate_app.uploads import UploadError, check_upload_size
from judges.workflows import importing
from judges.workflows import queue as label_queue
from judges.workflows.importing import FILE_FORMATS, ITEM_FIELDS, Criterion, Table
from judges.workspace import Workspace
from labels.errors import CalibrateError

PREVIEW_ROWS = 20
AUTO = "(automatic)"
FORMATS = ["(from extension)", *FILE_FORMATS, "ragas"]
_EXTENSIONS = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")
_SKIP_DIRS = {"node_modules", "__pycache__", "venv", "site-packages", "test-artifacts"}


def _datasets(workspace: Workspace) -> None:
    st.subheader("Datasets")
    rows = workspace.labels.datasets()
    if not rows:
        st.info(
            "No datasets yet. Import a file below, or on the command line: "
            "`calibrate import FILE --dataset NAME` (while the app has the database open, "
            "the command runs inside the app)."
        )
        return
    runs = label_queue.judge_run_counts(workspace)
    frame = pd.DataFrame(
        [
            {
                "dataset": d.name, "kind": d.kind, "items": d.items, "labels": d.labels,
                "annotators": d.annotators, "judge runs": runs.get(d.name, 0),
                "source file": d.source_file or "", "created": d.created_at,
            }
            for d in rows
        ]
    )
    st.dataframe(frame, hide_index=True, key="datasets_table")
    access.page_link("label", "Start labelling", ":material/task_alt:")


def _inside_root(path: Path, root: Path) -> bool:
    """Whether ``path``, its links followed, is a regular file under the app's folder ``root``.

    Anyone who can open the app can import what it lists: a link such as
    ``leak.csv -> /etc/shadow`` must not put a file of the server outside that folder into a
    dataset, and a FIFO or device must not hang or fill the server.
    """
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):  # a broken link, or a loop of links
        return False
    return real.is_relative_to(root) and real.is_file()


def _local_files() -> list[str]:
    """Data files under the directory the app was started in (3 levels, at most 200).

    Only regular files whose real path stays inside that directory are listed (links are
    followed to check, directories are not descended through links).
    """
    root = Path.cwd().resolve()
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        depth = len(Path(folder).relative_to(root).parts)
        # Prune hidden folders, environments and caches; stop descending past three levels.
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                         and depth < 2)
        for name in sorted(files):
            path = Path(folder) / name
            if Path(name).suffix.lower() in _EXTENSIONS and _inside_root(path, root):
                found.append(str(path.relative_to(root)))
                if len(found) >= 200:
                    return found
    return found


def _uploaded_path() -> str | None:
    max_mb = resources.get_settings().max_upload_mb
    upload = st.file_uploader(
        f"Upload a CSV, JSONL, JSON or Parquet file (at most {max_mb} MB)",
        type=[e.lstrip(".") for e in _EXTENSIONS], key=state.upload_key(),
        max_upload_size=max_mb,
    )
    uploads = resources.session_uploads()
    if upload is None:
        uploads.discard()  # the file was removed from the uploader: delete our copy too
        return None
    try:
        # Checked here too: the app may run under plain `streamlit run` without the cap.
        check_upload_size(upload.name, upload.size, max_mb)
        # Kept under the original name: the importer records it as the dataset's source file.
        return str(uploads.hold(upload.file_id, upload.name, upload.getvalue()))
    except UploadError as error:
        uploads.discard()
        widgets.message("error", str(error))
        return None


def _picked_path() -> str | None:
    files = _local_files()
    other = "Another path..."
    choice = st.selectbox(
        "File on the server", [*files, other], index=None,
        placeholder="Pick a file found in the app's directory", key="picked_file",
    )
    if choice == other:
        typed = st.text_input("Path, relative to the app's directory", key="typed").strip()
        if not typed:
            return None
        # Anyone who can open the app can import: keep them inside the directory it serves,
        # so the app cannot be used to read arbitrary files of the server into a dataset.
        root = Path.cwd().resolve()
        if not (root / typed).resolve().is_relative_to(root):
            st.error(f"{widgets.escape_markdown(typed)}: only files under the app's directory "
                     f"({widgets.escape_markdown(root)}) can be picked here; upload the file "
                     "instead, or use `calibrate import` on the server.")
            return None
        return str(root / typed)
    if choice is not None and not _inside_root(Path.cwd() / choice, Path.cwd().resolve()):
        st.error(f"{widgets.escape_markdown(choice)} is no longer a file inside the app's "
                 "directory; pick it again.")
        return None
    return choice


@st.cache_data(show_spinner=False, max_entries=4)
def _read(path: str, display_name: str, mtime: float, file_format: str | None,
          encoding: str) -> Table:
    return importing.read_file(path, format=file_format, encoding=encoding,
                               display_name=display_name)


def _display_name(path: str) -> str:
    """How messages name the file: never by the server's temporary folder.

    An upload by its own name, a server file by its path relative to the app's directory.
    """
    if resources.session_uploads().holds(path):
        return Path(path).name
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return Path(path).name


def _mapping_inputs(table: Table, is_ragas: bool) -> dict[str, str]:
    detected = importing.detected_columns(table, ragas=is_ragas)
    mapping: dict[str, str] = {}
    st.caption(
        "Which column feeds each field. Automatic uses the importer's detection (shown in "
        "brackets); sources may come from several columns, one passage each."
    )
    cols = st.columns(3)
    fields = [f for f in ITEM_FIELDS if f != "sources"]
    for k, field in enumerate(fields):
        found = detected.get(field)
        auto = f"{AUTO} [{found[0]}]" if found else f"{AUTO} [none]"
        with cols[k % 3]:
            choice = st.selectbox(field, [auto, *table.columns], key=f"map_{field}")
        if choice != auto and choice is not None:
            mapping[field] = choice
    found_sources = detected.get("sources")
    sources = st.multiselect(
        "sources", table.columns, key="map_sources",
        placeholder=f"automatic [{', '.join(found_sources) if found_sources else 'none'}]",
    )
    if sources:
        mapping["sources"] = ",".join(sources)
    return mapping


def _preview(table: Table, mapping: dict[str, str], is_ragas: bool) -> bool:
    try:
        preview = importing.preview_rows(table, mapping, ragas=is_ragas, rows=PREVIEW_ROWS)
    except CalibrateError as error:
        widgets.message("error", str(error))
        return False
    frame, kind, count = preview.frame, preview.kind, preview.rows
    shown = frame.drop(columns=["metadata"]).rename(columns={"id": "item id"})
    shown["sources"] = shown["sources"].map(lambda s: s.count('"text"'))
    if kind == "pairwise":
        shown = shown.drop(columns=["answer"])
    else:
        shown = shown.drop(columns=["answer_a", "answer_b"])
    st.caption(
        f"The first {count} of {table.n_rows:,} rows as they will be stored "
        f"({kind}; 'sources' is the number of passages; an empty item id gets a content hash)."
    )
    st.dataframe(shown, hide_index=True, key="preview_table")
    return True


def _do_import(
    workspace: Workspace, path: str, dataset: str, file_format: str | None,
    mapping: dict[str, str], encoding: str, on_changed: Any,
) -> None:
    try:
        summary = importing.import_rows(
            workspace, path, dataset, format=file_format, mapping=mapping, encoding=encoding,
            on_changed=on_changed, display_name=_display_name(path),
        )
    except CalibrateError as error:
        state.flash("error", str(error))
        return
    finally:
        # An uploaded file is deleted once imported, whatever the outcome; the emptied
        # uploader takes the next file.
        uploads = resources.session_uploads()
        if uploads.holds(path):
            uploads.discard()
            state.reset_upload()
    message = (
        f"{summary.rows_read:,} rows read: {summary.added:,} added, {summary.unchanged:,} "
        f"already present" + (f", {summary.changed:,} changed rows kept as stored"
                              if summary.changed else "")
    )
    # The importer's warnings (e.g. sources kept as plain text) come with the result.
    state.flash("warning" if summary.warnings else "success",
                f"Imported into {summary.dataset!r}. {message}."
                + "".join(f" Warning: {w}" for w in summary.warnings))


def _import_section(workspace: Workspace) -> None:
    st.subheader("Import rows")
    how = st.radio(
        "Where is the file?", ["Upload", "On the server"], horizontal=True, key="import_from"
    )
    path = _uploaded_path() if how == "Upload" else _picked_path()
    if not path:
        return
    left, right = st.columns(2)
    fmt_choice = left.selectbox("Format", FORMATS, key="import_format")
    is_ragas = fmt_choice == "ragas"
    file_format = None if fmt_choice == FORMATS[0] or is_ragas else fmt_choice
    encoding = right.text_input("Text encoding", value="utf-8", key="import_encoding")
    try:
        table = _read(path, _display_name(path), Path(path).stat().st_mtime, file_format,
                      encoding)
    except FileNotFoundError:
        widgets.message("error", f"{_display_name(path)}: no such file")
        return
    except (CalibrateError, OSError) as error:
        widgets.message("error", str(error))
        return
    with st.expander("Map columns", expanded=False):
        mapping = _mapping_inputs(table, is_ragas)
    if not _preview(table, mapping, is_ragas):
        return
    default_name = Path(path).stem
    left, right = st.columns(2)
    dataset = left.text_input("Dataset name", value=default_name, key="import_dataset")
    on_changed = right.radio(
        "A row whose content changed under an existing id",
        ["error", "skip"], horizontal=True, key="import_on_changed",
        format_func=lambda v: "fail the import" if v == "error" else "keep the stored row",
    )
    st.button(
        "Import", type="primary", icon=":material/upload:", key="import_button",
        disabled=not dataset.strip(),
        on_click=_do_import,
        args=(workspace, path, dataset.strip(), "ragas" if is_ragas else file_format, mapping,
              encoding, on_changed),
    )


def _save_criterion(workspace: Workspace, name: str, kind: Any, guidelines: str, tags: str,
                    show_reference: bool) -> None:
    try:
        importing.save_criterion(workspace, name, kind, guidelines, tags, show_reference)
    except (CalibrateError, ValueError) as error:
        state.flash("error", str(error))
        return
    state.flash("success", f"Saved criterion {name!r}.")


def _criteria_section(workspace: Workspace) -> None:
    with st.expander("Criteria: what annotators judge, their guidelines and failure tags"):
        criteria = {c.name: c for c in workspace.labels.criteria()}
        new = "New criterion..."
        choice = st.selectbox("Criterion", [*criteria, new], key="criterion_edit")
        if choice == new:
            name = st.text_input("Name", key="criterion_new_name").strip()
            kind = st.radio("Kind", ["pointwise", "pairwise"], horizontal=True,
                            key="criterion_new_kind")
            current = Criterion(name=name or "new", kind=kind)  # type: ignore[arg-type]
        else:
            name, current = str(choice), criteria[str(choice)]
            kind = current.kind
        key = f"crit_{name}"
        guidelines = st.text_area(
            "Guidelines (shown to annotators as written)", value=current.guidelines,
            key=f"{key}_guidelines", height=150,
        )
        tags = st.text_input(
            "Failure tags (comma-separated; keys 1-9 toggle them while labelling)",
            value=", ".join(current.failure_tags), key=f"{key}_tags",
        )
        show_reference = st.checkbox(
            "Annotators may reveal the reference answer", value=current.show_reference,
            key=f"{key}_reference",
        )
        st.button(
            "Save criterion", key="criterion_save", disabled=not name,
            on_click=_save_criterion,
            args=(workspace, name, kind, guidelines, tags, show_reference),
        )


access.require_page("data")
workspace = resources.get_workspace()
st.header("Data")
if (message := state.pop_flash()) is not None:
    widgets.message(*message)
_datasets(workspace)
_import_section(workspace)
_criteria_section(workspace)
