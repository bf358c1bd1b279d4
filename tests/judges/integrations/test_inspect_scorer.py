"""The inspect_ai scorer wrapper, in a real ``inspect_ai.eval`` with inspect's mock model.

The eval is the demo's calibration run replayed through inspect: the system under test is
``mockllm/model`` answering each row with the answer the demo recorded, and the judge is
inspect's own ``model_graded_qa`` scorer whose grader, another ``mockllm/model``, replies
with the grade the demo's claim-split judge gave that row (C pass, I fail, P for a verdict
that flipped between the two source orders). Wrapped in ``calibrated(...)`` with the judge's
card, the eval's results carry the card's corrected pass rate, the same numbers as ``calibrate
score`` on the run's exported verdicts: 0.673 [0.640, 0.685] over 91 verdicts.

Skipped only when inspect_ai (the ``inspect`` extra) is missing and CALIBRATE_REQUIRE_INSPECT
is unset; CI sets it, so there a missing inspect_ai fails the test.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from demo_card import DemoCard
from repo_paths import REPO

from judges.integrations import score
from judges.outputs.card import load_card

if importlib.util.find_spec("inspect_ai") is None and not os.environ.get(
        "CALIBRATE_REQUIRE_INSPECT"):
    pytest.skip("inspect_ai (pip install -e '.[inspect]') is not installed",
                allow_module_level=True)

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import model_graded_qa

from judges.integrations.inspect_scorer import calibrated, gate_log

# tenacity's newer release deprecates an argument inspect_ai's retry still passes.
pytestmark = pytest.mark.filterwarnings(
    "ignore:The 'initial' parameter is deprecated:DeprecationWarning")
ROWS = REPO / "judges" / "demo" / "data" / "labelled.jsonl"
GRADE = {"pass": "C", "fail": "I", "unsure": "P"}


def _prompt(row: dict[str, Any]) -> str:
    sources = "\n\n".join(s["text"] for s in row["sources"])
    return f"Sources:\n{sources}\n\nQuestion: {row['question']}"


def _recorded(path: Path) -> dict[str, str]:
    """The judge's verdict per row: its calls agree, or the row is unsure (all_agree)."""
    calls: dict[str, set[str]] = defaultdict(set)
    with path.open(encoding="utf-8") as handle:
        for r in csv.DictReader(handle):
            calls[r["item_id"]].add(r["verdict"])
    return {item: v.pop() if len(v) == 1 else "unsure" for item, v in calls.items()}


def _text(messages: list[Any]) -> str:
    return "\n".join(m.text for m in messages)


def _reply(text: str, prompt: str) -> ModelOutput:
    output = ModelOutput.from_content("mockllm/model", text)
    # Usage given: without it mockllm counts tokens with tiktoken, whose encoding file is
    # downloaded on first use (the tests run offline).
    output.usage = ModelUsage(input_tokens=len(prompt.split()), output_tokens=len(text.split()),
                              total_tokens=len(prompt.split()) + len(text.split()))
    return output


@pytest.fixture(scope="module")
def replay(demo_card: DemoCard) -> tuple[list[Sample], Any, Any]:
    rows = {r["id"]: r for r in map(json.loads, ROWS.read_text(encoding="utf-8").splitlines())}
    verdicts = _recorded(demo_card.calibration)
    judged = [rows[i] for i in sorted(verdicts)]
    samples = [Sample(id=r["id"], input=_prompt(r), metadata={"segment": r["segment"]},
                      target="Every claim of the answer is supported by the sources.")
               for r in judged]

    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        text = _text(messages)
        (row,) = [r for r in judged if _prompt(r) == text]
        return _reply(row["answer"], text)

    def grade(messages: list[Any], *_: Any) -> ModelOutput:
        # The grading prompt holds the task (sources, question) and the submission.
        text = _text(messages)
        (row,) = [r for r in judged if _prompt(r) in text and r["answer"] in text]
        return _reply(f"The claims were checked.\nGRADE: {GRADE[verdicts[row['id']]]}", text)

    system = get_model("mockllm/model", custom_outputs=answer, memoize=False)
    grader = get_model("mockllm/model", custom_outputs=grade, memoize=False)
    return samples, system, grader


@pytest.fixture(scope="module")
def log(replay: tuple[list[Sample], Any, Any], demo_card: DemoCard,
        tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """One eval, the judge wrapped twice: with the bar 0.6 and with the bar 0.7."""
    samples, system, grader = replay
    judge = model_graded_qa(partial_credit=True, model=grader)
    config_id = load_card(demo_card.card).judge.config_id
    task = Task(dataset=samples, scorer=[
        calibrated(judge, demo_card.card, config_id=config_id, min_pass_rate=bar,
                   name=f"calibrated_{name}") for bar, name in ((0.6, "60"), (0.7, "70"))])
    (result,) = eval(task, model=system, log_dir=str(tmp_path_factory.mktemp("inspect")),
                     display="none", log_format="json")
    assert result.status == "success", result.error
    return result


def test_an_inspect_eval_reports_and_gates_on_the_corrected_pass_rate(
        log: EvalLog, demo_card: DemoCard) -> None:
    expected = score(demo_card.card, demo_card.calibration)
    assert log.results is not None
    metrics = {s.name: {name: m.value for name, m in s.metrics.items()}
               for s in log.results.scores}
    c, o = expected.corrected, expected.observed
    common = {"corrected": c.estimate, "low": c.low, "high": c.high, "n": 91.0,
              "observed": o.estimate, "observed_low": o.low, "observed_high": o.high}
    assert metrics["calibrated_60"] == pytest.approx({**common, "passed": 1.0}, abs=1e-12)
    assert metrics["calibrated_70"] == pytest.approx({**common, "passed": 0.0}, abs=1e-12)
    assert (round(c.estimate, 3), round(c.low, 3), round(c.high, 3)) == (0.673, 0.640, 0.685)

    # The log, read back from its file, gates a CI step with the same call.
    stored = read_eval_log(log.location)
    config_id = load_card(demo_card.card).judge.config_id
    decision = gate_log(stored, demo_card.card, min_pass_rate=0.6, config_id=config_id,
                        scorer_name="calibrated_60")
    assert decision.passed
    assert decision.reason == ("lower 95% bound 0.640 >= 0.6: corrected pass rate 0.673 "
                               "[0.640, 0.685] over 91 verdicts")
    missed = gate_log(stored, demo_card.card, min_pass_rate=0.7, config_id=config_id,
                      scorer_name="calibrated_70")
    assert not missed.passed and missed.reason.startswith("lower 95% bound 0.640 < 0.7")


def test_grades_of_an_undeclared_judge_are_refused(log: EvalLog, demo_card: DemoCard) -> None:
    """Without config_id the grades cannot be checked against the card's judge config."""
    from judges.outputs.gate import VerdictsFileError

    with pytest.raises(VerdictsFileError, match=r"column 'config_id': the file has no "
                       r"config_id, so these verdicts cannot be checked"):
        gate_log(log, demo_card.card, min_pass_rate=0.6, scorer_name="calibrated_60")
    unverified = gate_log(log, demo_card.card, min_pass_rate=0.6, allow_unverified=True,
                          scorer_name="calibrated_60")
    assert unverified.passed
    assert unverified.score.warnings[0].startswith("UNVERIFIED: the file has no config_id")
    with pytest.raises(ValueError, match="no sample scored by 'other'"):
        gate_log(log, demo_card.card, min_pass_rate=0.6, scorer_name="other")
    # The wrapper refuses up front, before an eval runs for nothing.
    judge = model_graded_qa(partial_credit=True, model="mockllm/model")
    with pytest.raises(ValueError, match=r"give config_id='b2:1967089ffe21956c2b7a4d04596781e0'"):
        calibrated(judge, demo_card.card)
    with pytest.raises(ValueError, match=r"config_id 'b2:0+' is not the card's"):
        calibrated(judge, demo_card.card, config_id="b2:" + "0" * 32)
