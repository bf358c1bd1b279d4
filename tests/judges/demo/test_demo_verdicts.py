"""The shipped demo verdicts: recorded by a real local model, loaded through the verdict import.

The files under ``judges/demo/data/verdicts/`` were produced by ``judges/demo/record.py`` (see
``RECORDING.md`` there); these tests check that they load through ``build_demo``, that their
row counts are the recorded design (rows x repeats x orders), and that the calibration report
on them tells the demo's story without refusing anything. The numbers are asserted loosely
(ranges): the exact values are in ``RECORDING.md``.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from stores import opened_workspace

from judges.demo import (
    BRAMBLEPOST_DATASETS,
    LABELLED_DATASET,
    PRODUCTION_DATASET,
    DemoSummary,
)
from judges.demo.layout import DATA_DIR, VERDICTS_DIR
from judges.providers.scripted import ScriptedProvider
from judges.reporting import calibration_report, judge_leaderboard
from judges.runner import run_judge
from judges.verdicts import import_verdicts, judge_verdicts
from judges.workspace import Workspace
from tools.demo.record import (
    CLAIMSPLIT,
    ONESHOT,
    demo_judges,
    export,
    grown_ids,
    stratified_ids,
)

VERDICTS = DATA_DIR / VERDICTS_DIR
LABELLED_ROWS = 100
PRODUCTION_ROWS = 100
BETTER = CLAIMSPLIT
# (dataset, judge) -> (rows, repeats, orders) as recorded.
DESIGN = {
    (LABELLED_DATASET, ONESHOT): (LABELLED_ROWS, 3, 2),
    (LABELLED_DATASET, CLAIMSPLIT): (LABELLED_ROWS, 1, 2),
    (PRODUCTION_DATASET, BETTER): (PRODUCTION_ROWS, 1, 2),
}
STANDIN = "standin-simulated"
"""The scripted stand-in's files (tests/judges/demo/test_demo_after_fix.py), one per dataset."""


def _file(dataset: str, judge: str) -> Path:
    return VERDICTS / dataset / "faithfulness" / f"{judge}.jsonl"


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory, demo_build: DemoSummary) -> Path:
    """A copy of the session's demo, whose build loaded every shipped verdict file."""
    assert (demo_build.verdict_files == len(DESIGN) + len(BRAMBLEPOST_DATASETS)
            and not demo_build.notes)
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    shutil.copyfile(demo_build.db_path, path)
    return path


@pytest.fixture
def demo(demo_db: Path) -> Iterator[Workspace]:
    with opened_workspace(demo_db) as workspace:
        yield workspace


def test_the_shipped_files_are_the_recorded_design() -> None:
    shipped = sorted(p.relative_to(VERDICTS).as_posix() for p in VERDICTS.glob("*/*/*.jsonl"))
    expected = [*DESIGN, *((d, STANDIN) for d in BRAMBLEPOST_DATASETS)]
    assert shipped == sorted(_file(d, j).relative_to(VERDICTS).as_posix() for d, j in expected)
    for (dataset, judge), (rows, repeats, orders) in DESIGN.items():
        lines = _rows(_file(dataset, judge))
        assert len(lines) == rows * repeats * orders, (dataset, judge)
        assert len({line["id"] for line in lines}) == rows
        assert Counter(line["order"] for line in lines) == {
            "original": rows * repeats, "swapped": rows * repeats}
        assert {line["repeat"] for line in lines} == set(range(repeats))
        assert {line["verdict"] for line in lines} <= {"pass", "fail", ""}


def test_recording_notes_name_every_config_id() -> None:
    notes = (VERDICTS / "RECORDING.md").read_text(encoding="utf-8")
    for name, config in demo_judges().items():
        assert config.config_id in notes, name
    assert "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046" in notes
    assert "Apache-2.0" in notes and "xllamacpp" in notes


def test_verdicts_load_with_exact_counts(demo: Workspace) -> None:
    for (dataset, judge), (rows, repeats, orders) in DESIGN.items():
        frame = judge_verdicts(demo, dataset, judge)
        assert len(frame) == rows * repeats * orders
        # Stored under the config that recorded them (imported with it, as --config does).
        assert frame["config_id"].eq(demo_judges()[judge].config_id).all()


def test_report_tells_the_story(demo: Workspace) -> None:
    report = calibration_report(demo, LABELLED_DATASET, BETTER,
                                target=PRODUCTION_DATASET).to_json()
    # RECORDING.md: 86 labelled rows used; 88 of the 100 target rows decided.
    assert 80 <= report["n"] <= LABELLED_ROWS
    target = report["unsure"]["judge_target"] + report["unscored"]["target"]
    assert report["n_target"] + target == PRODUCTION_ROWS
    # The judge's sensitivity differs by segment and the week's segment mix shifted, so the
    # headline is the segment-aware correction, which admits it cannot say much; the plain
    # transfer beside it is the number the warning was about.
    assert report["answer_kind"] == "segment_aware"
    assert report["method"] == "lee_segment_reweighted"
    corrected, observed = report["estimators"]["design"], report["observed_pass_rate"]
    assert corrected["reason"] is None, corrected  # no refusal, no widening to [0, 1]
    assert corrected["low"] < corrected["estimate"] < corrected["high"] < 1.0
    assert 0.3 <= corrected["estimate"] <= 0.6 and 0.15 <= observed["estimate"] <= 0.35
    assert corrected["estimate"] - observed["estimate"] > 0.1  # the correction matters
    headline = report["corrected_pass_rate"]
    assert headline["low"] <= corrected["low"] and headline["high"] >= corrected["high"]
    for key in ("kappa", "fpr", "sensitivity", "specificity", "swap_flip_rate"):
        value = report[key]
        assert value["reason"] is None and value["low"] <= value["estimate"] <= value["high"], key
    assert 0.15 <= report["kappa"]["estimate"] <= 0.45 and report["fpr"]["estimate"] < 0.2
    assert report["kappa"]["high"] < report["human_agreement"]["kappa"]["estimate"]
    oneshot = calibration_report(demo, LABELLED_DATASET, ONESHOT,
                                 rule="majority").to_json()
    assert oneshot["repeat_flip_rate"]["estimate"] > 0.8  # a coin flip at temperature 0.8
    assert oneshot["kappa"]["low"] < 0 < oneshot["kappa"]["high"]
    for rule in ("all_agree", "majority"):
        board = judge_leaderboard(demo, LABELLED_DATASET, [ONESHOT, CLAIMSPLIT],
                                  rule=rule).to_json()
        assert [entry["judge"]["name"] for entry in board] == [BETTER, ONESHOT], rule


def test_record_helpers_subset_and_export_round_trip(
    demo: Workspace, tmp_path: Path
) -> None:
    ids = stratified_ids(demo.labels, LABELLED_DATASET, 20, seed=1)
    assert len(ids) == 20 and ids == stratified_ids(demo.labels, LABELLED_DATASET, 20, seed=1)
    segments = Counter(demo.labels.item(LABELLED_DATASET, i).segment for i in ids)
    # 200 rows: lookup 60, multi_page 45, identifier 35, negation 30, unanswerable 30, so the
    # quotas are 6, 4.5, 3.5, 3, 3; the two halves go by name (identifier before multi_page).
    assert segments == {"lookup": 6, "multi_page": 4, "identifier": 4, "negation": 3,
                        "unanswerable": 3}
    grown = grown_ids(demo.labels, LABELLED_DATASET, 20, 10, seed=1)
    assert len(grown) == 30 and set(ids) <= set(grown)
    config = demo_judges()[ONESHOT].model_copy(
        update={"model": "scripted/demo", "name": "scripted-oneshot"})
    run_judge(config, LABELLED_DATASET, workspace=demo, item_ids=ids[:3],
              provider=ScriptedProvider("demo", responder=lambda r: "FAIL"))
    path = export(demo, config, LABELLED_DATASET, tmp_path)
    lines = _rows(path)
    assert len(lines) == 3 * 3 * 2 and {line["verdict"] for line in lines} == {"fail"}
    summary = import_verdicts(demo, path, dataset=LABELLED_DATASET,
                              judge="round-trip")
    assert summary.added == 18
