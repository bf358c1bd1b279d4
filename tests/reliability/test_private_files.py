"""Another local user cannot touch what is yours: the database, its WAL, its folder (issue 25).

The attacker is a second local uid. Files it made are given to it with ``os.chown`` (CI runs as
root); reading as it goes through ``setpriv``. Every refusal is the red team's rule: exit 2, the
file named with the reason and the fix, the database byte-identical.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli
from labels import open_store
from labels.db import Database, wal_path
from labels.errors import UnsafeFileError

OTHER = 12345
AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="giving a file to another uid needs root")


def _run(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.output


def _label(db: Path) -> str:
    store = open_store(str(db), read_only=True)
    try:
        frame = store.current_labels("docs")
    finally:
        store.db.close()
    return str(frame.loc[frame["item_id"] == "row-000", "verdict"].iloc[0])


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two rows and alice's ``pass`` on ``row-000``."""
    from judges.verdicts import import_verdicts
    from labels import import_rows

    folder = tmp_path_factory.mktemp("private")
    rows = folder / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": f"row-00{i}", "question": f"q{i}",
                                        "answer": f"a{i}"}) + "\n" for i in range(2)))
    verdicts = folder / "verdicts.csv"
    verdicts.write_text("id,verdict\nrow-000,pass\nrow-001,fail\n")
    db = folder / "template.duckdb"
    store = open_store(str(db))
    import_rows(store, rows, "docs")
    store.add_label("docs", "row-000", "alice", "pass", criterion="faithfulness")
    store.add_label("docs", "row-001", "alice", "fail", criterion="faithfulness")
    import_verdicts(store, verdicts, dataset="docs", judge="ext")
    store.db.close()
    return db


@pytest.fixture
def public_dir() -> Iterator[Path]:
    """A folder of ours (0755) another uid can search; pytest's own are 0700."""
    folder = Path(tempfile.mkdtemp(prefix="calibrate-private-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_new_database_and_its_wal_are_private_whatever_the_umask(tmp_path: Path) -> None:
    # A child process: the umask the test sets (and the one Database narrows) stays there.
    code = (
        "import os, sys\n"
        "os.umask(0o022)\n"
        "from labels import open_store\n"
        "store = open_store(sys.argv[1])\n"
        "store.create_dataset('d')\n"
        "wal = sys.argv[1] + '.wal'\n"
        "modes = [oct(os.stat(p).st_mode & 0o777) for p in (sys.argv[1], wal)]\n"
        "open(sys.argv[1] + '.later', 'w').close()\n"
        "print(' '.join(modes), oct(os.stat(sys.argv[1] + '.later').st_mode & 0o777))\n"
    )
    db = tmp_path / "sub" / "new.duckdb"
    done = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.split() == ["0o600", "0o600", "0o600"], done.stdout
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700  # a folder made for it, too


@needs_root
def test_another_uid_cannot_read_the_database(public_dir: Path) -> None:
    db = public_dir / "calibrate.duckdb"
    open_store(str(db)).db.close()
    done = subprocess.run(
        ["setpriv", f"--reuid={OTHER}", f"--regid={OTHER}", "--clear-groups", "cat", str(db)],
        capture_output=True, timeout=30, check=False)
    assert done.returncode != 0 and b"Permission denied" in done.stderr


def _forged_wal(db: Path, workdir: Path) -> Path:
    """A WAL that turns alice's row-000 from pass to fail, made the red team's way.

    The attacker copies the database, changes the copy without a checkpoint, and keeps its WAL.
    """
    copy = workdir / "copy.duckdb"
    shutil.copy(db, copy)
    con = duckdb.connect(str(copy))
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.execute("SET wal_autocheckpoint = '1GB'")
    con.execute("UPDATE labels SET verdict = 'fail' WHERE item_id = 'row-000'")
    con.close()
    return wal_path(copy)


@needs_root
def test_a_wal_planted_by_another_uid_is_refused_not_absorbed(
    db_copy: Path, tmp_path: Path
) -> None:
    forged = _forged_wal(db_copy, tmp_path)
    before = db_copy.read_bytes()
    wal = wal_path(db_copy)
    shutil.copy(forged, wal)
    os.chown(wal, OTHER, OTHER)
    for command in (["labels", "export", "--dataset", "docs", "-o", str(tmp_path / "o.csv")],
                    ["datasets"], ["import", str(tmp_path / "none.csv"), "--dataset", "x"]):
        code, out = _run(db_copy, *command)
        assert code == 2, out
        assert (f"Refusing to open the database's write-ahead log {wal}: it is owned by uid "
                f"{OTHER}, not by you") in out
        assert f"rm {wal}" in out and "Traceback" not in out
    assert db_copy.read_bytes() == before and wal.exists(), "nothing read, nothing absorbed"
    assert not (tmp_path / "o.csv").exists()
    # The same forged WAL left writable by others (here: ours, mode 0666) is refused too.
    os.chown(wal, os.geteuid(), os.getegid())
    wal.chmod(0o666)
    code, out = _run(db_copy, "datasets")
    assert code == 2 and "can be written by its group and every user (mode 0666)" in out
    # Removed, the database says what alice said.
    wal.unlink()
    assert _label(db_copy) == "pass"


@needs_root
def test_a_database_precreated_by_another_uid_is_never_written(
    public_dir: Path, tmp_path: Path
) -> None:
    db = public_dir / "calibrate.duckdb"
    open_store(str(db)).db.close()
    db.chmod(0o666)
    os.chown(db, OTHER, OTHER)
    before = db.read_bytes()
    rows = tmp_path / "rows.csv"
    rows.write_text("id,question,answer\n1,q,a\n")
    code, out = _run(db, "import", str(rows), "--dataset", "mine")
    assert code == 2
    assert f"Refusing to open the database {db}: it is owned by uid {OTHER}, not by you" in out
    assert "copy it to a file of your own" in out
    assert db.read_bytes() == before and not wal_path(db).exists()


def test_a_database_writable_by_others_is_refused_with_the_fix(db_copy: Path) -> None:
    db_copy.chmod(0o664)
    before = db_copy.read_bytes()
    code, out = _run(db_copy, "datasets")
    assert code == 2
    assert "it can be written by its group (mode 0664)" in out and f"chmod 600 {db_copy}" in out
    assert db_copy.read_bytes() == before
    db_copy.chmod(0o600)
    assert _run(db_copy, "datasets")[0] == 0


def test_a_folder_others_can_change_is_refused_unless_sticky(
    tmp_path: Path, template_db: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    db = shared / "c.duckdb"
    shutil.copy(template_db, db)
    shared.chmod(0o777)
    with pytest.raises(UnsafeFileError, match=(
            rf"its folder {shared} can be written by its group and every user \(mode 0777\) "
            "without the sticky bit")):
        Database(db)
    shared.chmod(0o1777)  # /tmp's mode: others cannot replace our files
    Database(db).close()


def test_read_only_commands_leave_the_database_byte_identical(db_copy: Path,
                                                              tmp_path: Path) -> None:
    before = db_copy.read_bytes()
    assert _run(db_copy, "datasets")[0] == 0
    assert _run(db_copy, "labels", "export", "--dataset", "docs", "-o",
                str(tmp_path / "l.csv"))[0] == 0
    assert _run(db_copy, "judge", "runs")[0] == 0
    assert db_copy.read_bytes() == before and not wal_path(db_copy).exists()
    # A missing file reads as an empty database; none is created.
    missing = tmp_path / "missing.duckdb"
    code, out = _run(missing, "datasets", "--json")
    assert (code, json.loads(out)) == (0, []) and not missing.exists()


READ_ONLY_MOUNT = """
set -e
mount -t tmpfs -o size=8m tmpfs "$1"
cp "$2" "$1/c.duckdb"
mount -o remount,ro "$1"
cd "$1"
"$3" -m calibrate_app.cli --db c.duckdb datasets --json
"$3" -m calibrate_app.cli --db c.duckdb report --dataset docs --judge ext --json
"""


def _can_mount() -> bool:
    if not AS_ROOT or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True,
                          check=False).returncode == 0


@pytest.mark.skipif(not _can_mount(), reason="needs root and unshare for a private mount")
def test_datasets_and_report_work_on_a_read_only_mount(db_copy: Path, tmp_path: Path) -> None:
    mount = tmp_path / "ro"
    mount.mkdir()
    mount.chmod(0o700)
    # A private mount namespace: the read-only tmpfs is gone with the shell, whatever happens.
    done = subprocess.run(["unshare", "-m", "sh", "-c", READ_ONLY_MOUNT, "sh", str(mount),
                           str(db_copy), sys.executable],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    decoder = json.JSONDecoder()
    listed, end = decoder.raw_decode(done.stdout)
    report, _ = decoder.raw_decode(done.stdout[end:].lstrip())
    assert [d["name"] for d in listed] == ["docs"]
    assert report["dataset"] == "docs" and report["judge"]["name"] == "ext"
