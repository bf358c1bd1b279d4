"""kill -9 a process that is writing labels: every acknowledged label survives, the file opens."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labels import import_rows, open_store

WRITER = """
import sys
from labels import open_store
store = open_store(sys.argv[1])
n = 0
while True:
    for k in range(50):
        label = store.add_label("d", f"r{k}", f"w{n % 3}", ("pass", "fail", "unsure")[n % 3],
                                note=f"label {n}", seconds_spent=0.1)
        # The acknowledgement comes after the commit, like the app's next row.
        print(label.label_id, flush=True)
        n += 1
"""


def _kill_rounds(db_path: Path, rounds: int, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    acknowledged: set[int] = set()
    for _ in range(rounds):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db_path)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        deadline = time.monotonic() + rng.uniform(0.8, 2.0)
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            acknowledged.add(int(line))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for line in proc.stdout.read().splitlines():  # acknowledged before the kill landed
            acknowledged.add(int(line))
        store = open_store(str(db_path))  # opens after every kill (DuckDB replays its WAL)
        with store.db.cursor() as cur:
            stored = {r[0] for r in cur.execute("SELECT label_id FROM labels").fetchall()}
        store.db.close()
        missing = acknowledged - stored
        assert not missing, f"acknowledged labels lost after a kill: {sorted(missing)[:5]}"
    return len(acknowledged), rounds


def _seed_rows(db_path: Path, tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": f"r{k}", "question": "q", "answer": "a"}) + "\n" for k in range(50)
        )
    )
    store = open_store(str(db_path))
    import_rows(store, rows, "d")
    store.db.close()


def test_kill_during_label_writes_loses_nothing(db_path: Path, tmp_path: Path) -> None:
    _seed_rows(db_path, tmp_path)
    labels, rounds = _kill_rounds(db_path, rounds=5, seed=11)
    assert labels > 0 and rounds == 5


@pytest.mark.slow
def test_kill_during_label_writes_loses_nothing_long(db_path: Path, tmp_path: Path) -> None:
    _seed_rows(db_path, tmp_path)
    labels, rounds = _kill_rounds(db_path, rounds=25, seed=12)
    assert labels > 500 and rounds == 25
