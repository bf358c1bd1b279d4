"""The row and label commands through click's runner, on real DuckDB files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli
from labels import open_store


def _run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    rows = [
        {
            "id": "r1",
            "question": "Does Pro include SSO?",
            "answer": "Yes, at no extra cost.",
            "sources": ["Pro includes SSO.", "Under 50 seats needs the Security add-on."],
            "segment": "lookup",
        },
        {"id": "r2", "question": '=HYPERLINK("http://evil")', "answer": "-1+1", "sources": []},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_import_list_label_export(tmp_path: Path, rows_file: Path) -> None:
    db = tmp_path / "c.duckdb"
    code, out = _run(db, "import", str(rows_file), "--dataset", "demo")
    assert code == 0 and "2 rows read, 2 added, 0 already present" in out
    code, out = _run(db, "import", str(rows_file), "--dataset", "demo", "--json")
    assert code == 0 and json.loads(out)["unchanged"] == 2

    labels = tmp_path / "labels.csv"
    labels.write_text("id,label,note\nr1,0,free is not in the sources\nr2,true,\n")
    code, out = _run(
        db, "labels", "import", str(labels), "--dataset", "demo", "--annotator", "dana"
    )
    assert code == 0 and "2 labels read, 2 added" in out
    code, out = _run(
        db, "labels", "import", str(labels), "--dataset", "demo", "--annotator", "dana"
    )
    assert "0 added, 2 unchanged" in out

    code, out = _run(db, "datasets", "--json")
    (ds,) = json.loads(out)
    assert (ds["name"], ds["items"], ds["labels"], ds["annotators"]) == ("demo", 2, 2, 1)
    code, out = _run(db, "datasets")
    assert "demo" in out

    for suffix in ("csv", "parquet", "jsonl"):
        target = tmp_path / f"out.{suffix}"
        code, out = _run(db, "labels", "export", "--dataset", "demo", "-o", str(target))
        assert code == 0 and "2 labels written" in out
        frame = (
            pd.read_csv(target)
            if suffix == "csv"
            else (
                pd.read_parquet(target) if suffix == "parquet" else pd.read_json(target, lines=True)
            )
        )
        assert sorted(frame["verdict"]) == ["fail", "pass"]
        assert set(frame["annotator"]) == {"dana"}


def test_csv_export_neutralises_formulas(tmp_path: Path) -> None:
    from labels.exporting import write_table

    frame = pd.DataFrame({"note": ['=HYPERLINK("http://x")', "+1", "-2", "@A1", "plain", "\t=1"]})
    path = write_table(frame, tmp_path / "x.csv")
    back = pd.read_csv(path, keep_default_na=False)["note"].tolist()
    assert back == ['\'=HYPERLINK("http://x")', "'+1", "'-2", "'@A1", "plain", "'\t=1"]


def test_exit_codes_and_messages(tmp_path: Path, rows_file: Path) -> None:
    db = tmp_path / "c.duckdb"
    code, out = _run(db, "import", str(tmp_path / "missing.csv"), "--dataset", "x")
    assert code == 2 and "no such file" in out
    code, out = _run(db, "import", str(rows_file), "--dataset", "x", "--map", "nonsense")
    assert code == 2 and "field=column" in out
    code, out = _run(db, "labels", "export", "--dataset", "nope", "-o", str(tmp_path / "a.csv"))
    assert code == 2 and "no dataset named 'nope'" in out
    code, out = _run(db, "import", str(rows_file))
    assert code == 2 and "--dataset" in out
    bad_labels = tmp_path / "bad_labels.csv"
    _run(db, "import", str(rows_file), "--dataset", "x")
    bad_labels.write_text("id,label\nr1,maybe\n")
    code, out = _run(db, "labels", "import", str(bad_labels), "--dataset", "x", "--annotator", "a")
    assert code == 2 and "row 1, column 'label'" in out and "'maybe' is not a label" in out
    bad_labels.write_text("id,label\nzzz,pass\n")
    code, out = _run(db, "labels", "import", str(bad_labels), "--dataset", "x", "--annotator", "a")
    assert code == 2 and "has no item 'zzz'" in out
    assert open_store(str(db)).current_labels("x").empty, "nothing half-imported"
