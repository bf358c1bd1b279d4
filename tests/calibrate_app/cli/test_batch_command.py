"""``calibrate judge run --batch`` and the online-vs-batch estimate, through click's CliRunner."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, faithfulness_rows

from calibrate_app.cli import cli


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "cli.duckdb"
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in faithfulness_rows(3)) + "\n",
                    encoding="utf-8")
    assert invoke(path, "import", str(rows), "--dataset", "docs").exit_code == 0
    return path


def test_dry_run_shows_online_and_batch_cost(db: Path) -> None:
    result = invoke(db, "judge", "run", "faithfulness", "--dataset", "docs", "--swap",
                    "--repeats", "3", "--dry-run")
    assert result.exit_code == 0, result.output
    online = re.search(r"online about \$([\d.]+) \(at most \$([\d.]+)\)", result.output)
    batch = re.search(r"batch API \(50% of the price, results within 24 h\) about "
                      r"\$([\d.]+) \(at most \$([\d.]+)\)", result.output)
    assert online and batch, result.output
    for full, half in zip(online.groups(), batch.groups(), strict=True):
        assert float(half) == pytest.approx(float(full) / 2, abs=1e-4)
    # A provider without a batch API gets no batch line.
    local = invoke(db, "judge", "run", "faithfulness-oneshot", "--dataset", "docs",
                   "--model", "scripted/demo", "--dry-run")
    assert local.exit_code == 0 and "batch API" not in local.output


def test_batch_run_and_a_server_without_batches(
    db: Path, fake_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CALIBRATE_OPENAI_BASE_URL", fake_server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    args = ("judge", "run", "faithfulness-oneshot", "--dataset", "docs", "--model",
            "openai/fake-judge", "--swap", "--batch", "--poll-interval", "0.05")
    fake_server.batches.supported = False
    refused = invoke(db, *args)
    assert refused.exit_code == 1
    assert "has no batch API" in refused.output and "Run without --batch" in refused.output
    assert fake_server.calls == []

    fake_server.batches.supported = True
    result = invoke(db, *args)
    assert result.exit_code == 0, result.output
    assert "submitted batch batch_" in result.output and "collected batch" in result.output
    assert "6 planned, 0 cached, 6 scored" in result.output
    assert "batches: 1 submitted, 1 collected, 0 still at the provider" in result.output
    again = invoke(db, *args)
    assert "6 cached" in again.output and len(fake_server.batches.batches) == 1
