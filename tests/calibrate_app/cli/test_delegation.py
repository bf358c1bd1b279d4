"""CLI commands run inside the app process while the app holds the database file."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from labels import open_store

APP_STANDIN = """
import sys, time
from labels import open_store
from calibrate_app.command_server import CommandServer
store = open_store(sys.argv[1])
CommandServer(sys.argv[1]).start()
print("ready", flush=True)
time.sleep(120)
"""


def _calibrate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "calibrate_app.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def app_holding_db(db_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A process that, like the Streamlit app, holds the database and serves commands."""
    proc = subprocess.Popen(
        [sys.executable, "-c", APP_STANDIN, str(db_path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    yield proc
    proc.kill()
    proc.wait()


def test_commands_run_inside_the_app(
    app_holding_db: subprocess.Popen[str], db_path: Path, tmp_path: Path
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "question": f"q{i}", "answer": "a"}) + "\n" for i in range(3)
        )
    )
    (tmp_path / "labels.csv").write_text("id,label\nr0,pass\nr1,fail\n")

    done = _calibrate("--db", str(db_path), "import", "rows.jsonl", "--dataset", "d", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        f"process {app_holding_db.pid}" in done.stderr
        and "running this command inside it" in done.stderr
    )
    assert "3 rows read, 3 added" in done.stdout

    done = _calibrate(
        "--db",
        str(db_path),
        "labels",
        "import",
        "labels.csv",
        "--dataset",
        "d",
        "--annotator",
        "ann",
        cwd=tmp_path,
    )
    assert done.returncode == 0 and "2 added" in done.stdout

    done = _calibrate(
        "--db",
        str(db_path),
        "labels",
        "export",
        "--dataset",
        "d",
        "-o",
        "out/labels.csv",
        cwd=tmp_path,
    )
    assert done.returncode == 0
    assert (tmp_path / "out" / "labels.csv").exists(), "relative paths follow the CLI's cwd"

    done = _calibrate("--db", str(db_path), "datasets", "--json", cwd=tmp_path)
    assert json.loads(done.stdout)[0]["items"] == 3

    done = _calibrate("--db", str(db_path), "import", "missing.csv", "--dataset", "d", cwd=tmp_path)
    assert done.returncode == 2 and "no such file" in done.stderr

    app_holding_db.kill()
    app_holding_db.wait()
    store = open_store(str(db_path))
    assert store.count_items("d") == 3
    assert len(store.current_labels("d")) == 2
    store.db.close()


def test_without_an_app_the_lock_is_explained(db_path: Path, tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time\nfrom labels import open_store\n"
            "s=open_store(sys.argv[1]); print('ready', flush=True); time.sleep(60)",
            str(db_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        done = subprocess.run(
            [sys.executable, "-m", "calibrate_app.cli", "--db", str(db_path), "datasets"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            env={**__import__("os").environ, "CALIBRATE_LOCK_TIMEOUT": "0"},
        )
        assert done.returncode == 1
        assert f"process {holder.pid}" in done.stderr and "Traceback" not in done.stderr
    finally:
        holder.kill()
        holder.wait()
