"""Validation on real third-party data (FaithBench) and the synthetic oracle sets.

The files live in ``../shared/data/e2e`` (licences differ; FaithBench is CC BY-NC-SA): they are
read in place, never copied into the repository, and the tests skip when they are absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from repo_paths import SHARED_DATA
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from calibrate_app.cli import cli
from judges.calibration import lee_pass_rate
from judges.reporting import calibration_report
from judges.verdicts import import_verdicts
from judges.workspace import Workspace
from labels import LabelStore, import_labels, import_rows

E2E = SHARED_DATA / "e2e"

needs_data = pytest.mark.skipif(
    not (E2E / "faithbench_items.jsonl").is_file(),
    reason=f"shared third-party data not present at {E2E}",
)


def _csv(name: str) -> pd.DataFrame:
    return pd.read_csv(E2E / name, dtype=str, keep_default_na=False)


@needs_data
def test_faithbench_gpt4o_agreement_matches_sklearn(store: LabelStore,
                                                   workspace: Workspace) -> None:
    import_rows(store, E2E / "faithbench_items.jsonl", "faithbench")
    import_labels(store, E2E / "faithbench_labels.csv", "faithbench", annotator="faithbench")
    import_verdicts(workspace, E2E / "faithbench_gpt4o_verdicts.csv",
                    dataset="faithbench",
                    judge="gpt-4o")
    report = calibration_report(workspace, "faithbench", "gpt-4o")
    data = report.to_json()

    joined = _csv("faithbench_labels.csv").merge(_csv("faithbench_gpt4o_verdicts.csv"), on="id")
    assert data["n"] == len(joined) == 750
    assert data["kappa"]["estimate"] == pytest.approx(
        cohen_kappa_score(joined["label"], joined["verdict"]), abs=1e-12)
    (tn, fp), (fn, tp) = confusion_matrix(joined["label"], joined["verdict"],
                                          labels=["fail", "pass"])
    assert data["confusion"] == {"tp": tp, "fn": fn, "fp": fp, "tn": tn}
    assert data["sensitivity"]["estimate"] == pytest.approx(tp / (tp + fn))
    assert data["fpr"]["estimate"] == pytest.approx(fp / (fp + tn))
    # Every row is labelled: the corrected pass rate is the human one; the judge's is far off
    # (FaithBench picked rows the detectors disagree on, so GPT-4o passes most failing ones).
    human_rate = (joined["label"] == "pass").mean()
    assert data["corrected_pass_rate"]["estimate"] == pytest.approx(human_rate)
    assert data["observed_pass_rate"]["estimate"] == pytest.approx(
        (joined["verdict"] == "pass").mean())
    assert data["observed_pass_rate"]["low"] > data["corrected_pass_rate"]["high"]
    # Every row labelled: the run's pass rate is known exactly, whatever the clustering.
    assert data["corrected_pass_rate"]["low"] == pytest.approx(human_rate)
    assert data["corrected_pass_rate"]["high"] == pytest.approx(human_rate)
    assert len(data["segments"]) == 10  # one per summarizer model


@needs_data
def test_oracle_separate_calibration_is_lee(db_path: Path) -> None:
    def run(*args: str) -> str:
        result = CliRunner().invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    run("import", str(E2E / "oracle_c_cal_items.jsonl"), "--dataset", "cal")
    run("labels", "import", str(E2E / "oracle_c_cal_labels.csv"), "--dataset", "cal",
        "--annotator", "oracle")
    run("verdicts", "import", str(E2E / "oracle_c_cal_verdicts.csv"), "--dataset", "cal",
        "--judge", "j")
    run("import", str(E2E / "oracle_c_target_items.jsonl"), "--dataset", "tgt")
    run("verdicts", "import", str(E2E / "oracle_c_target_verdicts.csv"), "--dataset", "tgt",
        "--judge", "j")
    data = json.loads(run("report", "--dataset", "cal", "--judge", "j", "--target", "tgt",
                          "--json"))
    joined = _csv("oracle_c_cal_labels.csv").merge(_csv("oracle_c_cal_verdicts.csv"), on="id")
    target = _csv("oracle_c_target_verdicts.csv")["verdict"]
    direct = lee_pass_rate(joined["label"].tolist(), joined["verdict"].tolist(), target.tolist())
    # Headline: Lee with the verdict-reweighted error rates; every calibration row is labelled
    # here, so its point estimate is Lee's. Lee itself stays beside it.
    assert data["method"] == "lee_stratified"
    assert data["corrected_pass_rate"]["estimate"] == pytest.approx(direct.estimate)
    assert data["estimators"]["design"]["estimate"] == pytest.approx(direct.estimate)
