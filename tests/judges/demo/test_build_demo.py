"""build_demo on real DuckDB files, and `calibrate demo` through click's runner."""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import calibrate_app.cli._demo as demo_cli
from calibrate_app.cli import cli
from judges.demo import (
    AFTER_FIX_DATASET,
    DEMO_DATASETS,
    LABELLED_DATASET,
    PRODUCTION_DATASET,
    DemoSummary,
    build_demo,
)
from judges.demo.layout import DATA_DIR, MTBENCH_DATASET
from judges.workspace import Workspace
from labels import open_store
from labels.errors import ConflictError

EXPECTED_LABELS = {
    "faithfulness/dana": 135, "faithfulness/emeka": 135,
    "correctness/dana": 135, "correctness/emeka": 70,
    "preference/65 MT-Bench experts": 1751,
}


def _snapshot(db: Path) -> dict[str, Any]:
    store = open_store(str(db))
    try:
        items = {name: store.count_items(name) for name in DEMO_DATASETS}
        labels = store.current_labels(LABELLED_DATASET)
        verdicts = sorted(
            (r.item_id, r.annotator, r.criterion, r.verdict, r.note)
            for r in labels.itertuples(index=False)
        )
        correctness = store.current_labels(LABELLED_DATASET, criterion="correctness")
        return {
            "items": items, "faithfulness": verdicts, "correctness": len(correctness),
            "hash": store.dataset_content_hash(LABELLED_DATASET),
            "datasets": sorted(d.name for d in store.datasets()),
            "annotators": store.annotators(),
        }
    finally:
        store.db.close()


def test_build_creates_the_demo_fast(db_path: Path) -> None:
    summary = build_demo(db_path)
    assert summary.rebuilt
    assert summary.items == {LABELLED_DATASET: 200, PRODUCTION_DATASET: 600,
                             AFTER_FIX_DATASET: 200, MTBENCH_DATASET: 1232}
    assert summary.labels == EXPECTED_LABELS
    assert any("CC BY 4.0" in line for line in summary.lines())
    assert summary.seconds > 0  # how fast is for a bench, not a wall-clock assert here
    store = open_store(str(db_path))
    try:
        item = store.item(LABELLED_DATASET, "lab-001")
        assert item.metadata["failure_mode"]
        assert item.segment and item.document_id and item.sources
        assert all(s.source_id for s in item.sources)
        assert set(store.annotators()) >= {"dana", "emeka"}
    finally:
        store.db.close()


def test_build_is_idempotent(
    db_path: Path, demo_build: DemoSummary, copy_demo: Callable[[Path], Path]
) -> None:
    first = demo_build  # the session's build, copied: the second build replaces a demo
    before = _snapshot(copy_demo(db_path))
    second = build_demo(db_path)
    assert (second.items, second.labels) == (first.items, first.labels)
    assert _snapshot(db_path) == before
    kept = build_demo(db_path, refresh=False)
    assert not kept.rebuilt
    assert (kept.items, kept.labels) == (first.items, first.labels)
    assert _snapshot(db_path) == before


def _first_labelled_by(annotator: str) -> str:
    lines = (DATA_DIR / "labels" / f"faithfulness-{annotator}.csv").read_text().splitlines()
    return lines[1].split(",", 1)[0]


def test_refresh_discards_app_labels_and_keep_preserves_them(
    db_path: Path, copy_demo: Callable[[Path], Path]
) -> None:
    copy_demo(db_path)  # a built demo
    mine = _first_labelled_by("dana")
    store = open_store(str(db_path))
    try:
        store.add_label(LABELLED_DATASET, mine, "dana", "unsure", note="changed my mind")
        store.add_label(LABELLED_DATASET, "lab-002", "visitor", "fail")
    finally:
        store.db.close()
    build_demo(db_path, refresh=False)
    store = open_store(str(db_path))
    try:
        latest = store.history(LABELLED_DATASET, mine, annotator="dana")[-1]
        assert (latest.verdict, latest.note) == ("unsure", "changed my mind")
        assert store.labelled_item_ids(LABELLED_DATASET, "visitor", "faithfulness") == {"lab-002"}
    finally:
        store.db.close()
    build_demo(db_path)
    store = open_store(str(db_path))
    try:
        assert not store.labelled_item_ids(LABELLED_DATASET, "visitor", "faithfulness")
        history = store.history(LABELLED_DATASET, mine, annotator="dana")
        assert [label.note for label in history] != ["changed my mind"]
        assert all(label.origin == "import" for label in history)
    finally:
        store.db.close()


def test_keep_on_a_missing_file_builds_it(db_path: Path) -> None:
    summary = build_demo(db_path, refresh=False)
    assert summary.rebuilt and summary.items[PRODUCTION_DATASET] == 600


def test_never_replaces_a_database_with_other_work(db_path: Path, tmp_path: Path) -> None:
    rows = tmp_path / "mine.jsonl"
    rows.write_text(json.dumps({"id": "m1", "question": "q", "answer": "a"}) + "\n")
    from labels.importing import import_rows

    store = open_store(str(db_path))
    try:
        import_rows(store, rows, "my-work")
    finally:
        store.db.close()
    with pytest.raises(ConflictError, match="my-work"):
        build_demo(db_path)
    store = open_store(str(db_path))
    try:
        assert [d.name for d in store.datasets()] == ["my-work"]
    finally:
        store.db.close()
    assert not list(tmp_path.glob(".*building*"))
    # --keep adds the demo beside the user's own dataset, without touching it.
    build_demo(db_path, refresh=False)
    assert _snapshot(db_path)["datasets"] == sorted(["my-work", *DEMO_DATASETS])


def test_never_replaces_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.duckdb"
    path.write_text("my notes, not a database\n")
    with pytest.raises(ConflictError, match=r"as a DuckDB database.*refusing to replace"):
        build_demo(path)
    assert path.read_text() == "my notes, not a database\n"


def test_a_bad_data_file_leaves_the_old_demo_in_place(
    db_path: Path, tmp_path: Path, copy_demo: Callable[[Path], Path]
) -> None:
    copy_demo(db_path)  # a built demo
    before = _snapshot(db_path)
    broken = tmp_path / "data"
    shutil.copytree(DATA_DIR, broken)
    with (broken / "labels" / "faithfulness-dana.csv").open("a") as handle:
        handle.write("lab-999,pass,\n")
    with pytest.raises(Exception, match="lab-999"):
        build_demo(db_path, data_dir=broken)
    assert _snapshot(db_path) == before
    assert not list(db_path.parent.glob(".*building*"))


def test_recorded_verdict_files_go_through_the_verdict_import(
    db_path: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    # Without the shipped recordings, so this test's own verdict file is the only one (and
    # without the MT-Bench story, whose import leaves a note).
    shutil.copytree(DATA_DIR, data, ignore=shutil.ignore_patterns("verdicts", "mtbench"))
    folder = data / "verdicts" / LABELLED_DATASET / "faithfulness"
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"id": "lab-001", "verdict": "pass", "repeat": 0, "order": "original", "reasoning": "ok"},
        {"id": "lab-001", "verdict": "fail", "repeat": 0, "order": "swapped", "reasoning": "no"},
        {"id": "lab-002", "verdict": "", "repeat": 0, "order": "original", "reasoning": ""},
    ]
    (folder / "demo-judge.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "notes.txt").write_text("not a verdict file")
    summary = build_demo(db_path, data_dir=data)
    if importlib.util.find_spec("judges.verdicts") is None:
        assert summary.verdict_files == 0
        assert any("judges.verdicts" in note for note in summary.notes)
        return
    from judges.verdicts import judge_verdicts

    assert summary.verdict_files == 1 and not summary.notes

    def stored() -> list[tuple[str, str, str]]:
        store = open_store(str(db_path))
        try:
            frame = judge_verdicts(Workspace.of(store), LABELLED_DATASET, "demo-judge")
        finally:
            store.db.close()
        return [(r.item_id, r.order, r.verdict) for r in frame.itertuples(index=False)]

    expected = [("lab-001", "original", "pass"), ("lab-001", "swapped", "fail"),
                ("lab-002", "original", "unscored")]
    assert stored() == expected
    # --keep re-runs the import; an unchanged file adds nothing.
    assert build_demo(db_path, data_dir=data, refresh=False).verdict_files == 1
    assert stored() == expected
    assert build_demo(db_path, data_dir=data).verdict_files == 1
    assert stored() == expected


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_demo_no_app(tmp_path: Path) -> None:
    db = tmp_path / "demo.duckdb"
    result = _run("--db", str(db), "demo", "--no-app")
    assert result.exit_code == 0, result.output
    assert f"dataset {LABELLED_DATASET}: 200 rows" in result.output
    assert f"dataset {PRODUCTION_DATASET}: 600 rows" in result.output
    assert f"dataset {AFTER_FIX_DATASET}: 200 rows" in result.output
    assert "(3 of them a scripted stand-in's, simulated, not a model's" in result.output
    assert "faithfulness/dana: 135" in result.output
    again = _run("--db", str(db), "demo", "--no-app", "--keep")
    assert again.exit_code == 0 and "kept and completed" in again.output


def test_cli_demo_starts_the_app_on_the_demo_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[list[str], dict[str, str]]] = []

    def fake_exec(command: list[str], env: dict[str, str]) -> None:
        calls.append((command, env))

    monkeypatch.setattr(demo_cli, "exec_app", fake_exec)
    db = tmp_path / "demo.duckdb"
    result = _run("--db", str(db), "demo", "--port", "8765")
    assert result.exit_code == 0, result.output
    (command, env), = calls
    assert "calibrate_app.serve" in command and "8765" in command
    assert env["CALIBRATE_DB_PATH"] == str(db.resolve())
    assert "http://127.0.0.1:8765" in result.output
    assert "/calibration?dataset=demo-labelled" in result.output
    # The second story: the same database, the link opens the MT-Bench dataset.
    story = _run("--db", str(db), "demo", "--port", "8765", "--story", "mtbench")
    assert story.exit_code == 0, story.output
    assert "the mtbench story: http://127.0.0.1:8765/calibration?dataset=mtbench" in story.output


def test_cli_demo_refuses_other_work_with_exit_code_2(tmp_path: Path) -> None:
    db = tmp_path / "mine.duckdb"
    rows = tmp_path / "mine.jsonl"
    rows.write_text(json.dumps({"id": "m1", "question": "q", "answer": "a"}) + "\n")
    assert _run("--db", str(db), "import", str(rows), "--dataset", "mine").exit_code == 0
    result = CliRunner().invoke(cli, ["--db", str(db), "demo", "--no-app"])
    assert result.exit_code == 2
    assert "not part of the demo" in result.output
