"""kill -9 a real CLI judge run mid-flight, resume it, and prove no stored call is paid twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from cli_judge_run import CliJudgeRunFactory
from fake_llm_server import read_log

from judges.stores.judge_store import JudgeStore
from labels import open_store

REPEATS = 3
ITEMS = 20


def _user_text(messages: list[dict[str, str]]) -> str:
    return messages[-1]["content"]


def _wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_kill_9_then_resume_pays_for_nothing_twice(
    tmp_path: Path, cli_judge_run: CliJudgeRunFactory
) -> None:
    setup = cli_judge_run(items=ITEMS, repeats=REPEATS, latency=0.05)
    db, log, command, env = setup.db, setup.log, setup.command, setup.env
    try:
        with open(tmp_path / "first.log", "w") as out:
            first = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        _wait_for(lambda: log.exists() and len(log.read_text().splitlines()) >= 40, 60,
                  "the first run to make 40 calls")
        os.kill(first.pid, signal.SIGKILL)
        assert first.wait(timeout=10) == -signal.SIGKILL
        time.sleep(0.3)  # requests already on the wire reach the server's log
        sent_before = len(read_log(str(log)))

        store = open_store(str(db))
        judges = JudgeStore(store.db)
        stored = judges.calls_frame()
        assert (stored["status"] != "failed").all()
        stored_at_kill = Counter(_user_text(json.loads(r)["messages"]) for r in stored["request"])
        (run,) = judges.runs()
        assert run.status == "interrupted"
        store.db.close()
        assert 0 < sum(stored_at_kill.values()) <= sent_before < ITEMS * 2 * REPEATS

        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stdout + second.stderr
        assert f"{sum(stored_at_kill.values())} cached" in second.stdout
    finally:
        setup.stop_server()

    calls = read_log(str(log))
    resumed = Counter(_user_text(c.body["messages"]) for c in calls[sent_before:])
    # A request cut off by the kill reaches the log without a body: sent, never answered.
    everything = Counter(_user_text(c.body["messages"]) for c in calls if "messages" in c.body)
    assert len(everything) == ITEMS * 2  # one prompt per item and order
    for prompt in everything:
        # The resumed run sent each prompt exactly as often as calls were still missing.
        assert resumed[prompt] == REPEATS - stored_at_kill[prompt]
    # Only calls in flight at the kill (sent, never stored) could be sent twice overall.
    assert len(calls) - ITEMS * 2 * REPEATS == sent_before - sum(stored_at_kill.values())

    store = open_store(str(db))
    final = JudgeStore(store.db).calls_frame()
    store.db.close()
    assert len(final) == ITEMS * 2 * REPEATS
    keys = final.groupby(["item_hash", "repeat", "ordering"]).size()
    assert len(keys) == ITEMS * 2 * REPEATS and keys.max() == 1


def test_ctrl_c_stores_every_call_in_flight(cli_judge_run: CliJudgeRunFactory) -> None:
    setup = cli_judge_run(items=ITEMS, repeats=REPEATS, latency=0.3)
    db, log, command, env = setup.db, setup.log, setup.command, setup.env
    try:
        run = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        _wait_for(lambda: log.exists() and len(log.read_text().splitlines()) >= 6, 60,
                  "the run to make 6 calls")
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=30)
        assert run.returncode == 130, out + err
        assert "Run the same command again to resume" in err
        sent = len(read_log(str(log)))
    finally:
        setup.stop_server()
    store = open_store(str(db))
    judges = JudgeStore(store.db)
    stored = judges.calls_frame()
    (record,) = judges.runs()
    store.db.close()
    # Every request the provider got was answered, stored and counted: nothing paid is lost.
    assert len(stored) == sent and (stored["status"] == "scored").all()
    assert record.status == "cancelled" and record.summary is not None
    assert record.summary["scored"] == sent
    assert record.summary["not_run"] == ITEMS * 2 * REPEATS - sent
