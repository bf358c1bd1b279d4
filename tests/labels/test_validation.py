"""Names, ids, encodings and messages: what the libraries accept, refuse and never echo."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from judges.config import ConfigError, load_builtin, parse_config
from judges.stores.judge_store import JudgeStore
from judges.verdicts import import_verdicts, judge_verdicts
from judges.workspace import Workspace
from labels import (
    CalibrateError,
    Criterion,
    DatabaseAccessError,
    ImportFileError,
    InvalidNameError,
    LabelStore,
    import_labels,
    import_rows,
    open_store,
)
from labels.reading import MAX_CELL_CHARS, ArrowColumns, read_table
from labels.validation import check_name, lookalike_key, normalise_id, shown

CANARY = "sk-canary-5f1c2d9e8b7a6c4d3e2f1a0b"
SECRET = CANARY.removeprefix("sk-canary-")
NFC, NFD = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")


def _rows(tmp_path: Path, ids: list[str], name: str = "rows.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(
        json.dumps({"id": i, "question": "q", "answer": f"answer {n}"}, ensure_ascii=False)
        + "\n" for n, i in enumerate(ids)
    ), encoding="utf-8")
    return path


def _counts(store: LabelStore) -> tuple[int, ...]:
    JudgeStore(store.db)
    with store.db.cursor() as cur:
        return tuple(
            cur.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
            for t in ("datasets", "items", "labels", "annotators", "criteria", "judge_configs",
                      "judge_runs", "judge_calls")
        )


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "support-bot", "prod-week", "faithfulness", "dana", "kim", "expert 1", "ana.lopez@example.org",
    "bramblepost_v2", "José", NFD, "अनिल", "x" * 64, "1",
])
def test_ordinary_names_pass(name: str) -> None:
    assert check_name(name) == unicodedata.normalize("NFC", name)


@pytest.mark.parametrize(("name", "problem"), [
    ("<script>", "contains '<'"),
    ("", "is empty"),
    (" dana", "starts or ends with a space"),
    ("dana ", "starts or ends with a space"),
    ("x" * 65, "is 65 characters long"),
    ("da\u200bna", "contains '\\u200b' (U+200B)"),
    ("a/b", "contains '/'"),
    ("line\nbreak", "contains '\\n'"),
    ("**bold**", "contains '*'"),
])
def test_bad_names_are_refused_naming_value_and_rule(name: str, problem: str) -> None:
    with pytest.raises(InvalidNameError) as caught:
        check_name(name, "annotator")
    message = str(caught.value)
    assert f"annotator name {shown(name, 40)}" in message
    assert problem in message
    assert "use letters, digits, spaces and - _ . @" in message


def test_the_store_refuses_bad_names_everywhere_and_writes_nothing(
    store: LabelStore, tmp_path: Path
) -> None:
    import_rows(store, _rows(tmp_path, ["1"]), "d")
    before = _counts(store)
    with pytest.raises(InvalidNameError, match="contains '<'"):
        store.add_annotator("<script>")
    with pytest.raises(InvalidNameError, match="dataset name"):
        store.create_dataset("<img src=x>")
    with pytest.raises(InvalidNameError, match="criterion name"):
        store.save_criterion(Criterion(name="<b>x</b>"))
    with pytest.raises(InvalidNameError, match="annotator name"):
        store.add_label("d", "1", "<script>alert(1)</script>", "pass")
    with pytest.raises(InvalidNameError, match="dataset name"):
        import_rows(store, _rows(tmp_path, ["2"]), "[link](http://x)")
    with pytest.raises(InvalidNameError, match="annotator name"):
        import_labels(store, _label_file(tmp_path, "1"), "d", annotator="<i>x</i>")
    with pytest.raises(InvalidNameError, match="judge name"):
        import_verdicts(Workspace.of(store), _verdict_file(tmp_path, "1"), dataset="d",
                        judge="<svg onload=x>")
    assert _counts(store) == before
    store.add_annotator(" dana ")  # surrounding spaces of a typed name are dropped
    assert "dana" in store.annotators()


def test_judge_config_names_are_at_most_64_characters() -> None:
    data = load_builtin("faithfulness").model_dump(mode="json")
    with pytest.raises(ConfigError, match="at most 64"):
        parse_config({**data, "name": "j" * 65})
    assert parse_config({**data, "name": "j" * 64}).name == "j" * 64


# -- ids --------------------------------------------------------------------------------------


def test_ids_are_normalised_the_same_for_rows_labels_and_verdicts(
    store: LabelStore, tmp_path: Path
) -> None:
    import_rows(store, _rows(tmp_path, [f" {NFD} ", "2"]), "d")
    assert store.item_ids("d") == [NFC, "2"]
    import_labels(store, _label_file(tmp_path, f"{NFD}  "), "d", annotator="dana")
    assert store.current_labels("d")["item_id"].tolist() == [NFC]
    import_verdicts(Workspace.of(store), _verdict_file(tmp_path, f"\t{NFD}"), dataset="d",
                    judge="ext")
    assert judge_verdicts(Workspace.of(store), "d", "ext")["item_id"].tolist() == [NFC]
    label = store.add_label("d", f" {NFD}", "kim", "fail")
    assert label.item_id == NFC


def test_an_id_that_looks_like_a_stored_one_is_refused(store: LabelStore, tmp_path: Path) -> None:
    import_rows(store, _rows(tmp_path, ["a1", "b2"]), "d")
    before = _counts(store)
    with pytest.raises(ImportFileError) as caught:
        import_rows(store, _rows(tmp_path, ["c3", "a\u200b1"], "more.jsonl"), "d")
    message = str(caught.value)
    assert "row 2, column 'id'" in message
    assert "'a\\u200b1' looks the same as the stored item 'a1'" in message
    assert _counts(store) == before


def test_lookalike_keys() -> None:
    assert normalise_id(f"  {NFD}\n") == NFC
    assert lookalike_key("a\u200b1") == lookalike_key("a1") == "a1"
    assert lookalike_key("a\u00a0 b") == lookalike_key("a b")
    assert lookalike_key("ab") != lookalike_key("a b")
    assert lookalike_key("A1") != lookalike_key("a1")


# -- files ------------------------------------------------------------------------------------


def _label_file(tmp_path: Path, item_id: str) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"id": item_id, "label": "pass"}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path


def _verdict_file(tmp_path: Path, item_id: str) -> Path:
    path = tmp_path / "verdicts.jsonl"
    path.write_text(json.dumps({"id": item_id, "verdict": "pass"}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("encoding", ["utf-32", "utf-16", "utf-8-sig"])
def test_files_with_a_byte_order_mark_are_decoded(
    store: LabelStore, tmp_path: Path, encoding: str
) -> None:
    path = tmp_path / "rows.csv"
    text = "id,question,answer\n1,Où est la facture ?,Dans « Billing »\n"
    path.write_bytes(text.encode(encoding))
    assert import_rows(store, path, "d").added == 1
    assert store.item("d", "1").question == "Où est la facture ?"


def test_a_csv_is_read_as_the_encoding_asked_and_kept_after_the_file_changes(
    store: LabelStore, tmp_path: Path
) -> None:
    """Arrow reads UTF-8 files in place; any other encoding asked for is decoded as asked.

    Bytes that are valid UTF-8 still read as Latin-1 when Latin-1 is asked for, and the
    table Arrow parsed holds copies: reading it after the file was emptied (its mapped pages
    gone) gives the rows, where a table still on those pages would crash the process.
    """
    path = tmp_path / "rows.csv"
    path.write_bytes("id,question,answer\n1,Où,a\n2,q,b\n".encode())
    assert import_rows(store, path, "latin", encoding="latin-1").added == 2
    assert store.item("latin", "1").question == "OÃ¹"
    table = read_table(path)
    assert table.arrow is not None
    path.write_bytes(b"")
    assert table.arrow.column("question").to_pylist() == ["Où", "q"]


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_the_head_of_a_table_is_its_first_records_converting_only_those(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    """Arrow-read (UTF-8) and careful-path (Latin-1) tables give what slicing each list gave.

    On the Arrow path no column is converted whole: ``ArrowColumns.__getitem__`` (what
    slicing ``data`` called) is never reached.
    """
    path = tmp_path / "rows.csv"
    path.write_bytes('id,question,answer\n1,Où,a\n2,"q\nq",b\n3,r,c\n'.encode(encoding))
    expected = read_table(path, encoding=encoding)
    table = read_table(path, encoding=encoding)
    assert (table.arrow is not None) == (encoding == "utf-8")

    def whole_column(self: ArrowColumns, name: str) -> list[Any]:
        raise AssertionError(f"column {name!r} converted whole")

    with monkeypatch.context() as patched:
        patched.setattr(ArrowColumns, "__getitem__", whole_column)
        heads = {n: table.head(n) for n in (0, 2, 3, 5)}
    for n, head in heads.items():
        count = min(n, expected.n_rows)
        assert head.path == expected.path and head.columns == expected.columns
        assert head.n_rows == count and head.arrow is None
        assert head.data == {name: values[:count] for name, values in expected.data.items()}
        assert head.lines == (expected.lines[:count] if expected.lines is not None else None)
    assert heads[2].data["question"] == ["Où", "q\nq"]
    assert expected.lines is None or heads[3].lines == [2, 3, 5]


@pytest.mark.parametrize(("content", "encoding", "message"), [
    (b'id,"i"d\n1,2\n', "utf-8", "the header names column 'id' twice"),
    (b'"id"x,question\n', "utf-8", "the file has a header but no rows"),
    (b"id,question,answer\n1,q,a\n", "utf8sig", "unknown encoding 'utf8sig'"),
    (b"\xa0\n\xa0\n".decode("latin-1").encode(), "utf-8", "the file is empty"),
    (b'id,id\n1,\xff\n', "utf-8", "not valid utf-8 text"),
    (None, "utf-8", "is a directory, not a file"),
])
def test_a_csv_read_by_arrow_is_refused_as_the_careful_reader_refuses_it(
    store: LabelStore, tmp_path: Path, content: bytes | None, encoding: str, message: str
) -> None:
    """Refused by the message each file got when every file was decoded in Python first.

    Arrow reads UTF-8 files without that decode; what it may not take, or refuses, is checked
    for its encoding and emptiness first, as before.
    """
    path = tmp_path / "rows.csv"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(ImportFileError, match=re.escape(message)):
        import_rows(store, path, "d", encoding=encoding)


def test_only_a_file_no_one_else_may_write_is_mapped(
    store: LabelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file others may write is read into memory, not mapped, with the same result.

    A mapped file another user truncates under the parse kills the app (SIGBUS), and with it
    every session.
    """
    import mmap

    mapped: list[int] = []
    real_mmap = mmap.mmap

    def spy(fileno: int, *args: Any, **kwargs: Any) -> mmap.mmap:
        mapped.append(fileno)
        return real_mmap(fileno, *args, **kwargs)

    monkeypatch.setattr(mmap, "mmap", spy)
    path = tmp_path / "rows.csv"
    path.write_text("id,question,answer\n1,Où,a\n", encoding="utf-8")
    for mode, dataset in [(0o644, "private"), (0o664, "group"), (0o646, "world")]:
        path.chmod(mode)
        assert import_rows(store, path, dataset).added == 1
        assert store.item(dataset, "1").question == "Où"
    assert len(mapped) == 1  # the 0o644 file only


def test_the_cell_limit_counts_characters_not_bytes(store: LabelStore, tmp_path: Path) -> None:
    """Two-byte characters: a cell at the limit is imported, one character more is refused."""
    path = tmp_path / "long.csv"
    path.write_text(f"id,question,answer\n1,q,{'é' * MAX_CELL_CHARS}\n", encoding="utf-8")
    assert import_rows(store, path, "d").added == 1
    path.write_text(f"id,question,answer\n1,q,a\n2,q,{'é' * (MAX_CELL_CHARS + 1)}\n",
                    encoding="utf-8")
    with pytest.raises(ImportFileError) as refused:
        import_rows(store, path, "e")
    assert str(refused.value) == (
        f"{path}, row 2, column 'answer': holds {MAX_CELL_CHARS + 1:,} characters; "
        f"the limit is {MAX_CELL_CHARS:,} per cell")


def test_utf32_without_a_mark_is_named_and_decodes_when_told(
    store: LabelStore, tmp_path: Path
) -> None:
    path = tmp_path / "rows.csv"
    path.write_bytes("id,question,answer\n1,q,a\n".encode("utf-32-le"))
    with pytest.raises(ImportFileError, match="UTF-32 without a byte-order mark"):
        import_rows(store, path, "d")
    assert import_rows(store, path, "d", encoding="utf-32-le").added == 1


def test_plain_text_sources_starting_with_a_bracket_are_kept_with_a_warning(
    store: LabelStore, tmp_path: Path
) -> None:
    path = tmp_path / "cites.csv"
    path.write_text(
        "id,question,answer,sources\n"
        '1,q,a,"[1] See the manual, section 4."\n'
        '2,q,a,"[""a"", ""b"""\n'
        '3,q,a,"[""a list"", ""of two""]"\n'
    )
    summary = import_rows(store, path, "d", display_name="cites.csv")
    assert summary.added == 3
    assert [s.text for s in store.item("d", "1").sources] == ["[1] See the manual, section 4."]
    assert [s.text for s in store.item("d", "3").sources] == ["a list", "of two"]
    assert summary.warnings == (
        "cites.csv, column 'sources': rows 1, 2 start with '[' but are not a JSON list; "
        "each was kept as plain text (one passage)",
    )
    assert str(tmp_path) not in " ".join(summary.warnings)


def test_messages_name_the_upload_not_the_server_path(store: LabelStore, tmp_path: Path) -> None:
    path = tmp_path / "tmpab12cd.jsonl"
    path.write_text('{"id": "1", "question": "q"}\n')
    with pytest.raises(ImportFileError) as caught:
        import_rows(store, path, "d", display_name="my rows.jsonl")
    assert str(caught.value).startswith("my rows.jsonl: missing required column 'answer'")
    assert str(tmp_path) not in str(caught.value)


# -- verdict import: all or nothing -----------------------------------------------------------


def test_a_verdict_import_failing_while_writing_leaves_no_judge_and_no_run(
    store: LabelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import judges.stores.judge_store

    import_rows(store, _rows(tmp_path, ["1"]), "d")
    before = _counts(store)

    def broken(cur: object, calls: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(judges.stores.judge_store, "insert_calls", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        import_verdicts(Workspace.of(store), _verdict_file(tmp_path, "1"), dataset="d", judge="ext")
    assert _counts(store) == before  # no judge config, no failed run, no call


# -- secrets and the command line -------------------------------------------------------------


def test_import_of_a_dotenv_never_prints_the_key(tmp_path: Path) -> None:
    from calibrate_app.cli import cli

    env = tmp_path / ".env"
    env.write_text(f"CALIBRATE_OPENAI_API_KEY={CANARY}\nCALIBRATE_ACCESS_CODE=letmein-please\n")
    runner = CliRunner()
    db = str(tmp_path / "c.duckdb")
    for args in (
        ["import", str(env), "--format", "csv", "--dataset", "d"],
        ["import", str(env), "--format", "jsonl", "--dataset", "d"],
        ["labels", "import", str(env), "--dataset", "d", "--annotator", "dana"],
    ):
        result = runner.invoke(cli, ["--db", db, *args])
        assert result.exit_code == 2, result.output
        assert SECRET not in result.output
        assert "letmein" not in result.output
        assert "Traceback" not in result.output


def test_verdict_import_with_a_huge_repeat_exits_2_naming_row_and_column(
    tmp_path: Path
) -> None:
    from calibrate_app.cli import cli

    db = tmp_path / "c.duckdb"
    store = open_store(str(db))
    import_rows(store, _rows(tmp_path, ["1", "2"]), "d")
    store.db.close()
    path = tmp_path / "v.csv"
    path.write_text("id,verdict,repeat\n1,pass,0\n2,fail,2147483648\n")
    result = CliRunner().invoke(cli, ["--db", str(db), "verdicts", "import", str(path),
                                      "--dataset", "d", "--judge", "ext"])
    assert result.exit_code == 2
    assert "row 2, column 'repeat': '2147483648' is not a repeat index" in result.output
    store = open_store(str(db))
    try:
        assert _counts(store)[5:] == (0, 0, 0)
    finally:
        store.db.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a command as another user")
def test_a_database_this_user_cannot_open_gives_a_plain_message(tmp_path: Path) -> None:
    # pytest's own temporary folders are private (0700): use a folder anyone may search.
    shared = Path(tempfile.mkdtemp(prefix="calibrate-perm-", dir="/tmp"))
    shared.chmod(0o755)
    db = shared / "private.duckdb"
    open_store(str(db)).db.close()
    db.chmod(0o600)
    code = (
        "import sys\n"
        "from labels import DatabaseAccessError, open_store\n"
        "try:\n"
        f"    open_store({str(db)!r})\n"
        "except DatabaseAccessError as error:\n"
        "    print(error)\n"
        "    sys.exit(3)\n"
    )
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    result = subprocess.run([*nobody, sys.executable, "-c", code], capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 3, result.stderr
    # Refused before DuckDB opens it: another uid's file (labels.private_files).
    assert f"Refusing to open the database {db}: it is owned by uid 0, not by you (uid 65534)" \
        in result.stdout
    # The command line, with the path from the environment (click's own --db check would
    # answer first): the library's message, no traceback.
    cli = [*nobody, sys.executable, "-m", "calibrate_app.cli", "datasets"]
    env = {**os.environ, "CALIBRATE_DB_PATH": str(db)}
    try:
        result = subprocess.run(cli, capture_output=True, text=True, timeout=120, check=False,
                                cwd=shared, env=env)
    finally:
        shutil.rmtree(shared)
    assert result.returncode == 2, result.stderr
    assert "it is owned by uid 0, not by you (uid 65534)" in result.stderr
    assert "Traceback" not in result.stderr


def test_access_errors_are_calibrate_errors() -> None:
    assert issubclass(DatabaseAccessError, CalibrateError)
    assert issubclass(InvalidNameError, CalibrateError)
