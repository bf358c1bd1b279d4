"""The app under stress in a real browser.

kill -9 while labels are saved; a CLI judge run handed to the app while two experts label.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from app_browser import question, question_is, ready, shows, start_server
from fake_server_process import start_fake_server
from judge_helpers import DUMMY_KEY

from judges.stores.judge_store import JudgeStore
from labels import LabelStore, import_rows, open_store


def _rows(path: Path, n: int) -> Path:
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": f"r{i:03d}",
                    "question": f"Question number {i}?",
                    "answer": f"Answer {i}.",
                    "sources": [f"Passage {i}.1", f"Passage {i}.2"],
                }
            )
            for i in range(1, n + 1)
        )
    )
    return path


def _kill_rounds(browser: Any, tmp_path: Path, rounds: int, seed: int) -> int:
    rng = random.Random(seed)
    db = tmp_path / "app.duckdb"
    store = open_store(str(db))
    import_rows(store, _rows(tmp_path / "rows.jsonl", 60), "demo")
    store.db.close()
    acknowledged = 0
    for _ in range(rounds):
        server = start_server(db, tmp_path)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto(f"{server.url}/label?user=kim&dataset=demo")
            ready(page)
            shows(page, f"{acknowledged} / 60 labelled")
            for _ in range(rng.randint(1, 4)):
                before = question(page)
                page.keyboard.press(rng.choice("pfu"))
                shows(page, f"{acknowledged + 1} / 60 labelled")  # acknowledged in the UI
                acknowledged += 1
                question_is(page, before, negate=True)
            page.keyboard.press("p")  # a save that may or may not land before the kill
            server.proc.send_signal(signal.SIGKILL)
            server.proc.wait(timeout=10)
            context.close()
        finally:
            server.stop()
        store = open_store(str(db))  # opens after every kill
        try:
            stored = len(store.current_labels("demo", annotator="kim"))
        finally:
            store.db.close()
        assert stored >= acknowledged, "a label acknowledged in the UI was lost"
        acknowledged = stored
    return acknowledged


def test_kill_nine_the_app_while_labelling(browser: Any, tmp_path: Path) -> None:
    assert _kill_rounds(browser, tmp_path, rounds=2, seed=3) >= 2


@pytest.mark.slow
def test_kill_nine_the_app_ten_times(browser: Any, tmp_path: Path) -> None:
    assert _kill_rounds(browser, tmp_path, rounds=10, seed=4) >= 10


def test_cli_judge_run_while_two_experts_label(
    browser: Any, make_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    total = 16
    fake, port = start_fake_server("--latency", "0.05", "--verdicts", "hash")
    # The app process gets the provider settings; the CLI hands its command over.
    monkeypatch.setenv("CALIBRATE_ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    # The test server's TMPDIR is the test's folder (its uploads land there), whose path is too
    # long for a Unix socket: app and CLI share a short private runtime folder instead, as a
    # user's app and CLI share theirs.
    runtime = Path(tempfile.mkdtemp(prefix="cal-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))

    def seed(store: LabelStore) -> None:
        import_rows(store, _rows(tmp_path / "rows.jsonl", total), "demo")

    server = make_server(seed)
    cli_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CALIBRATE_", "ANTHROPIC_"))
    }
    cli_env["XDG_RUNTIME_DIR"] = os.environ["XDG_RUNTIME_DIR"]
    try:
        pages = []
        for name in ("alice", "bob"):
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.goto(f"{server.url}/label?user={name}&dataset=demo")
            pages.append(page)
        for page in pages:
            ready(page)
        # The app opens the database when the first page loads; from then on it holds it.
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "calibrate_app.cli",
                "--db",
                str(server.db_path),
                "judge",
                "run",
                "faithfulness",
                "--dataset",
                "demo",
                "--swap",
                "--repeats",
                "3",
                "--concurrency",
                "2",
            ],
            env=cli_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(1, total // 2 + 1):
            for page, key in zip(pages, ("p", "f"), strict=True):
                page.keyboard.press(key)
            for page in pages:
                shows(page, f"{n} / ")
                if n < total // 2:
                    page.wait_for_selector(
                        '[data-testid="stApp"][data-test-script-state="notRunning"]'
                    )
                    ready(page)
        for page in pages:
            expect_no_error = page.get_by_test_id("stException").count()
            assert expect_no_error == 0
            page.context.close()
        out, err = run.communicate(timeout=180)
        assert run.returncode == 0, out + err
        assert "running this command inside it" in err
    finally:
        if "run" in locals() and run.poll() is None:
            run.kill()
        fake.send_signal(signal.SIGTERM)
        fake.wait(timeout=10)
    store = server.open_store()  # stops the app, which then no longer needs its runtime folder
    shutil.rmtree(runtime, ignore_errors=True)
    try:
        labels = store.label_history_frame("demo")
        calls = JudgeStore(store.db).calls_frame()
    finally:
        store.db.close()
    assert len(labels) == total and labels["item_id"].is_unique
    assert labels.groupby("annotator").size().to_dict() == {"alice": 8, "bob": 8}
    assert len(calls) == total * 2 * 3 and (calls["status"] == "scored").all()
