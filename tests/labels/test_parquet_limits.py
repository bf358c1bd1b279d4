"""Parquet files that would inflate are refused from their footer, before any page is read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labels import ImportFileError, LabelStore, import_rows
from labels.reading import check_parquet_size

ROWS = 3_000_000


@pytest.fixture(scope="module")
def row_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Parquet file of about 16 KB that holds 3,000,000 rows (dictionary + RLE encoded)."""
    path = tmp_path_factory.mktemp("bomb") / "rows.parquet"
    column = pa.array(["q"] * ROWS).dictionary_encode()
    pq.write_table(pa.table({"question": column, "answer": column}), path,
                   compression="zstd", row_group_size=ROWS)
    return path


@pytest.fixture
def no_page_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything reads the file's data pages (only the footer may be read)."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file's data was read")

    monkeypatch.setattr(pq, "read_table", refuse)


def _count(store: LabelStore) -> int:
    with store.db.cursor() as cur:
        return int(cur.execute("SELECT count(*) FROM items").fetchall()[0][0])


def test_three_million_rows_in_16_kb_are_refused_unread(
    store: LabelStore, row_bomb: Path, no_page_reads: None
) -> None:
    assert row_bomb.stat().st_size < 25_000
    with pytest.raises(ImportFileError) as caught:
        import_rows(store, row_bomb, "bomb")
    message = str(caught.value)
    assert message.startswith(str(row_bomb))
    assert "holds 3,000,000 rows, more than the limit of 1,000,000 (CALIBRATE_MAX_ROWS)" in message
    assert _count(store) == 0 and store.dataset_kinds() == {}


def test_a_compression_bomb_is_refused_by_its_uncompressed_size(
    store: LabelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_page_reads: None
) -> None:
    path = tmp_path / "zip.parquet"
    text = "x" * 100_000
    # 200 rows of 100 KB: 20 MB of column data compressed to a few KB (no dictionary).
    pq.write_table(pa.table({"question": [text] * 200, "answer": [text] * 200}), path,
                   compression="zstd", use_dictionary=False)
    assert path.stat().st_size < 50_000
    monkeypatch.setenv("CALIBRATE_MAX_UNCOMPRESSED_MB", "5")
    with pytest.raises(ImportFileError, match=r"takes 38\.\d MB uncompressed, more than the "
                       r"limit of 5 MB \(CALIBRATE_MAX_UNCOMPRESSED_MB\)"):
        import_rows(store, path, "zip")
    assert _count(store) == 0


def test_files_within_the_limits_import(
    store: LabelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ok.parquet"
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(10)],
                             "question": ["q"] * 10, "answer": ["a"] * 10}), path)
    monkeypatch.setenv("CALIBRATE_MAX_ROWS", "9")
    with pytest.raises(ImportFileError, match="holds 10 rows, more than the limit of 9"):
        import_rows(store, path, "ok")
    monkeypatch.setenv("CALIBRATE_MAX_ROWS", "10")
    assert import_rows(store, path, "ok").added == 10


def test_not_parquet_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "fake.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(ImportFileError, match="not a readable Parquet file"):
        check_parquet_size(str(path))


def test_the_cli_refuses_the_bomb_with_exit_2(row_bomb: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "calibrate"
    done = subprocess.run(
        [str(script), "--db", str(tmp_path / "cli.duckdb"), "import", str(row_bomb),
         "--dataset", "bomb"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert "holds 3,000,000 rows" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
