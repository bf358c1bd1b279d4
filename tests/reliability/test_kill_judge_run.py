"""kill -9 a CLI judge run at many seeded random points, resume each time: nothing paid twice."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from cli_judge_run import CliJudgeRunFactory
from fake_llm_server import read_log

from judges.stores.judge_store import JudgeStore
from labels import open_store

REPEATS = 2


def _prompt(body: dict) -> str:  # type: ignore[type-arg]
    return body["messages"][-1]["content"]


def _stored_prompts(db: Path) -> Counter[str]:
    store = open_store(str(db))  # the file opens after every kill
    try:
        frame = JudgeStore(store.db).calls_frame()
    finally:
        store.db.close()
    ok = frame[frame["status"] != "failed"]
    return Counter(_prompt(json.loads(r)) for r in ok["request"])


def _kill_and_resume(
    tmp_path: Path, cli_judge_run: CliJudgeRunFactory, *, items: int, kills: int, seed: int
) -> int:
    rng = random.Random(seed)
    setup = cli_judge_run(items=items, repeats=REPEATS, latency=0.05)
    db, log, command, env = setup.db, setup.log, setup.command, setup.env
    planned = items * 2 * REPEATS
    kills_done = 0
    try:
        for _ in range(kills):
            stored_before = _stored_prompts(db)
            if sum(stored_before.values()) >= planned - 4:
                break
            sent_before = len(read_log(str(log))) if log.exists() else 0
            target = sent_before + rng.randint(1, 12)
            with open(tmp_path / "run.log", "a") as out:
                run = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 60
            while (not log.exists() or len(read_log(str(log))) < target) and run.poll() is None:
                assert time.monotonic() < deadline, "the run made no progress"
                time.sleep(0.01)
            os.kill(run.pid, signal.SIGKILL)
            run.wait(timeout=10)
            kills_done += 1
            time.sleep(0.2)  # requests already on the wire reach the server's log
            # A request cut off by the kill arrives without a body: nothing was answered.
            sent = Counter(
                _prompt(c.body) for c in read_log(str(log))[sent_before:] if "messages" in c.body
            )
            for prompt, count in sent.items():
                # A prompt stored k times before this run could be sent at most REPEATS - k times.
                assert count <= REPEATS - stored_before[prompt], "a stored call was paid again"
        final = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
        assert final.returncode == 0, final.stdout + final.stderr
    finally:
        setup.stop_server()

    store = open_store(str(db))
    calls = JudgeStore(store.db).calls_frame()
    (last, *_) = JudgeStore(store.db).runs()
    store.db.close()
    assert len(calls) == planned and (calls["status"] == "scored").all()
    keys = calls.groupby(["item_hash", "repeat", "ordering"]).size()
    assert len(keys) == planned and keys.max() == 1, "every call accounted for, once"
    assert last.status == "completed"
    return kills_done


def test_kill_nine_at_random_points_then_resume(
    tmp_path: Path, cli_judge_run: CliJudgeRunFactory
) -> None:
    assert _kill_and_resume(tmp_path, cli_judge_run, items=12, kills=3, seed=1) == 3


@pytest.mark.slow
def test_kill_nine_at_twenty_random_points_then_resume(
    tmp_path: Path, cli_judge_run: CliJudgeRunFactory
) -> None:
    assert _kill_and_resume(tmp_path, cli_judge_run, items=40, kills=20, seed=2) == 20
