"""The demo's week after the fix and the stand-in judge's verdicts on it.

The week after the fix is a seeded sample of the production week's questions answered again
(same ids); its true difference is known row by row. The stand-in judge's verdicts are made by
``tools/demo/standin.py`` through the runner and the scripted provider; re-running it gives the
shipped lines. ``calibrate compare`` on the demo's two weeks must cover the true difference.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stores import opened_workspace

from judges.demo import AFTER_FIX_DATASET, LABELLED_DATASET, PRODUCTION_DATASET, DemoSummary
from judges.demo.layout import (
    AFTER_FIX_FILE,
    DATA_DIR,
    PRODUCTION_FILE,
    README_FILE,
    VERDICTS_DIR,
)
from judges.outputs.compare import compare_datasets
from judges.reporting import calibration_report, find_judge
from judges.workspace import Workspace
from tools.demo import standin
from tools.demo.content import AFTER_FIX_ROWS, STANDIN

VERDICTS = DATA_DIR / VERDICTS_DIR


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def week() -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in _jsonl(DATA_DIR / PRODUCTION_FILE)}


@pytest.fixture(scope="module")
def after() -> list[dict[str, Any]]:
    return _jsonl(DATA_DIR / AFTER_FIX_FILE)


def _true_difference(after: list[dict[str, Any]], criterion: str = "faithfulness") -> float:
    key = f"true_{criterion}"
    now = sum(r["metadata"][key] == "pass" for r in after)
    before = sum(r["metadata"]["before_fix"][key] == "pass" for r in after)
    return (now - before) / len(after)


def test_the_week_after_is_the_same_questions_answered_again(
    week: dict[str, dict[str, Any]], after: list[dict[str, Any]]
) -> None:
    assert len(after) == AFTER_FIX_ROWS == len({r["id"] for r in after})
    changed = 0
    for row in after:
        old = week[row["id"]]
        for key in ("question", "reference", "segment", "document_id"):
            assert row[key] == old[key], (row["id"], key)
        before = row["metadata"]["before_fix"]
        assert before == {"failure_mode": old["metadata"]["failure_mode"],
                          "true_faithfulness": old["metadata"]["true_faithfulness"],
                          "true_correctness": old["metadata"]["true_correctness"]}
        if row["metadata"]["failure_mode"] == before["failure_mode"]:
            assert (row["answer"], row["sources"]) == (old["answer"], old["sources"])
        else:
            changed += 1
            assert (row["answer"], row["sources"]) != (old["answer"], old["sources"])
    assert 10 <= changed <= 60
    # The fix helps on balance, and the README states the difference the files hold.
    difference = _true_difference(after)
    assert difference > 0
    readme = (DATA_DIR / README_FILE).read_text(encoding="utf-8")
    shown = re.escape(f"{difference:+.3f}")
    assert re.search(rf"\| faithfulness \| [0-9.]+ \| [0-9.]+ \| {shown} \|", readme)


def test_the_standin_reproduces_its_shipped_lines() -> None:
    config = standin.standin_config()
    assert config.model.startswith("scripted/")
    with opened_workspace(":memory:") as workspace:
        standin.load_rows(workspace.labels)
        for dataset, _ in standin.DATASETS:
            shipped = (VERDICTS / dataset / "faithfulness" / f"{config.name}.jsonl").read_text(
                encoding="utf-8").splitlines()
            sample = shipped[::37]  # a spread of rows; the whole run is the script's job
            ids = [json.loads(line)["id"] for line in sample]
            assert standin.verdict_lines(workspace, config, dataset, ids) == sample, dataset


def test_the_standin_has_the_same_error_rates_everywhere() -> None:
    """Its verdicts flip the truth at the configured rates, within sampling error."""
    for dataset, name in standin.DATASETS:
        truth = {r["id"]: r["metadata"]["true_faithfulness"] for r in _jsonl(DATA_DIR / name)}
        lines = _jsonl(VERDICTS / dataset / "faithfulness" / "standin-simulated.jsonl")
        assert {line["id"] for line in lines} == set(truth)
        passing = [line for line in lines if truth[line["id"]] == "pass"]
        failing = [line for line in lines if truth[line["id"]] == "fail"]
        sens = sum(line["verdict"] == "pass" for line in passing) / len(passing)
        spec = sum(line["verdict"] == "fail" for line in failing) / len(failing)
        # Four binomial standard errors either side.
        for rate, target, n in ((sens, STANDIN["sensitivity"], len(passing)),
                                (spec, STANDIN["specificity"], len(failing))):
            assert abs(rate - target) <= 4 * (target * (1 - target) / n) ** 0.5, dataset


@pytest.fixture(scope="module")
def demo(
    tmp_path_factory: pytest.TempPathFactory, demo_build: DemoSummary
) -> Iterator[Workspace]:
    path = tmp_path_factory.mktemp("after-fix") / "demo.duckdb"
    shutil.copyfile(demo_build.db_path, path)
    with opened_workspace(path) as workspace:
        yield workspace


def test_compare_on_the_demo_covers_the_true_difference(
    demo: Workspace, after: list[dict[str, Any]]
) -> None:
    judge = find_judge(demo, "standin-simulated", dataset=LABELLED_DATASET)
    assert judge.stand_in and judge.origin == "config"
    report = calibration_report(demo, LABELLED_DATASET, judge)
    data = compare_datasets(demo, report, baseline=PRODUCTION_DATASET,
                            candidate=AFTER_FIX_DATASET).to_json()
    assert data["n_paired"] == AFTER_FIX_ROWS
    assert data["excluded"] == {"baseline_only": 600 - AFTER_FIX_ROWS, "candidate_only": 0,
                                "not_pass_fail": 0}
    d = data["difference"]
    assert d["low"] <= _true_difference(after) <= d["high"]
    assert d["low"] > 0  # the fix's gain is detected
    assert data["mcnemar_p"] < 0.05
    assert [s["segment"] for s in data["segments"]] == sorted(
        {r["segment"] for r in after})
