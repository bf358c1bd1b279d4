"""One pairwise answer on every surface: report JSON, card + score, gate (and their refusals).

A calibration dataset of 120 A-vs-B rows whose human votes were drawn by judge verdict (the
Label page's stratified order), judged in both orders except six rows judged in one order only,
and a target dataset judged in both orders. The report, the card scored on the report's own
verdicts and on the target's, and the gate must give the same shares to 1e-9.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from stores import opened_store

from calibrate_app.cli import cli
from judges.outputs.card import CardError, loads_card, write_card
from judges.outputs.pairwise_card import (
    card_from_pairwise_report,
    gate_pairwise,
    score_pairwise_file,
)
from judges.reporting import pairwise_report
from judges.verdicts import export_verdicts, import_verdicts
from judges.workspace import Workspace
from labels import LabelStore, import_labels, import_rows

JUDGE = "ext"
M = np.array([[0.80, 0.08, 0.12], [0.05, 0.85, 0.10], [0.15, 0.15, 0.70]])
SIDES = ("a", "b", "tie")
ONE_ORDER = 6
N_BOOT = 200  # the vote bootstraps; the estimate itself needs none here


def _rows(prefix: str, n: int, pairs: list[str]) -> list[dict[str, Any]]:
    return [{"id": f"{prefix}{i}", "question": f"{prefix} question {i}",
             "answer_a": f"{prefix} answer a {i}", "answer_b": f"{prefix} answer b {i}",
             "metadata": {"model_a": "m1", "model_b": pairs[i % len(pairs)]}}
            for i in range(n)]


def _write(path: Path, header: str, lines: list[str]) -> Path:
    path.write_text(header + "\n" + "".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def _dataset(store: LabelStore, tmp: Path, name: str, n: int, pi: list[float], seed: int,
             one_order: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows, and the judge's calls (both orders; ``one_order`` rows only the original)."""
    rng = np.random.default_rng(seed)
    human = rng.choice(3, n, p=pi)
    judge = np.array([rng.choice(3, p=M[h]) for h in human])
    rows = tmp / f"{name}.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in _rows(name, n, ["m2", "m3"])))
    import_rows(store, rows, name)
    lines = []
    for i, j in enumerate(judge):
        lines.append(f"{name}{i},{SIDES[j]},original")
        if i >= one_order:
            # every 13th row flips when A and B swap places (a tie under all_agree)
            swapped = SIDES[(j + 1) % 3] if i % 13 == 0 else SIDES[j]
            lines.append(f"{name}{i},{swapped},swapped")
    import_verdicts(Workspace.of(store), _write(tmp / f"{name}-v.csv", "id,verdict,order", lines),
                    dataset=name, judge=JUDGE)
    return human, judge


def _label(store: LabelStore, tmp: Path, name: str, human: np.ndarray, rows: list[int]) -> None:
    lines = [f"{name}{i},ann,{SIDES[human[i]]}" for i in rows]
    import_labels(store, _write(tmp / f"{name}-l.csv", "id,annotator,label", lines), name,
                  selection="by_verdict")


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("pairwise")
    db = tmp / "pairwise.duckdb"
    with opened_store(db) as store:
        human, judge = _dataset(store, tmp, "cal", 120, [0.3, 0.5, 0.2], 1, one_order=ONE_ORDER)
        # drawn by verdict: 12 rows of each judge verdict (ties over-sampled), plus the first
        # one-order rows
        drawn = [int(i) for v in range(3) for i in np.flatnonzero(judge == v)[-12:]]
        _label(store, tmp, "cal", human, sorted({*drawn, 0, 1}))
        _dataset(store, tmp, "tgt", 60, [0.15, 0.7, 0.15], 2)
        # cal2: the same kind of rows, labelled only where the judge said b or tie
        human2, judge2 = _dataset(store, tmp, "cal2", 60, [0.3, 0.5, 0.2], 3)
        _label(store, tmp, "cal2", human2, [int(i) for i in np.flatnonzero(judge2 != 0)][:24])
    return db


def _same(left: Any, right: Any, path: str = "") -> None:
    """Equal JSON, numbers to 1e-9."""
    if isinstance(left, dict):
        assert set(left) == set(right), path
        for key in left:
            _same(left[key], right[key], f"{path}.{key}")
    elif isinstance(left, list):
        assert len(left) == len(right), path
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            _same(a, b, f"{path}[{i}]")
    elif isinstance(left, float) and isinstance(right, float):
        assert left == pytest.approx(right, abs=1e-9), path
    else:
        assert left == right, path


ANSWER_KEYS = ("win_rate", "method", "answer_kind", "design", "design_reason", "population",
               "labels_only", "estimators", "misclassification", "calibration_strata",
               "one_order", "selection", "worse_than_chance", "human_unsure_bounds")


def test_report_card_score_and_gate_give_one_answer(workspace_copy: Workspace,
                                                     tmp_path: Path) -> None:
    report = pairwise_report(workspace_copy, "cal", JUDGE, n_boot=N_BOOT)
    data = report.to_json()
    assert data["schema_version"] == 2 and data["design"] == "same_run_stratified"
    assert data["win_rate"]["method"] == "verdict_stratified"
    card = card_from_pairwise_report(workspace_copy, report)
    assert card.evidence is not None and card.evidence["kind"] == "pairwise"
    card_path = write_card(card, tmp_path / "card.json")
    card = loads_card(card_path.read_text(), source=str(card_path))

    # the calibration run's own verdicts (same fingerprint): the report's same-run answer
    own = export_verdicts(workspace_copy, "cal", JUDGE, tmp_path / "cal.csv")
    scored = score_pairwise_file(card, str(own)).to_json()
    for key in ANSWER_KEYS:
        _same(data[key], scored[key], key)
    _same(data["by_pair"], [{"model_a": "m1", "model_b": p["pair"].split(" vs ")[1], **p}
                            for p in scored["by_pair"]])

    # another dataset: report --target equals score on its exported verdicts
    other = pairwise_report(workspace_copy, "cal", JUDGE, target="tgt", n_boot=N_BOOT).to_json()
    assert other["design"] == "separate_calibration"
    assert other["win_rate"]["method"] == "matrix_stratified"
    tgt = export_verdicts(workspace_copy, "tgt", JUDGE, tmp_path / "tgt.csv")
    score = score_pairwise_file(card, str(tgt))
    for key in ANSWER_KEYS:
        _same(other[key], score.to_json()[key], key)
    b = other["win_rate"]["corrected"]["b"]
    assert gate_pairwise(score, min_share=b["low"] - 1e-6).passed
    assert not gate_pairwise(score, min_share=b["low"] + 1e-6).passed
    assert not gate_pairwise(score, min_share=b["estimate"] + 1e-6, on="estimate").passed


def test_a_refusal_is_the_same_on_every_surface(workspace_copy: Workspace, db_copy: Path,
                                                tmp_path: Path) -> None:
    # cal2 has no labelled row where the judge said a: another run cannot be corrected
    report = pairwise_report(workspace_copy, "cal2", JUDGE, target="tgt", n_boot=N_BOOT).to_json()
    assert report["win_rate"]["refused"]
    reason = report["win_rate"]["reason"]
    assert reason == "no labelled calibration rows in stratum judge a: label some"
    assert f"corrected win rate refused: {reason}" in report["warnings"]
    # the same run is bounded over that stratum, not refused
    same = pairwise_report(workspace_copy, "cal2", JUDGE, n_boot=N_BOOT).to_json()
    assert not same["win_rate"]["refused"]
    assert any(w.startswith("not identified: no labelled rows in stratum judge a")
               for w in same["warnings"])
    card = card_from_pairwise_report(workspace_copy, pairwise_report(workspace_copy, "cal2", JUDGE,
                                                                 n_boot=N_BOOT))
    card_path = write_card(card, tmp_path / "card2.json")
    tgt = export_verdicts(workspace_copy, "tgt", JUDGE, tmp_path / "tgt.csv")
    scored = score_pairwise_file(card, str(tgt)).to_json()
    _same(report["win_rate"], scored["win_rate"])
    workspace_copy.db.close()
    gate = CliRunner().invoke(cli, ["--db", str(db_copy), "gate", "--card", str(card_path),
                                    str(tgt), "--min-pass-rate", "0.3"])
    assert gate.exit_code == 2 and reason in gate.output


def test_one_order_rows_are_counted_named_and_left_out_of_the_votes(
        workspace_copy: Workspace) -> None:
    data = pairwise_report(workspace_copy, "cal", JUDGE, n_boot=N_BOOT).to_json()
    assert data["position_consistency"]["one_order_rows"] == ONE_ORDER
    assert data["one_order"]["calibration"] == ONE_ORDER
    assert data["one_order"]["labelled"] == 2  # rows cal0 and cal1
    assert f"{ONE_ORDER} judged in one order only" in data["population"]
    assert any(f"{ONE_ORDER} rows were judged in one order only" in w for w in data["warnings"])
    # under all_agree their single verdict is not a verdict: the two votes are excluded
    assert data["agreement"]["excluded"] == 2
    assert sum(map(sum, data["calibration_table"])) == data["n_rows"] - 2
    majority = pairwise_report(workspace_copy, "cal", JUDGE, rule="majority",
                               n_boot=N_BOOT).to_json()
    assert majority["agreement"]["excluded"] == 0
    assert any("under majority their single verdict counts" in w for w in majority["warnings"])


def test_an_old_pairwise_card_is_refused_with_the_command_that_re_exports_it(
        workspace_copy: Workspace) -> None:
    card = card_from_pairwise_report(workspace_copy, pairwise_report(workspace_copy, "cal", JUDGE,
                                                                 n_boot=N_BOOT))
    old = card.to_json()
    old.pop("evidence")
    old.pop("estimation")
    with pytest.raises(CardError, match="carries no pairwise evidence") as error:
        loads_card(json.dumps(old), source="old.json")
    assert "calibrate card export --dataset cal --judge ext -o old.json" in str(error.value)
