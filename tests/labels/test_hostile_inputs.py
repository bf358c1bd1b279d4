"""Inputs that crashed, hung or were taken silently are refused with a message (issue 25).

The red team's rule for every bad file: ``calibrate import`` exits 2, the message names the
file, the row and the column (where the file has them), and the database is byte-identical.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli
from labels import import_rows, open_store


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with one dataset, ``row-x`` among its rows."""
    folder = tmp_path_factory.mktemp("hostile")
    rows = folder / "rows.jsonl"
    rows.write_text(json.dumps({"id": "row-x", "question": "q", "answer": "a"}) + "\n")
    db = folder / "hostile.duckdb"
    store = open_store(str(db))
    import_rows(store, rows, "docs")
    store.db.close()
    return db


def refused(db: Path, path: Path | str, *, dataset: str = "new") -> str:
    """Import ``path``: exit 2, the file named, the database unchanged; the message."""
    before = db.read_bytes()
    result = CliRunner().invoke(cli, ["--db", str(db), "import", str(path), "--dataset",
                                      dataset], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and "Traceback" not in result.output
    assert db.read_bytes() == before
    return result.output


# -- only regular files are read ---------------------------------------------------------------


@pytest.mark.timeout(60)  # before the fix the FIFO hung until killed
def test_a_fifo_a_device_and_a_socket_are_refused_before_reading(
    db_copy: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    assert "is a FIFO (named pipe), not a regular file" in refused(db_copy, fifo)
    out = CliRunner().invoke(cli, ["--db", str(db_copy), "import", "/dev/zero", "--dataset",
                                   "z", "--format", "csv"], catch_exceptions=False)
    assert out.exit_code == 2 and "/dev/zero: is a character device, not a regular file" in (
        out.output)
    sock_path = tmp_path / "rows.jsonl"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(sock_path))
        assert "is a socket, not a regular file" in refused(db_copy, sock_path)
    finally:
        server.close()
    # The same for the small files the CLI names: a judge config that is a FIFO.
    config = tmp_path / "judge.yaml"
    os.mkfifo(config)
    result = CliRunner().invoke(cli, ["judge", "validate", str(config)])
    assert result.exit_code == 2 and "is a FIFO (named pipe)" in result.output


# -- Parquet: the decoded size, from the dictionary -------------------------------------------

# Peak RSS from /proc (VmHWM): getrusage's ru_maxrss keeps the forking parent's peak (pytest's)
# across exec.
BOMB_CHILD = """
import json, re, sys, time
from calibrate_app.cli import main
import labels.importing, pyarrow.parquet
def run():
    try:
        main(["--db", sys.argv[1], "import", sys.argv[2], "--dataset", "bomb"])
    except SystemExit as exit_:
        return exit_.code
run()  # once to load what the command imports lazily (DuckDB, the CLI's modules)
started, cpu = time.perf_counter(), time.process_time()
code = run()
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
status = open("/proc/self/status").read()
peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) / 1024
print(json.dumps({"code": code, "seconds": seconds, "cpu_seconds": cpu, "rss_mb": peak}))
"""


def _dictionary_bomb(path: Path) -> Path:
    """About 9 KB: one 8 KB string, indexed 1,000,000 times (8 GB once decoded)."""
    rows = 1_000_000
    indices = pa.array([0] * rows, type=pa.int32())
    table = pa.table({
        "question": pa.DictionaryArray.from_arrays(indices, pa.array(["x" * 8192])),
        "answer": pa.DictionaryArray.from_arrays(indices, pa.array(["a"])),
    })
    pq.write_table(table, path, compression="zstd", row_group_size=rows)
    return path


def test_a_parquet_dictionary_bomb_is_refused_in_a_second_with_little_memory(
    db_copy: Path, tmp_path: Path
) -> None:
    bomb = _dictionary_bomb(tmp_path / "bomb.parquet")
    assert bomb.stat().st_size < 16_000
    before = db_copy.read_bytes()
    done = subprocess.run([sys.executable, "-c", BOMB_CHILD, str(db_copy), str(bomb)],
                          capture_output=True, text=True, timeout=120, check=False)
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["code"] == 2, done.stderr
    assert (f"{bomb}: its columns decode to 7,821.1 MB (dictionary-encoded values repeated), "
            "more than the limit of 1,024 MB (CALIBRATE_MAX_UNCOMPRESSED_MB); nothing was read"
            ) in done.stderr
    assert "Traceback" not in done.stderr and db_copy.read_bytes() == before
    # The command once its modules are loaded (the red team: 66 s, 8.2 GB, then a traceback);
    # the peak RSS is the whole process's, Python and its imports included. CPU seconds of the
    # second refusal, not wall time from the first: that counted loading DuckDB and the CLI
    # (0.9 s), and on a loaded machine the neighbours too (1.02 s once).
    assert measured["cpu_seconds"] < 1 and measured["rss_mb"] < 256, measured
    print(f"dictionary bomb: refused in {measured['seconds']:.2f} s "
          f"({measured['cpu_seconds']:.2f} s of CPU), {measured['rss_mb']:.0f} MB peak RSS")


def test_the_decoded_size_check_passes_ordinary_dictionary_files(
    store_copy: object, tmp_path: Path
) -> None:
    from labels.reading import check_parquet_size

    path = tmp_path / "ok.parquet"
    column = pa.array([f"question {i % 50}" for i in range(10_000)]).dictionary_encode()
    pq.write_table(pa.table({"question": column, "answer": column,
                             "sources": pa.array([["a", "b"]] * 10_000)}), path)
    check_parquet_size(str(path))  # 10,000 short strings: far under the limit


def test_nul_and_infinity_in_parquet_are_refused_with_row_and_column(
    db_copy: Path, tmp_path: Path
) -> None:
    nul = tmp_path / "nul.parquet"
    pq.write_table(pa.table({"question": ["q1", "q\x00two"], "answer": ["a", "b"]}), nul)
    out = refused(db_copy, nul)
    assert "row 2, column 'question': holds a NUL character" in out
    infinite = tmp_path / "inf.parquet"
    pq.write_table(pa.table({"question": ["q1", "q2"], "answer": ["a", "b"],
                             "score": [1.0, float("inf")]}), infinite)
    out = refused(db_copy, infinite)
    assert "row 2, column 'score': holds the number inf" in out


# -- JSON text that is no text, numbers that are no numbers, ids that look alike -------------


@pytest.mark.parametrize("name, text, where, what", [
    ("surrogate.jsonl", '{"id": "1", "question": "q", "answer": "a"}\n'
                        '{"id": "2", "question": "half \\ud800 pair", "answer": "a"}\n',
     "row 2, column 'question'", "holds a lone surrogate (\\ud800"),
    ("nul.jsonl", '{"id": "1", "question": "q\\u0000x", "answer": "a"}\n',
     "row 1, column 'question'", "holds a NUL character"),
    ("nul.json", '[{"id": "1", "question": "q", "answer": "a\\u0000"}]',
     "row 1, column 'answer'", "holds a NUL character"),
    ("huge.jsonl", '{"id": "1", "question": "q", "answer": "a", "metadata": {"x": 1e400}}\n',
     "row 1, column 'metadata'", "holds the number 1e400, too large"),
    ("huge.csv", 'id,question,answer,metadata\n1,q,a,"{""x"": -1e400}"\n',
     "row 1, column 'metadata'", "holds the number -1e400, too large"),
    ("homoglyph.jsonl", '{"id": "row-y", "question": "q1", "answer": "a"}\n'
                        '{"id": "r\\u043ew-y", "question": "q2", "answer": "a"}\n',
     "row 2, column 'id'",
     "the id 'r\u043ew-y' (written 'r\\u043ew-y') looks the same as 'row-y' of row 1"),
])
def test_bad_json_values_are_refused_naming_file_row_and_column(
    db_copy: Path, tmp_path: Path, name: str, text: str, where: str, what: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    out = refused(db_copy, path)
    assert f"{path}, {where}: " in out and what in out, out


def test_an_id_that_looks_like_a_stored_one_is_refused(db_copy: Path, tmp_path: Path) -> None:
    path = tmp_path / "more.jsonl"
    path.write_text(json.dumps({"id": "r\u043ew-x", "question": "q2", "answer": "a"}) + "\n")
    out = refused(db_copy, path, dataset="docs")
    assert "row 1, column 'id': the id 'r\u043ew-x' (written 'r\\u043ew-x') looks the same as " \
        "the stored item 'row-x'" in out


def test_ids_are_nfkc_normalised(store: object, tmp_path: Path) -> None:
    from labels import LabelStore

    assert isinstance(store, LabelStore)
    path = tmp_path / "wide.jsonl"
    path.write_text(json.dumps({"id": "\uff52\uff4f\uff57\uff0d\uff11", "question": "q",
                                "answer": "a"}) + "\n")  # fullwidth "row-1"
    import_rows(store, path, "wide")
    assert store.item_ids("wide") == ["row-1"]


# -- a full disk ------------------------------------------------------------------------------

FULL_DISK = """
set -e
mount -t tmpfs -o size=3m tmpfs "$1"
cp "$2" "$1/c.duckdb"
cd "$1"
sha256sum c.duckdb
set +e
"$3" -m calibrate_app.cli --db "$1/c.duckdb" import "$4" --dataset big
echo "rc=$?"
sha256sum c.duckdb
"""


def _can_mount() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True,
                          check=False).returncode == 0


@pytest.mark.skipif(not _can_mount(), reason="needs root and unshare for a private tmpfs")
def test_a_full_disk_is_a_message_and_the_database_is_unchanged(
    db_copy: Path, tmp_path: Path
) -> None:
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"id": f"r{i}", "question": f"{i} " + "q" * 1000,
                                       "answer": "a" * 1000}) + "\n" for i in range(3000)))
    mount = tmp_path / "disk"
    mount.mkdir()
    # A 3 MB tmpfs in a private mount namespace: gone with the shell, whatever happens.
    done = subprocess.run(["unshare", "-m", "sh", "-c", FULL_DISK, "sh", str(mount),
                           str(db_copy), sys.executable, str(big)],
                          capture_output=True, text=True, timeout=120, check=False)
    hashes = [line.split()[0] for line in done.stdout.splitlines() if "c.duckdb" in line]
    assert "rc=1" in done.stdout, done.stdout + done.stderr
    assert len(hashes) == 2 and hashes[0] == hashes[1], "the database is as it was"
    assert f"{big}: not imported: the disk holding the database {mount}/c.duckdb is full" in (
        done.stderr)
    assert "No space left on device" in done.stderr and "Traceback" not in done.stderr
