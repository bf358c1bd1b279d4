"""The setup the kill -9 tests share.

Rows in a real DuckDB file, the fake LLM server in its own process, and the `calibrate judge run`
command pointed at it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_judge_run import CliJudgeRun, CliJudgeRunFactory
from fake_server_process import start_fake_server
from judge_helpers import DUMMY_KEY, faithfulness_rows

from labels import import_rows, open_store


@pytest.fixture
def cli_judge_run(tmp_path: Path) -> Iterator[CliJudgeRunFactory]:
    """Make a :class:`CliJudgeRun`: ``make(items=…, repeats=…, latency=…)`` (swap on, 4 at once)."""
    made: list[CliJudgeRun] = []

    def make(*, items: int, repeats: int, latency: float) -> CliJudgeRun:
        db = tmp_path / "kill.duckdb"
        rows = tmp_path / "rows.jsonl"
        rows.write_text("\n".join(json.dumps(r) for r in faithfulness_rows(items, sources=3)),
                        encoding="utf-8")
        store = open_store(str(db))
        import_rows(store, rows, "docs")
        store.db.close()
        log = tmp_path / "calls.jsonl"
        server, port = start_fake_server("--latency", str(latency), "--verdicts", "hash",
                                         "--log", str(log))
        env = {
            **{k: v for k, v in os.environ.items()
               if not k.startswith(("CALIBRATE_", "ANTHROPIC_", "OPENAI_"))},
            "CALIBRATE_ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": DUMMY_KEY,
        }
        command = [sys.executable, "-m", "calibrate_app.cli", "--db", str(db), "judge", "run",
                   "faithfulness", "--dataset", "docs", "--swap", "--repeats", str(repeats),
                   "--concurrency", "4"]
        run = CliJudgeRun(db, log, server, command, env)
        made.append(run)
        return run

    yield make
    for run in made:
        run.stop_server()


@pytest.fixture
def public_dir() -> Iterator[Path]:
    """A folder of ours (0755) that another uid can enter; pytest's own temp folders are 0700.

    For the checks that another local user can neither read the database nor use the app's
    command channel.
    """
    folder = Path(tempfile.mkdtemp(prefix="calibrate-public-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
