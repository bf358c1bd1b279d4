"""The judge commands through click's CliRunner, on a real DuckDB file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import run
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, faithfulness_rows


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "cli.duckdb"
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in faithfulness_rows(3)) + "\n",
                    encoding="utf-8")
    assert run(path, "import", str(rows), "--dataset", "docs").exit_code == 0
    return path


def test_judge_list_and_show(db: Path) -> None:
    listed = run(db, "judge", "list")
    assert listed.exit_code == 0
    for name in ("faithfulness", "faithfulness-oneshot", "correctness", "refusal", "preference"):
        assert name in listed.output
    as_json = json.loads(run(db, "judge", "list", "--json").output)
    assert {r["source"] for r in as_json} == {"built-in"}
    shown = run(db, "judge", "show", "faithfulness")
    assert shown.exit_code == 0 and "# id: b2:" in shown.output
    assert "claim_statuses:" in shown.output


def test_the_old_judges_group_still_works_and_says_so_on_stderr(db: Path) -> None:
    old = run(db, "judges", "list", "--json")
    assert old.exit_code == 0
    # stdout is the command's alone, so a script that parses it keeps working
    assert json.loads(old.stdout) == json.loads(run(db, "judge", "list", "--json").stdout)
    assert old.stderr.strip().splitlines() == [
        "`calibrate judges` is deprecated: use `calibrate judge` (same commands and options)."]
    assert run(db, "judge", "list", "--json").stderr == ""


def test_validate(tmp_path: Path, db: Path) -> None:
    good = tmp_path / "mine.yaml"
    good.write_text(run(db, "judge", "show", "correctness").output, encoding="utf-8")
    result = run(db, "judge", "validate", str(good))
    assert result.exit_code == 0 and "valid" in result.output and "b2:" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text(encoding="utf-8") + "temprature: 1\n", encoding="utf-8")
    result = run(db, "judge", "validate", str(bad))
    assert result.exit_code == 2
    assert "bad.yaml" in result.output and "temprature: unknown key" in result.output


def test_dry_run_sends_nothing(db: Path) -> None:
    result = run(db, "judge", "run", "faithfulness", "--dataset", "docs", "--swap",
                    "--repeats", "3", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "18 calls planned, 0 already stored, 18 to make" in result.output
    assert "$" in result.output  # claude-sonnet-4-5 has a price


def test_missing_key_names_the_variable(db: Path) -> None:
    result = run(db, "judge", "run", "faithfulness", "--dataset", "docs")
    assert result.exit_code == 1
    assert "ANTHROPIC_API_KEY" in result.output


def test_run_resume_runs_and_export(
    db: Path, tmp_path: Path, fake_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CALIBRATE_ANTHROPIC_BASE_URL", fake_server.anthropic_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    args = ("judge", "run", "faithfulness", "--dataset", "docs", "--swap", "--repeats", "3")
    first = run(db, *args)
    assert first.exit_code == 0, first.output
    assert "18 planned, 0 cached, 18 scored" in first.output
    second = run(db, *args, "--json")
    summary = json.loads(second.output[second.output.index("{"):])
    assert summary["cached"] == 18 and summary["provider_requests"] == 0
    assert len(fake_server.calls) == 18
    runs = run(db, "judge", "runs", "--dataset", "docs")
    assert runs.output.count("completed") == 2
    out = tmp_path / "verdicts.csv"
    exported = run(db, "verdicts", "export", "--dataset", "docs", "--judge", "faithfulness",
                      "-o", str(out))
    assert exported.exit_code == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1 + 18


def test_failed_calls_exit_1_and_say_how_to_retry(
    db: Path, fake_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CALIBRATE_OPENAI_BASE_URL", fake_server.openai_base_url)
    fake_server.script("500", "500")
    result = run(db, "judge", "run", "faithfulness-oneshot", "--dataset", "docs",
                    "--concurrency", "1", "--max-retries", "1", "--model", "openai/local")
    assert result.exit_code == 1
    assert "1 calls failed after their retries; run the same command again" in result.output
    again = run(db, "judge", "run", "faithfulness-oneshot", "--dataset", "docs",
                   "--model", "openai/local")
    assert again.exit_code == 0 and "2 cached, 1 scored" in again.output


def test_scripted_model_for_demos(db: Path) -> None:
    result = run(db, "judge", "run", "preference", "--dataset", "docs",
                    "--model", "scripted/demo")
    assert result.exit_code == 1 and "pairwise but dataset 'docs' is pointwise" in result.output
    result = run(db, "judge", "run", "faithfulness-oneshot", "--dataset", "docs",
                    "--model", "scripted/demo", "--labelled-only")
    assert result.exit_code == 1 and "no rows labelled" in result.output
    result = run(db, "judge", "run", "faithfulness-oneshot", "--dataset", "docs",
                    "--model", "scripted/demo", "--limit", "2")
    assert result.exit_code == 0 and "2 planned" in result.output
    assert "cost $0.0000" in result.output


def test_verdicts_import_with_errors_and_success(db: Path, tmp_path: Path) -> None:
    path = tmp_path / "ext.csv"
    path.write_text("id,verdict\nrow-000,pass\nrow-404,fail\n", encoding="utf-8")
    result = run(db, "verdicts", "import", str(path), "--dataset", "docs", "--judge", "gpt")
    assert result.exit_code == 2 and "row 2, column 'id'" in result.output
    path.write_text("id,verdict,reasoning\nrow-000,pass,ok\nrow-001,fail,no\n", encoding="utf-8")
    result = run(db, "verdicts", "import", str(path), "--dataset", "docs", "--judge", "gpt")
    assert result.exit_code == 0 and "2 added" in result.output
    listed = json.loads(run(db, "judge", "list", "--json").output)
    assert any(r["name"] == "gpt" and r["source"] == "external" for r in listed)
    shown = run(db, "judge", "run", "gpt", "--dataset", "docs")
    assert shown.exit_code == 2 and "external judge" in shown.output


def test_unknown_judge_and_dataset(db: Path) -> None:
    result = run(db, "judge", "run", "nope", "--dataset", "docs")
    assert result.exit_code == 2 and "no judge 'nope'" in result.output
    result = run(db, "judge", "run", "refusal", "--dataset", "missing", "--dry-run")
    assert result.exit_code == 2 and "no dataset named 'missing'" in result.output
    assert "did you mean" not in result.output  # nothing is close to "missing"


def test_a_typo_in_a_judge_or_dataset_name_gets_a_suggestion(db: Path) -> None:
    result = run(db, "judge", "run", "refusl", "--dataset", "docs", "--dry-run")
    assert result.exit_code == 2 and "did you mean 'refusal'?" in result.output
    result = run(db, "judge", "run", "refusal", "--dataset", "Doc", "--dry-run")
    assert result.exit_code == 2
    assert "no dataset named 'Doc'; did you mean 'docs'?" in result.output


# -- --batch and the online-vs-batch estimate ---------------------------------------------


def test_dry_run_shows_online_and_batch_cost(db: Path) -> None:
    result = run(db, "judge", "run", "faithfulness", "--dataset", "docs", "--swap",
                    "--repeats", "3", "--dry-run")
    assert result.exit_code == 0, result.output
    online = re.search(r"online about \$([\d.]+) \(at most \$([\d.]+)\)", result.output)
    batch = re.search(r"batch API \(50% of the price, results within 24 h\) about "
                      r"\$([\d.]+) \(at most \$([\d.]+)\)", result.output)
    assert online and batch, result.output
    for full, half in zip(online.groups(), batch.groups(), strict=True):
        assert float(half) == pytest.approx(float(full) / 2, abs=1e-4)
    # A provider without a batch API gets no batch line.
    local = run(db, "judge", "run", "faithfulness-oneshot", "--dataset", "docs",
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
    refused = run(db, *args)
    assert refused.exit_code == 1
    assert "has no batch API" in refused.output and "Run without --batch" in refused.output
    assert fake_server.calls == []

    fake_server.batches.supported = True
    result = run(db, *args)
    assert result.exit_code == 0, result.output
    assert "submitted batch batch_" in result.output and "collected batch" in result.output
    assert "6 planned, 0 cached, 6 scored" in result.output
    assert "batches: 1 submitted, 1 collected, 0 still at the provider" in result.output
    again = run(db, *args)
    assert "6 cached" in again.output and len(fake_server.batches.batches) == 1
    listed = run(db, "judge", "batches")
    (batch_id,) = fake_server.batches.batches
    assert listed.exit_code == 0 and batch_id in listed.output
    assert "collected  6 calls  completed" in listed.output
    assert run(db, "judge", "batches", "--open").output.strip() == "No open batches."
    # The refused submission (404) is recorded as abandoned; it never got a batch id.
    refused_row, row = json.loads(run(db, "judge", "batches", "--json").output)
    assert refused_row["state"] == "abandoned" and refused_row["batch_id"] is None
    assert row["batch_id"] == batch_id and row["state"] == "collected" and row["calls"] == 6
