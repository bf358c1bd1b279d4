"""`calibrate judge split | align | adopt | stress` through click, over HTTP to the fake server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from align_data import DATASET, N, Scripted, rows, truth
from cli_runner import run
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY
from statsmodels.stats.proportion import proportion_confint


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=Scripted()) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
        monkeypatch.setenv("CALIBRATE_OPENAI_BASE_URL", fake.openai_base_url)
        yield fake


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "align.duckdb"
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    assert run(path, "import", str(data), "--dataset", DATASET).exit_code == 0
    labels = tmp_path / "labels.csv"
    labels.write_text("id,label,note\n" + "".join(
        f"row-{i:03d},{truth(i)},{'wrong seat count' if truth(i) == 'fail' else ''}\n"
        for i in range(N)), encoding="utf-8")
    done = run(path, "labels", "import", str(labels), "--dataset", DATASET,
                  "--annotator", "dana")
    assert done.exit_code == 0, done.output
    return path


def test_split_align_adopt_align_again_warns(db: Path, server: FakeLLMServer) -> None:
    split = run(db, "judge", "split", "--dataset", DATASET, "--json")
    data = json.loads(split.output)
    assert data["seed"] == 17 and len(data["dev"]) + data["test_rows"] == N
    assert data["test_revisions"] == 0 and data["warning"] is None

    first = run(db, "judge", "align", "faithfulness-oneshot", "--dataset", DATASET,
                   "--model", "openai/fake-judge", "--proposer", "openai/fake-proposer")
    assert first.exit_code == 0, first.output
    out = first.output
    assert "faithfulness-oneshot r1" in out and "faithfulness-oneshot r2" in out
    assert "+  Criteria revised from expert disagreements:" in out
    assert re.search(r"candidate faithfulness-oneshot r2 \(b2:\w+\): sensitivity 1\.000 "
                     r"\[0\.\d{3}, 1\.000\] \(n=\d+\)", out)
    assert re.search(r"McNemar exact \(candidate vs current, \d+ test rows\): candidate right "
                     r"only \d+, current right only 0, p = 0\.\d{4}", out)
    assert "certification on test rows (candidate):" in out
    assert "STAND-IN" not in out and "WARNING" not in out
    proposal = re.search(r"calibrate judge adopt (p[0-9a-f]+)", out)
    assert proposal is not None

    adopted = run(db, "judge", "adopt", proposal.group(1))
    assert adopted.exit_code == 0 and "Adopted faithfulness-oneshot r2" in adopted.output
    assert "used 2 times by 2 revisions" in run(db, "judge", "split", "--dataset",
                                                   DATASET).output

    # The next cycle starts from the adopted revision: a third revision sees the test rows.
    second = run(db, "judge", "align", "faithfulness-oneshot", "--dataset", DATASET,
                    "--model", "openai/fake-judge", "--proposer", "openai/fake-proposer",
                    "--json")
    result = json.loads(second.stdout)
    assert result["current"]["label"].startswith("faithfulness-oneshot r2")
    assert result["candidate"]["label"].startswith("faithfulness-oneshot r3")
    assert result["test_revisions"] == 3 and "fresh test set" in result["warning"]
    assert result["numbers"]["candidate/test"]["sensitivity"]["n"] > 0
    # The calibration report of the dataset says so too.
    report = run(db, "report", "--dataset", DATASET, "--judge",
                    result["candidate"]["config_id"])
    assert "test rows of bot/faithfulness: 3 revisions have been evaluated" in report.output


def test_align_with_scripted_stand_ins_is_marked(db: Path) -> None:
    result = run(db, "judge", "align", "faithfulness-oneshot", "--dataset", DATASET,
                    "--model", "scripted/demo-judge")
    assert result.exit_code == 0, result.output
    assert "STAND-IN: the judge (scripted/demo-judge)" in result.output
    assert "STAND-IN: the proposer (scripted/proposer)" in result.output


def test_stress_command(db: Path, server: FakeLLMServer) -> None:
    result = run(db, "judge", "stress", "faithfulness-oneshot", "--dataset", DATASET,
                    "--model", "openai/fake-judge", "--test", "source_order", "--test",
                    "source_deletion", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [t["test"] for t in data["tests"]] == ["source_order", "source_deletion"]
    order = data["tests"][0]
    assert order["eligible"] == N and order["flip_rate"]["estimate"] == 0.0
    assert data["derived_dataset"] == f"{DATASET}.stress"
    listed = run(db, "datasets", "--json").output
    assert f"{DATASET}.stress" in listed
    # The card carries the stress results, and card show prints them.
    card = db.parent / "card.json"
    exported = run(db, "card", "export", "--dataset", DATASET, "--judge", data["config_id"],
                      "-o", str(card), "--force")  # 48 labelled rows: below the card's 30/class
    assert exported.exit_code == 0, exported.output
    shown = run(db, "card", "show", str(card)).output
    high = proportion_confint(0, N, alpha=0.05, method="wilson")[1]
    assert (f"stress source_order (must not change) on 'bot': flip rate 0.000 [0.000, "
            f"{high:.3f}], n={N} of {N}") in shown
    assert json.loads(card.read_text())["stress"][1]["test"] == "source_deletion"
