"""One question, one answer: report, card + score, gate and compare agree on random data.

Hypothesis draws a calibration dataset (labels with a recorded selection, human-unsure rows,
judge verdicts that are pass, fail, unsure, unscored or missing, segments or none) and a target
(another dataset, or the calibration dataset itself). The report's corrected pass rate on the
target is the question; a card exported from the report, scored on the target's verdicts as
``calibrate verdicts export`` writes them, must give the same number (point, interval, method,
refusal) to 1e-9; the gate decides on that number; ``compare`` of the target against itself
shows it for both versions and a difference of zero.
"""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stores import opened_workspace

from judges.outputs.card import card_from_report, dumps_card, loads_card
from judges.outputs.compare import compare_verdicts, stored_verdicts
from judges.outputs.gate import gate, score_verdicts
from judges.reporting import calibration_report
from judges.verdicts import import_verdicts
from judges.workspace import Workspace
from labels import CalibrateError, import_rows
from labels.provenance import Provenance
from labels.stores.label_store import NewLabel

_names = count()
SELECTIONS = ("random", "by_verdict", "flips_first", "file", "imported", "unknown")
JUDGE = ["pass", "fail", "unsure", "unscored", None]  # None: the judge never ran on the row


def _write(workspace: Workspace, folder: Path, name: str, judge: list[str | None],
           segments: list[str] | None) -> None:
    rows = [{"id": f"{name}-{i}", "question": "q", "answer": f"{name} answer {i}", "sources": ["s"],
             **({"segment": segments[i]} if segments else {})} for i in range(len(judge))]
    items = folder / f"{name}.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_rows(workspace.labels, items, name)
    lines = ["id,verdict"] + [f"{name}-{i},{'' if v == 'unscored' else v}"
                              for i, v in enumerate(judge) if v is not None]
    verdicts = folder / f"{name}.csv"
    verdicts.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_verdicts(workspace, verdicts, dataset=name, judge="j")


@st.composite
def cases(draw: st.DrawFn) -> dict[str, object]:
    n = draw(st.integers(16, 40))
    judge = draw(st.lists(st.sampled_from(JUDGE), min_size=n, max_size=n))
    humans = draw(st.lists(st.sampled_from(["pass", "pass", "fail", "unsure"]), min_size=n,
                           max_size=n))
    labelled = sorted(draw(st.sets(st.integers(0, n - 1), min_size=6, max_size=n)))
    segmented = draw(st.booleans())
    seg = [draw(st.sampled_from(["x", "y"])) for _ in range(n)] if segmented else None
    same = draw(st.booleans())
    m = draw(st.integers(10, 40))
    target = draw(st.lists(st.sampled_from(["pass", "fail", "unsure", "unscored"]),
                           min_size=m, max_size=m))
    tseg = [draw(st.sampled_from(["x", "y"])) for _ in range(m)] if segmented else None
    return {"judge": judge, "humans": humans, "labelled": labelled, "segments": seg,
            "selection": draw(st.sampled_from(SELECTIONS)), "same": same, "target": target,
            "target_segments": tseg}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, Path]:
    folder = tmp_path_factory.mktemp("surfaces")
    with opened_workspace(folder / "x.duckdb") as workspace:
        yield workspace, folder


def _close(a: dict[str, object], b: dict[str, object]) -> None:
    assert a["reason"] == b["reason"]
    for key in ("estimate", "low", "high"):
        x, y = a[key], b[key]
        assert (x is None) == (y is None), (key, a, b)
        if x is not None:
            assert abs(float(x) - float(y)) <= 1e-9, (key, a, b)  # type: ignore[arg-type]


@settings(max_examples=18, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_every_surface_gives_the_report_answer(world: tuple[Workspace, Path],
                                               case: dict[str, object]) -> None:
    workspace, folder = world
    k = next(_names)
    cal, tgt = f"cal{k}", f"tgt{k}"
    _write(workspace, folder, cal, case["judge"], case["segments"])  # type: ignore[arg-type]
    humans, labelled = case["humans"], case["labelled"]
    workspace.labels.add_labels(cal, [
        NewLabel(item_id=f"{cal}-{i}", annotator="ann", verdict=humans[i],  # type: ignore[index]
                 provenance=Provenance(selection=str(case["selection"])))
        for i in labelled  # type: ignore[attr-defined]
    ])
    target = cal
    if not case["same"]:
        _write(workspace, folder, tgt, case["target"], case["target_segments"])  # type: ignore[arg-type]
        target = tgt
    try:
        report = calibration_report(workspace, cal, "j", target=target)
    except CalibrateError as error:  # e.g. no verdict on the target: nothing to compare
        assert "has no" in str(error), error
        return
    data = report.to_json()
    card = loads_card(dumps_card(card_from_report(workspace, report, force=True)))
    verdicts = stored_verdicts(workspace, target, report.judge.config_id)
    try:
        score = score_verdicts(card, verdicts)
    except Exception as error:  # no pass/fail verdict to score
        assert "no pass/fail verdict" in str(error)
        return
    scored = score.to_json()
    _close(data["corrected_pass_rate"], scored["corrected_pass_rate"])
    assert data["method"] == scored["method"] and data["answer_kind"] == scored["answer_kind"]
    assert data["design"] == scored["design"]
    _close(data["labels_only_pass_rate"], scored["labels_only_pass_rate"])
    head = data["corrected_pass_rate"]
    decision = gate(score, min_pass_rate=0.5)
    if head["estimate"] is None:
        assert not decision.passed
    elif head["reason"] is None:
        assert decision.passed == (head["low"] >= 0.5)
    if not case["same"]:
        compared = compare_verdicts(card, verdicts, verdicts).to_json()
        for side in ("baseline", "candidate"):
            _close(head, compared[side])
        if compared["difference"]["estimate"] is not None:
            assert compared["difference"]["estimate"] == pytest.approx(0.0, abs=1e-12)
