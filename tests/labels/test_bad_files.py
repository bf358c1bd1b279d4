"""Every malformed file in tests/data/bad gets its clear message, and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import BAD_FILES

from labels import CalibrateError, ImportFileError, LabelStore, import_rows

BAD = BAD_FILES
EXPECTED: dict[str, list[str]] = json.loads((BAD / "EXPECTED.json").read_text())


def test_the_corpus_is_complete() -> None:
    files = {p.name for p in BAD.iterdir() if p.name != "EXPECTED.json"}
    assert files == set(EXPECTED)
    assert len(files) >= 30


def _db_fingerprint(store: LabelStore) -> tuple[int, int]:
    with store.db.cursor() as cur:
        datasets = cur.execute("SELECT count(*) FROM datasets").fetchall()[0][0]
        items = cur.execute("SELECT count(*) FROM items").fetchall()[0][0]
    return datasets, items


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_file_is_refused_with_its_message(store: LabelStore, name: str) -> None:
    before = _db_fingerprint(store)
    with pytest.raises(ImportFileError) as caught:
        import_rows(store, BAD / name, "bad")
    message = str(caught.value)
    assert str(BAD / name) in message, "the message names the file"
    for fragment in EXPECTED[name]:
        assert fragment in message
    assert _db_fingerprint(store) == before, "nothing half-imported"


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
