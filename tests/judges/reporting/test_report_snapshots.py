"""The report JSON of the demo's datasets, byte for byte as recorded.

A refactoring must not change a number, a word or a key of ``calibrate report --json``: each
case below runs the report on a copy of the demo database and compares its output with the
file recorded in ``tests/data/report_snapshots/``. A change that is meant to alter the report
re-records them (``CALIBRATE_RECORD_SNAPSHOTS=1``), and the diff of those files is the review
of what changed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cli_runner import ok
from repo_paths import REPO

from judges.demo import DemoSummary

SNAPSHOTS = REPO / "tests" / "data" / "report_snapshots"
LABELLED = ("--dataset", "demo-labelled")
CASES: dict[str, tuple[str, ...]] = {
    "oneshot": (*LABELLED, "--judge", "qwen1.5b-oneshot"),
    "claimsplit": (*LABELLED, "--judge", "qwen1.5b-claimsplit"),
    "standin": (*LABELLED, "--judge", "standin-simulated"),
    "claimsplit-target": (*LABELLED, "--judge", "qwen1.5b-claimsplit",
                          "--target", "demo-production-week"),
    "standin-target": (*LABELLED, "--judge", "standin-simulated",
                       "--target", "demo-production-week"),
    "standin-fix": (*LABELLED, "--judge", "standin-simulated", "--target", "demo-week-after-fix"),
    "leaderboard": (*LABELLED, "--judge", "qwen1.5b-oneshot", "--judge", "qwen1.5b-claimsplit",
                    "--judge", "standin-simulated"),
    "majority": (*LABELLED, "--judge", "qwen1.5b-claimsplit", "--aggregation", "majority"),
    "stratified": (*LABELLED, "--judge", "qwen1.5b-claimsplit",
                   "--design", "same_run_stratified"),
    "mtbench": ("--dataset", "mtbench", "--judge", "gpt-4-mtbench"),
}


@pytest.fixture(scope="module")
def demo_copy(demo_build: DemoSummary, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("snapshots") / "demo.duckdb"
    shutil.copyfile(demo_build.db_path, path)
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_report_json_is_as_recorded(demo_copy: Path, case: str) -> None:
    printed = ok(demo_copy, "report", "--json", *CASES[case])
    recorded = SNAPSHOTS / f"{case}.json"
    if os.environ.get("CALIBRATE_RECORD_SNAPSHOTS") == "1":
        recorded.write_text(printed, encoding="utf-8")
    assert printed == recorded.read_text(encoding="utf-8")
