"""Every malformed file in tests/data/bad gets its clear message, and changes nothing.

``tests/data/bad/*`` are row files (``import_rows``), ``bad/labels/*`` label files
(``import_labels``) and ``bad/verdicts/*`` verdict files (``import_verdicts``); each folder's
``EXPECTED.json`` lists the fragments its message must contain (file, row, column, reason).
No message may echo the canary key some of the files hold.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import BAD_FILES

from judges.stores.judge_store import JudgeStore
from judges.verdicts import import_verdicts
from judges.workspace import Workspace
from labels import CalibrateError, ImportFileError, LabelStore, import_labels, import_rows

BAD = BAD_FILES
SECRET = "5f1c2d9e8b7a6c4d3e2f1a0b"  # the secret part of the canary key in some bad files


def _expected(folder: Path) -> dict[str, list[str]]:
    expected: dict[str, list[str]] = json.loads((folder / "EXPECTED.json").read_text())
    return expected


EXPECTED = _expected(BAD)
EXPECTED_LABELS = _expected(BAD / "labels")
EXPECTED_VERDICTS = _expected(BAD / "verdicts")


@pytest.mark.parametrize(
    ("folder", "expected", "at_least"),
    [(BAD, EXPECTED, 45), (BAD / "labels", EXPECTED_LABELS, 6),
     (BAD / "verdicts", EXPECTED_VERDICTS, 9)],
)
def test_the_corpus_is_complete(
    folder: Path, expected: dict[str, list[str]], at_least: int
) -> None:
    files = {p.name for p in folder.iterdir() if p.is_file() and p.name != "EXPECTED.json"}
    assert files == set(expected)
    assert len(files) >= at_least


def _db_fingerprint(store: LabelStore) -> tuple[int, ...]:
    JudgeStore(store.db)  # the judge tables exist, so they can be counted
    tables = ("datasets", "items", "labels", "annotators", "criteria", "judge_configs",
              "judge_runs", "judge_calls")
    with store.db.cursor() as cur:
        return tuple(
            cur.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] for table in tables
        )


def _assert_refused(store: LabelStore, path: Path, fragments: list[str], action: object) -> None:
    before = _db_fingerprint(store)
    with pytest.raises(ImportFileError) as caught:
        action()  # type: ignore[operator]
    message = str(caught.value)
    assert str(path) in message, "the message names the file"
    for fragment in fragments:
        assert fragment in message
    assert SECRET not in message, "a cell's secret was echoed"
    assert _db_fingerprint(store) == before, "nothing half-imported"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_file_is_refused_with_its_message(store: LabelStore, name: str) -> None:
    path = BAD / name
    _assert_refused(store, path, EXPECTED[name], lambda: import_rows(store, path, "bad"))


@pytest.fixture
def labelled_store(store: LabelStore, tmp_path: Path) -> LabelStore:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(
        json.dumps({"id": i, "question": "q", "answer": f"a{i}"}) + "\n" for i in ("1", "2")
    ))
    import_rows(store, rows, "d")
    return store


@pytest.mark.parametrize("name", sorted(EXPECTED_LABELS))
def test_bad_label_file_is_refused_with_its_message(labelled_store: LabelStore, name: str) -> None:
    path = BAD / "labels" / name
    _assert_refused(
        labelled_store, path, EXPECTED_LABELS[name],
        lambda: import_labels(labelled_store, path, "d", annotator="dana"),
    )


@pytest.mark.parametrize("name", sorted(EXPECTED_VERDICTS))
def test_bad_verdict_file_is_refused_with_its_message(
    labelled_store: LabelStore, name: str
) -> None:
    path = BAD / "verdicts" / name
    _assert_refused(
        labelled_store, path, EXPECTED_VERDICTS[name],
        lambda: import_verdicts(Workspace.of(labelled_store), path, dataset="d",
                                judge="their-judge"),
    )


def test_bad_file_into_existing_dataset_leaves_it_untouched(
    store: LabelStore, tmp_path: Path
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    import_rows(store, good, "d")
    for name in ("ragged_row.csv", "duplicate_ids.csv", "bad_json_line.jsonl"):
        with pytest.raises(ImportFileError):
            import_rows(store, BAD / name, "d")
    assert [i.item_id for i in store.items("d")] == ["1"]


def test_five_megabyte_cell_is_refused(store: LabelStore, tmp_path: Path) -> None:
    path = tmp_path / "huge.csv"
    path.write_text("id,question,answer\n1,q," + "x" * 5_000_000 + "\n")
    with pytest.raises(
        ImportFileError, match=r"row 1, column 'answer': holds 5,000,000 characters"
    ):
        import_rows(store, path, "d")


def test_formula_cells_are_imported_as_plain_text(store: LabelStore, tmp_path: Path) -> None:
    path = tmp_path / "formula.csv"
    path.write_text('id,question,answer\n1,"=HYPERLINK(""http://x"",""y"")",@SUM(A1)\n')
    import_rows(store, path, "d")
    item = store.item("d", "1")
    assert item.question == '=HYPERLINK("http://x","y")'
    assert item.answer == "@SUM(A1)"


_cells = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.lists(
        st.one_of(
            st.text(max_size=5),
            st.integers(),
            st.dictionaries(st.text(max_size=4), st.text(max_size=4)),
        ),
        max_size=3,
    ),
    st.dictionaries(
        st.sampled_from(["text", "id", "x"]),
        st.one_of(st.text(max_size=4), st.integers()),
        max_size=2,
    ),
)
_records = st.lists(
    st.dictionaries(
        st.sampled_from(
            [
                "id",
                "question",
                "answer",
                "sources",
                "answer_a",
                "answer_b",
                "metadata",
                "segment",
                "source_ids",
                "other",
            ]
        ),
        _cells,
        max_size=8,
    ),
    max_size=5,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=_records, as_json=st.booleans())
def test_fuzzed_files_either_import_or_fail_with_a_message(
    store: LabelStore, tmp_path: Path, records: list[dict], as_json: bool
) -> None:
    path = tmp_path / ("fuzz.json" if as_json else "fuzz.jsonl")
    if as_json:
        path.write_text(json.dumps(records))
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    before = store.count_items("fuzz")
    try:
        summary = import_rows(store, path, "fuzz", on_changed="skip")
    except CalibrateError as error:
        assert str(path) in str(error) or "dataset" in str(error)
        assert store.count_items("fuzz") == before
    else:
        assert store.count_items("fuzz") == before + summary.added


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=200))
def test_fuzzed_csv_bytes_never_crash(store: LabelStore, tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.csv"
    path.write_bytes(b"id,question,answer\n" + data)
    try:
        import_rows(store, path, "fuzzcsv", on_changed="skip")
    except CalibrateError as error:
        assert str(path) in str(error)
