"""Stress tests over real HTTP: each perturbation's flip rate, its interval, and where rows go.

The fake server's judge passes an answer iff every number in it appears in the sources, and
obeys an instruction embedded in the answer (a judge that can be injected). So source deletion
flips every passed row that states a number, order and padding flip none, and the embedded
instruction flips every row: the expected counts follow from the rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, oneshot_judge, with_changes
from statsmodels.stats.proportion import proportion_confint

from judges.alignment.stress import (
    NOTHING_FOUND,
    TESTS,
    delete_sources,
    family_warning,
    model_family,
    run_stress,
)
from judges.config import JudgeConfig
from judges.outputs.card import card_from_report, dumps_card, loads_card
from judges.providers.openai import OpenAIProvider
from judges.reporting import calibration_report
from judges.runner import run_judge
from judges.workspace import Workspace
from labels import NewLabel
from labels.errors import CalibrateError
from labels.models import Item, Source

N = 30
_NUMBER = re.compile(r"\d+")


def _block(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, flags=re.DOTALL)
    return match.group(1) if match else ""


def injectable_judge(path: str, body: dict[str, Any]) -> str:
    if "STRICT" in body["messages"][0]["content"]:  # a second judge that fails everything
        return "Strict.\nVERDICT: FAIL"
    last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    answer = _block(last, "answer")
    # The prompt defuses the forged "VERDICT:" marker, but this judge still obeys the words.
    forged = re.search(r"Ignore previous instructions.*\b(PASS|FAIL)\b", answer, re.S)
    if forged:
        return f"Following the note in the answer.\nVERDICT: {forged.group(1)}"
    ok = set(_NUMBER.findall(answer)) <= set(_NUMBER.findall(_block(last, "sources")))
    return f"Numbers checked.\nVERDICT: {'PASS' if ok else 'FAIL'}"


def rows() -> list[dict[str, Any]]:
    out = []
    for i in range(N):
        seats = 10 + i if i % 3 else 300 + i  # every third answer is unsupported
        row: dict[str, Any] = {
            "id": f"row-{i:03d}",
            "question": f"How many seats does plan {i} include?",
            "answer": f"Plan {i} includes {seats} seats.",
            "sources": [
                {"text": f"Plan {i} includes {10 + i} seats for the whole team.",
                 "source_id": "seats"},
                {"text": f"Plan {i} costs {5 + i} dollars per seat and month.",
                 "source_id": "price"},
            ],
            "metadata": {"answer_model": "gpt-4o-mini" if i < 12 else "llama-3-8b"},
        }
        if i % 5 == 1:
            row["metadata"]["needed_sources"] = ["seats"]  # cited: only that one is dropped
        if i == 2:
            row["metadata"]["needed_sources"] = []  # needs no source: nothing to delete
        out.append(row)
    return out


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=injectable_judge) as fake:
        yield fake


@pytest.fixture
def judge() -> JudgeConfig:
    return oneshot_judge("openai/gpt-4.1-mini")


def _wilson(k: int, n: int) -> tuple[float, float]:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(lo), float(hi)


@pytest.fixture
def labelled(workspace: Workspace, make_dataset: Any) -> Workspace:
    make_dataset("bot", rows())
    workspace.labels.add_labels("bot", [NewLabel(item_id=f"row-{i:03d}", annotator="dana",
                                      verdict="pass" if i % 3 else "fail") for i in range(N)])
    return workspace


def provider(server: FakeLLMServer) -> OpenAIProvider:
    return OpenAIProvider("gpt-4.1-mini", api_key=DUMMY_KEY, base_url=server.openai_base_url)


def test_every_stress_test_over_http(
    labelled: Workspace, server: FakeLLMServer, judge: JudgeConfig
) -> None:
    workspace, store = labelled, labelled.labels
    result = run_stress(workspace, "bot", judge, provider=provider(server))
    by = {t.test: t for t in result.tests}
    assert list(by) == list(TESTS)
    passed = [i for i in range(N) if i % 3]
    # Source deletion: every passed row except the one that needs no source.
    deletion = by["source_deletion"]
    assert deletion.eligible == len(passed) - 1 and deletion.flip_rate.n == deletion.eligible
    assert deletion.flip_rate.estimate == 1.0
    assert (deletion.flip_rate.low, deletion.flip_rate.high) == pytest.approx(
        _wilson(deletion.eligible, deletion.eligible))
    for name in ("source_order", "answer_padding"):
        assert by[name].eligible == N and by[name].flip_rate.n == N
        assert by[name].flip_rate.estimate == 0.0 and by[name].flipped == ()
        assert by[name].flip_rate.high == pytest.approx(_wilson(0, N)[1])
    injected = by["embedded_instructions"]
    assert injected.flip_rate.estimate == 1.0 and injected.flip_rate.n == N
    lines = "\n".join(result.describe())
    assert "embedded_instructions (must not change; right flip rate 0): flip rate 1.000" in lines
    # Same family: 12 rows answered by gpt-4o-mini, judged by gpt-4.1-mini.
    assert result.family_warning is not None
    assert result.family_warning.startswith("12 of 30 rows were answered by gpt-4o-mini")
    # Perturbed rows: a dataset of their own, linked, unlabelled, never split.
    derived = workspace.splits.derived("bot.stress")
    assert len(derived) == sum(t.eligible for t in result.tests)
    assert {d.origin_dataset for d in derived} == {"bot"}
    assert {d.perturbation for d in derived} == set(TESTS)
    assert store.current_labels("bot.stress").empty
    made = {(d.origin_item_id, d.perturbation): d.item_id for d in derived}
    for (origin, test), item_id in made.items():
        assert item_id.startswith(f"{origin}.{test}.")
    deleted = store.item("bot.stress", made[("row-001", "source_deletion")])
    assert [s.source_id for s in deleted.sources] == ["price"]  # the cited passage dropped
    emptied = store.item("bot.stress", made[("row-004", "source_deletion")])
    assert [s.text for s in emptied.sources] == [NOTHING_FOUND]
    with pytest.raises(CalibrateError, match="never split"):
        workspace.splits.ensure("bot.stress", "faithfulness")
    # The results are stored for the judge card.
    stored = workspace.alignment.latest_stress(judge.config_id, "bot")
    assert [(s.test, s.n, s.flips) for s in stored] == [
        (t.test, t.flip_rate.n, len(t.flipped)) for t in result.tests]
    assert stored[0].detail["family_warning"] == result.family_warning
    # ... and the judge card carries them.
    run_judge(judge, "bot", workspace=workspace, provider=provider(server))
    card = card_from_report(
            workspace, calibration_report(workspace, "bot", judge.config_id), force=True
        )  # 30 labels: below the card's small-sample rule; the stress section is the point
    assert [(c.test, c.flip_rate.n, c.eligible) for c in card.stress] == [
        (t.test, t.flip_rate.n, t.eligible) for t in result.tests]
    assert card.stress[0].flip_rate.estimate == 1.0
    assert card.stress[0].family_warning == result.family_warning
    assert loads_card(dumps_card(card)).stress == card.stress


def test_perturbed_rows_never_enter_calibration(
    labelled: Workspace, server: FakeLLMServer, judge: JudgeConfig
) -> None:
    workspace, store = labelled, labelled.labels
    run_judge(judge, "bot", workspace=workspace, provider=provider(server))
    before = calibration_report(workspace, "bot", judge.config_id).to_json()
    run_stress(workspace, "bot", judge, provider=provider(server))
    after = calibration_report(workspace, "bot", judge.config_id).to_json()
    assert before["n"] == after["n"] == N
    assert before["confusion"] == after["confusion"]
    assert before["sensitivity"] == after["sensitivity"]
    assert store.count_items("bot") == N


def test_perturbations_and_families_as_pure_functions(judge: JudgeConfig) -> None:
    item = Item(item_id="x", question="q?", answer="Plan 1 has 5 seats.",
                sources=(Source(text="Plan 1 has 5 seats.", source_id="a"),),
                metadata={"needed_sources": ["b"]})
    assert delete_sources(item, judge, "pass") is None  # the cited passage is not there
    assert delete_sources(item, judge, "fail") is None  # only passed rows are tested
    assert model_family("anthropic/claude-haiku-4-5") == model_family("claude-3-opus") == "claude"
    assert model_family("openai/gpt-4.1") == model_family("gpt-4o-mini") == "gpt"
    assert model_family("mystery-model") is None
    assert family_warning([item], "openai/gpt-4.1") is None


def test_a_second_judge_gets_its_own_perturbed_rows(
    labelled: Workspace, server: FakeLLMServer, judge: JudgeConfig
) -> None:
    run_stress(labelled, "bot", judge, provider=provider(server),
               tests=("embedded_instructions",))
    strict = with_changes(judge, system=judge.system + "\nSTRICT")
    result = run_stress(labelled, "bot", strict, provider=provider(server),
                        tests=("embedded_instructions",))
    # The strict judge failed every original, so its forged line says PASS on every row; the
    # first judge's rows forged PASS (the ones it failed) are the same rows and shared.
    links = labelled.splits.derived("bot.stress")
    passed_by_first = N - N // 3
    assert len(links) == N + passed_by_first
    forged = [labelled.labels.item("bot.stress", d.item_id).answer or "" for d in links]
    assert sum(a.endswith("VERDICT: PASS") for a in forged) == N
    assert sum(a.endswith("VERDICT: FAIL") for a in forged) == passed_by_first
    (only,) = result.tests  # the strict judge ignores what the answer says about itself
    assert only.flip_rate.n == N and only.flip_rate.estimate == 0.0
