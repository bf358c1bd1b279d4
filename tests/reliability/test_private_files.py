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
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli
from judges.workspace import Workspace
from labels import open_store
from labels.errors import UnsafeFileError
from labels.stores.db import Database, wal_path

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
                                        "answer": f"a{i}", "sources": [f"s{i}"]}) + "\n"
                            for i in range(2)))
    verdicts = folder / "verdicts.csv"
    verdicts.write_text("id,verdict\nrow-000,pass\nrow-001,fail\n")
    db = folder / "template.duckdb"
    store = open_store(str(db))
    import_rows(store, rows, "docs")
    store.add_label("docs", "row-000", "alice", "pass", criterion="faithfulness")
    store.add_label("docs", "row-001", "alice", "fail", criterion="faithfulness")
    import_verdicts(Workspace.of(store), verdicts, dataset="docs", judge="ext")
    store.db.close()
    return db


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


# -- settings files: .env, --env-file, Streamlit's config.toml and secrets.toml --------------


@pytest.fixture
def shared_dir(tmp_path: Path) -> Path:
    """A working folder like ``/tmp``: every user may add files (sticky, 1777)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o1777)
    return folder


def _plant(path: Path, text: str) -> Path:
    """``path`` written by the other uid (given to it; CI runs as root)."""
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    os.chown(path, OTHER, OTHER)
    return path


def _judge_run(db: Path) -> tuple[int, str]:
    return _run(db, "judge", "run", "faithfulness-oneshot", "--dataset", "docs",
                "--model", "openai/fake-judge", "--max-retries", "0")


@needs_root
def test_a_planted_env_base_url_is_refused_and_the_key_goes_nowhere(
    db_copy: Path, shared_dir: Path, fake_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judge_helpers import DUMMY_KEY

    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)  # the owner's key, in the owner's shell
    monkeypatch.chdir(shared_dir)
    env = _plant(shared_dir / ".env",
                 f"CALIBRATE_OPENAI_BASE_URL={fake_server.openai_base_url}\n")
    before = db_copy.read_bytes()
    code, out = _judge_run(db_copy)
    assert code == 2, out
    assert (f"Refusing to use the settings file {env}: it is owned by uid {OTHER}, not by you"
            in out) and "--env-file PATH" in out
    assert fake_server.calls == [], "no request, so no key, reached the planted server"
    assert db_copy.read_bytes() == before
    # The same file, yours alone, is read (so the refusal above is what kept the key home).
    os.chown(env, os.geteuid(), os.getegid())
    env.chmod(0o600)
    code, out = _judge_run(db_copy)
    assert code == 0, out
    assert {c.authorization for c in fake_server.calls} == {f"Bearer {DUMMY_KEY}"}


@needs_root
def test_a_planted_env_cannot_move_the_app_to_every_interface(
    db_copy: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import calibrate_app.cli._app as app_module

    started: list[list[str]] = []
    monkeypatch.setattr(app_module, "exec_app", lambda command, env: started.append(command))
    monkeypatch.chdir(shared_dir)
    env = _plant(shared_dir / ".env", "CALIBRATE_APP_HOST=0.0.0.0\nCALIBRATE_ACCESS_CODE=x\n")
    code, out = _run(db_copy, "app")
    assert code == 2 and f"Refusing to use the settings file {env}" in out
    assert started == []
    # Named explicitly, a settings file of yours is read from anywhere.
    mine = shared_dir / "mine.env"
    mine.write_text("CALIBRATE_APP_HOST=127.0.0.2\n")
    mine.chmod(0o600)
    code, out = _run(db_copy, "--env-file", str(mine), "app")
    assert code == 0, out
    assert started[0][started[0].index("--server.address") + 1] == "127.0.0.2"
    # ... and refused like ./.env when others can write it.
    mine.chmod(0o646)
    code, out = _run(db_copy, "--env-file", str(mine), "app")
    assert code == 2 and f"the settings file {mine}: it can be written by every user" in out


@needs_root
def test_the_console_script_refuses_a_planted_env_before_anything_else(
    shared_dir: Path, tmp_path: Path
) -> None:
    # main() reads the settings before it looks for an app to hand the command to.
    env = _plant(shared_dir / ".env", f"CALIBRATE_DB_PATH={tmp_path / 'theirs.duckdb'}\n")
    done = subprocess.run([sys.executable, "-m", "calibrate_app.cli", "datasets"],
                          cwd=shared_dir, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2, done.stderr
    assert f"Refusing to use the settings file {env}" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "theirs.duckdb").exists()


@needs_root
@pytest.mark.parametrize("name, text", [
    ("config.toml", '[server]\naddress = "0.0.0.0"\nenableXsrfProtection = false\n'),
    ("secrets.toml", '[auth]\nredirect_uri = "http://evil/oauth2callback"\n'
                     'client_id = "theirs"\nclient_secret = "theirs"\n'
                     'server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"\n'),
])
def test_a_planted_streamlit_file_stops_the_app_before_streamlit_reads_it(
    db_copy: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    import calibrate_app.cli._app as app_module

    started: list[list[str]] = []
    monkeypatch.setattr(app_module, "exec_app", lambda command, env: started.append(command))
    monkeypatch.chdir(shared_dir)
    planted = _plant(shared_dir / ".streamlit" / name, text)
    os.chown(planted.parent, OTHER, OTHER)
    code, out = _run(db_copy, "app")
    assert code == 2, out
    # The folder is theirs, so the first file Streamlit would read from it is refused.
    assert f"Refusing to use Streamlit's settings file {planted.parent}/" in out
    assert f"its folder {planted.parent} is owned by uid {OTHER}" in out
    assert started == []
    # A plain `streamlit run` from that folder gets no page either (the app checks too).
    from streamlit.testing.v1 import AppTest

    from calibrate_app import resources

    monkeypatch.setenv("CALIBRATE_DB_PATH", str(db_copy))
    at = AppTest.from_file(str(Path(app_module.APP_SCRIPT)), default_timeout=30).run()
    try:
        assert not at.exception
        shown = [e.value.replace("\\", "") for e in at.error]  # markdown-escaped
        assert any(f"Streamlit's settings file {planted.parent}/" in t for t in shown), shown
        assert not at.tabs and not at.button
    finally:
        resources.release_store()


def test_env_file_is_a_choice_of_the_cli_never_sent_to_the_app() -> None:
    from calibrate_app.channel.client import env_file_option, split_invocation
    from calibrate_app.command_server import RequestRefused, check_command

    argv = ["--db", "c.duckdb", "--env-file", "my.env", "datasets", "--json"]
    assert env_file_option(argv) == "my.env"
    assert env_file_option(["--env-file=x.env", "report"]) == "x.env"
    assert env_file_option(["datasets", "--env-file", "late.env"]) is None  # click refuses it
    assert split_invocation(argv) == ("c.duckdb", ["datasets", "--json"])
    with pytest.raises(RequestRefused, match="--env-file is not accepted through the app"):
        check_command(["--env-file", "theirs.env", "datasets"])
