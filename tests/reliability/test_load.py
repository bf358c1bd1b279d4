"""Load: 8 annotators label through the store while a judge run from another process writes.

The test process plays the app: it holds the database and runs a
:class:`~calibrate_app.command_server.CommandServer`, so ``calibrate judge run``
started in a separate process is handed over and writes its verdicts here, beside the
annotators' threads.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fake_server_process import start_fake_server
from judge_helpers import DUMMY_KEY, faithfulness_rows

from calibrate_app.command_server import CommandServer
from judges.stores.judge_store import JudgeStore
from labels import import_rows, open_store

ANNOTATORS = 8
ITEMS = 120
REPEATS = 2


def _load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, seconds: float = 0.0, min_runs: int = 1
) -> dict[str, int]:
    """Annotators write while CLI judge runs follow one another; the counts checked.

    Runs start until ``seconds`` have passed and at least ``min_runs`` have run; each run
    after the first judges the 10 rows added before it.
    """
    db = tmp_path / "load.duckdb"
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in faithfulness_rows(ITEMS, sources=3)))
    store = open_store(str(db))
    import_rows(store, rows, "docs")
    commands = CommandServer(db).start()
    fake, port = start_fake_server("--latency", "0.02", "--verdicts", "hash")
    # A delegated command runs with the app's settings: keys stay in the app's environment
    # and are never passed through the command files.
    monkeypatch.setenv("CALIBRATE_ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CALIBRATE_", "ANTHROPIC_"))},
        "CALIBRATE_LOCK_TIMEOUT": "0",
    }
    written: dict[int, tuple[str, str, str, str]] = {}
    errors: list[BaseException] = []
    stop = threading.Event()
    lock = threading.Lock()

    def annotate(who: str, seed: int) -> None:
        rng = random.Random(seed)
        try:
            while not stop.is_set():
                item = f"row-{rng.randrange(ITEMS):03d}"
                verdict = rng.choice(["pass", "fail", "unsure"])
                label = store.add_label(
                    "docs",
                    item,
                    who,
                    verdict,
                    note=f"{who} {verdict}",
                    seconds_spent=rng.uniform(1, 9),
                )
                with lock:
                    written[label.label_id] = (item, who, verdict, label.note)
                time.sleep(rng.uniform(0.0, 0.05))
        except BaseException as error:  # collected and asserted below
            errors.append(error)

    threads = [
        threading.Thread(target=annotate, args=(f"annotator-{k}", k)) for k in range(ANNOTATORS)
    ]
    command = [
        sys.executable,
        "-m",
        "calibrate_app.cli",
        "--db",
        str(db),
        "judge",
        "run",
        "faithfulness",
        "--dataset",
        "docs",
        "--swap",
        "--repeats",
        str(REPEATS),
        "--concurrency",
        "8",
    ]
    runs = 0
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + seconds
        while runs < min_runs or time.monotonic() < deadline:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "running this command inside it" in done.stderr
            runs += 1
            # Each new run needs new calls: add rows the judge has not seen.
            extra = tmp_path / f"extra-{runs}.jsonl"
            extra.write_text(
                "\n".join(
                    json.dumps(
                        {**r, "id": f"x{runs}-{r['id']}", "question": f"{runs}: {r['question']}"}
                    )
                    for r in faithfulness_rows(10)
                )
            )
            import_rows(store, extra, "docs")
    finally:
        stop.set()
        for t in threads:
            t.join()
        commands.stop()
        fake.send_signal(signal.SIGTERM)
        fake.wait(timeout=10)
    assert errors == []

    with store.db.cursor() as cur:
        stored = {
            r[0]: (r[1], r[2], r[3], r[4])
            for r in cur.execute(
                "SELECT label_id, item_id, annotator, verdict, note FROM labels"
            ).fetchall()
        }
        duplicates = cur.execute(
            "SELECT count(*) - count(DISTINCT (item_id, annotator, criterion)) FROM current_labels"
        ).fetchall()[0][0]
    assert stored == written, "every acknowledged label is stored exactly as acknowledged"
    assert duplicates == 0

    judge = JudgeStore(store.db)
    calls = judge.calls_frame()
    runs_done = judge.runs()
    store.db.close()
    items_judged = ITEMS + 10 * (runs - 1)
    assert len(calls) == items_judged * 2 * REPEATS, "every planned call stored once"
    assert calls.groupby(["item_hash", "repeat", "ordering"]).size().max() == 1
    assert (calls["status"] == "scored").all()
    assert all(r.status == "completed" for r in runs_done) and len(runs_done) == runs
    return {"labels": len(written), "calls": len(calls), "runs": runs}


def test_annotators_and_a_cli_judge_run_share_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two runs, not a duration: the second is a new delegated command on rows added while
    # the annotators write (the two-minute variant below keeps them going longer).
    counts = _load(tmp_path, monkeypatch, min_runs=2)
    assert counts["labels"] > 100 and counts["runs"] == 2


@pytest.mark.slow
def test_annotators_and_cli_judge_runs_for_two_minutes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = _load(tmp_path, monkeypatch, seconds=120)
    print(counts)
    assert counts["labels"] > 1000 and counts["runs"] >= 3
