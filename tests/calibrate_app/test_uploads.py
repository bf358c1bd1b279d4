"""Uploads: a private folder per session (0700, file 0600), deleted after the import; a size cap."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from app_browser import Server, open_page, shows

from calibrate_app.uploads import (
    FOLDER_PREFIX,
    UploadError,
    UploadFolder,
    check_upload_size,
    safe_upload_name,
)
from labels import LabelStore


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_an_upload_lives_in_a_private_folder_until_discarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    uploads = UploadFolder()
    previous = os.umask(0)  # even a permissive umask gives a private folder and file
    try:
        path = uploads.hold("id-1", "rows.csv", b"id,question\n")
    finally:
        os.umask(previous)
    assert path.name == "rows.csv" and path.read_bytes() == b"id,question\n"
    assert path.parent.name.startswith(FOLDER_PREFIX) and path.parent.parent == tmp_path
    assert _mode(path.parent) == 0o700 and _mode(path) == 0o600
    assert path.parent.stat().st_uid == os.geteuid()
    assert uploads.hold("id-1", "rows.csv", b"ignored") == path  # same upload: same file
    second = uploads.hold("id-2", "other.csv", b"x")
    assert not path.parent.exists() and second.parent.exists()  # replaced: old one deleted
    assert uploads.holds(second) and not uploads.holds(path)
    uploads.discard()
    assert not second.parent.exists() and uploads.folder is None
    assert list(tmp_path.iterdir()) == []


def test_browser_supplied_names_cannot_leave_the_folder() -> None:
    assert safe_upload_name("../../etc/passwd") == "passwd"
    assert safe_upload_name("C:\\Users\\x\\rows.csv") == "rows.csv"
    for bad in ("", "..", "x/..", "a\x00b"):
        with pytest.raises(UploadError, match="not a usable file name"):
            safe_upload_name(bad)


def test_the_size_cap_has_a_clear_message() -> None:
    check_upload_size("ok.csv", 1024 * 1024, 1)
    with pytest.raises(UploadError, match=r"big\.csv is 1\.5 MB; uploads are limited to 1 MB "
                       r"\(CALIBRATE_MAX_UPLOAD_MB\)"):
        check_upload_size("big.csv", 3 * 512 * 1024, 1)


def _folders(root: Path) -> list[Path]:
    return sorted(root.glob(f"{FOLDER_PREFIX}*"))


def test_uploads_are_private_and_deleted_after_import_in_the_browser(
    empty_server: Server, data_page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    # The server's TMPDIR is tmp_path: uploads land here.
    good = tmp_path / "files" / "mine.csv"
    good.parent.mkdir()
    good.write_text("id,question,answer\n" + "".join(f"u{i},Q {i},A {i}\n" for i in range(25)))
    # Row 25 repeats row 1's id: the 20-row preview passes, the import fails.
    dup = tmp_path / "files" / "dup.csv"
    dup.write_text("id,question,answer\n" + "".join(f"d{i},Q {i},A {i}\n" for i in range(24))
                   + "d0,Q again,A again\n")
    assert "at most 200 MB" in data_page.locator("[data-testid=stFileUploader]").inner_text()
    for upload, outcome in ((dup, "share the id"), (good, "25 rows read: 25 added")):
        data_page.locator("input[type=file]").set_input_files(str(upload))
        shows(data_page, "The first 20 of 25 rows", timeout=30_000)
        folders = _folders(tmp_path)
        assert len(folders) == 1, folders
        held = folders[0] / upload.name
        assert _mode(folders[0]) == 0o700 and _mode(held) == 0o600
        assert held.read_bytes() == upload.read_bytes()
        data_page.get_by_role("button", name="Import").click()
        shows(data_page, outcome)
        assert _folders(tmp_path) == []  # deleted after the import, failed or not
        # The uploader is emptied.
        expect(data_page.get_by_text("The first 20 of 25 rows")).to_have_count(0)
    data_page.context.close()
    store: LabelStore = empty_server.open_store()
    try:
        assert store.dataset("mine").items == 25 and store.dataset("mine").source_file == "mine.csv"
        assert "dup" not in store.dataset_kinds()
    finally:
        store.db.close()


def test_upload_messages_name_the_file_not_the_server_folder(
    empty_server: Server, data_page: Any, tmp_path: Path
) -> None:
    """A citation-style source ("[1] ...") imports as plain text, with a warning.

    No message on the page shows the server's temporary folder (TMPDIR is tmp_path here).
    """
    files = tmp_path / "files"
    files.mkdir()
    cites = files / "cites.csv"
    cites.write_text('id,question,answer,sources\nc1,q,a,"[1] See the manual, section 4."\n'
                     'c2,q,a,"[""one"", ""two""]"\n', encoding="utf-8")
    broken = files / "broken.csv"
    broken.write_text("id,answer\nb1,a\n", encoding="utf-8")
    data_page.locator("input[type=file]").set_input_files(str(broken))
    shows(data_page, "broken.csv: missing required column 'question'", timeout=30_000)
    assert str(tmp_path) not in data_page.locator("body").inner_text()
    data_page.locator("input[type=file]").set_input_files(str(cites))
    shows(data_page, "The first 2 of 2 rows", timeout=30_000)
    data_page.get_by_role("button", name="Import").click()
    shows(data_page, "cites.csv, column 'sources': rows 1 start with '[' but are not a JSON list; "
                     "each was kept as plain text (one passage)")
    assert str(tmp_path) not in data_page.locator("body").inner_text()
    data_page.context.close()
    store: LabelStore = empty_server.open_store()
    try:
        assert [s.text for s in store.item("cites", "c1").sources] == [
            "[1] See the manual, section 4."]
        assert [s.text for s in store.item("cites", "c2").sources] == ["one", "two"]
    finally:
        store.db.close()


def test_an_upload_over_the_cap_is_refused_in_the_browser(
    browser: Any, make_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CALIBRATE_MAX_UPLOAD_MB", "1")  # the app's setting, read at start
    server = make_server(lambda store: None)
    big = tmp_path / "files" / "big.csv"
    big.parent.mkdir()
    big.write_text("id,question,answer\n" + "".join(f"b{i},{'Q' * 100},A\n" for i in range(15_000)))
    assert big.stat().st_size > 1024 * 1024
    page = open_page(browser, server.url)
    shows(page, "at most 1 MB", timeout=30_000)
    page.locator("input[type=file]").set_input_files(str(big))
    shows(page, "1.0MB or smaller")  # Streamlit's uploader refuses it before sending it
    page.wait_for_timeout(500)
    assert _folders(tmp_path) == []
    page.context.close()


def test_an_upload_left_unimported_is_deleted_when_the_session_ends(
    data_page: Any, tmp_path: Path
) -> None:
    upload = tmp_path / "files" / "left.csv"
    upload.parent.mkdir()
    upload.write_text("id,question,answer\n1,q,a\n")
    data_page.locator("input[type=file]").set_input_files(str(upload))
    shows(data_page, "The first 1 of 1 rows", timeout=30_000)
    assert len(_folders(tmp_path)) == 1
    data_page.context.close()  # the tab goes away: its session ends, and its upload with it
    deadline = time.monotonic() + 30
    while _folders(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _folders(tmp_path) == []
