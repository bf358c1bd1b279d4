"""Every CSV the tool writes is safe in a spreadsheet, however its cells break lines (issue 25).

The red team's note ``ok<CR>=cmd|' /C calc'!A0`` went out unquoted: a spreadsheet that splits
rows on a bare CR started the next row with ``=cmd|…``. The property checked on each export:
split the file at every CR and LF, as the most careless reader would, and no piece starts a
formula; parsed as CSV, each cell holds the text it had, with ``'`` before each formula line.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from repo_paths import APP_SCRIPT
from streamlit.testing.v1 import AppTest

from calibrate_app.cli import cli
from judges.workspace import Workspace
from labels import import_rows, open_store

HOSTILE = [
    "ok\r=cmd|' /C calc'!A0",
    "fine\n+SUM(1)\r\n-2\r@A1\n\tx",
    "=HYPERLINK(\"http://x\")",
    "plain\ntwo lines",
]
NEUTRALISED = [
    "ok\r'=cmd|' /C calc'!A0",
    "fine\n'+SUM(1)\r\n'-2\r'@A1\n'\tx",
    "'=HYPERLINK(\"http://x\")",
    "plain\ntwo lines",
]
TRIGGERS = ("=", "+", "-", "@", "\t")


def assert_spreadsheet_safe(data: bytes, column: str) -> None:
    """No line of ``data`` starts a formula; ``column`` holds :data:`NEUTRALISED`, intact."""
    text = data.decode("utf-8")
    for piece in re.split(r"\r\n|\r|\n", text):
        assert not piece.startswith(TRIGGERS), repr(piece)
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert sorted(r[column] for r in rows) == sorted(NEUTRALISED)


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four rows, alice's label on each with a hostile note, an imported judge's reasoning."""
    from judges.verdicts import import_verdicts

    folder = tmp_path_factory.mktemp("exports")
    rows = folder / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": f"r{i}", "question": f"q{i}", "answer": "a"}) + "\n"
                            for i in range(len(HOSTILE))))
    verdicts = folder / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps({"id": f"r{i}", "verdict": "pass", "reasoning": t})
                                + "\n" for i, t in enumerate(HOSTILE)))
    db = folder / "exports.duckdb"
    store = open_store(str(db))
    import_rows(store, rows, "docs")
    for i, note in enumerate(HOSTILE):
        store.add_label("docs", f"r{i}", "alice", "pass", note=note)
    import_verdicts(Workspace.of(store), verdicts, dataset="docs", judge="ext")
    store.db.close()
    return db


def _cli(db: Path, *args: str) -> None:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def test_labels_and_verdicts_exports_are_spreadsheet_safe(db_copy: Path, tmp_path: Path) -> None:
    _cli(db_copy, "labels", "export", "--dataset", "docs", "-o", str(tmp_path / "l.csv"))
    assert_spreadsheet_safe((tmp_path / "l.csv").read_bytes(), "note")
    _cli(db_copy, "labels", "export", "--dataset", "docs", "--history", "-o",
         str(tmp_path / "h.csv"))
    assert_spreadsheet_safe((tmp_path / "h.csv").read_bytes(), "note")
    _cli(db_copy, "verdicts", "export", "--dataset", "docs", "--judge", "ext", "-o",
         str(tmp_path / "v.csv"))
    assert_spreadsheet_safe((tmp_path / "v.csv").read_bytes(), "reasoning")
    assert (tmp_path / "v.csv").stat().st_mode & 0o077 == 0, "exports are 0600"


def test_the_export_page_downloads_are_spreadsheet_safe(
    db_copy: Path, app_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.runtime.media_file_manager import MediaFileManager

    downloads: dict[str, bytes] = {}
    add = MediaFileManager.add

    def keep(self: MediaFileManager, data: Any, mimetype: str, *args: Any, **kw: Any) -> str:
        if mimetype == "text/csv":
            downloads[kw.get("file_name") or str(len(downloads))] = bytes(data)
        return add(self, data, mimetype, *args, **kw)

    monkeypatch.setattr(MediaFileManager, "add", keep)
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=60)
    at.run()
    at.switch_page("app_pages/export.py").run()
    assert not at.exception, at.exception
    labels = next(d for name, d in downloads.items() if "labels" in name)
    verdicts = next(d for name, d in downloads.items() if "verdicts" in name)
    assert_spreadsheet_safe(labels, "note")
    assert_spreadsheet_safe(verdicts, "reasoning")
