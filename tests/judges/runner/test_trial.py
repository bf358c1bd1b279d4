"""Trying a judge on a few rows (judges.trial) and the model picker's list (providers.choices).

A trial goes through the real OpenAI SDK to the fake server, makes every call (even ones a run
has stored), compares with the experts' consensus, and writes no config, run or call row.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, faithfulness_rows, with_changes

from judges.config import JudgeConfig
from judges.providers.choices import STAND_IN_SPEC, missing_setting, model_choices
from judges.providers.openai import OpenAIProvider
from judges.providers.scripted import ScriptedProvider
from judges.runner import run_judge
from judges.settings import Settings
from judges.stores.judge_store import JudgeStore
from judges.trial import trial_rows, try_judge
from judges.workspace import Workspace
from labels import LabelStore
from labels.errors import CalibrateError

VERDICTS = ["pass", "pass", "pass", "fail", "pass", "fail", "unsure", "pass"]


@pytest.fixture
def labelled(store: LabelStore, make_dataset: Any) -> LabelStore:
    make_dataset("docs", faithfulness_rows(len(VERDICTS)))
    for n, verdict in enumerate(VERDICTS):
        store.add_label("docs", f"row-{n:03d}", "alice", verdict)
    return store


def stored(store: LabelStore) -> tuple[int, int, int]:
    judges = JudgeStore(store.db)
    return len(judges.configs()), len(judges.runs()), len(judges.calls_frame())


def test_trial_rows_alternate_the_expert_verdicts_and_skip_excluded_and_undecided(
    labelled: LabelStore, oneshot: JudgeConfig,
) -> None:
    # pass rows: 0 1 2 4 7; fail rows: 3 5; row 6 is unsure (nothing to agree with).
    assert trial_rows(labelled, "docs", oneshot, 5) == [
        "row-000", "row-003", "row-001", "row-005", "row-002"]
    assert trial_rows(labelled, "docs", oneshot, 50, exclude={"row-003"}) == [
        "row-000", "row-005", "row-001", "row-002", "row-004", "row-007"]
    with pytest.raises(CalibrateError, match="1 to 50 rows"):
        trial_rows(labelled, "docs", oneshot, 51)
    other = with_changes(oneshot, criterion="correctness")
    with pytest.raises(CalibrateError, match="no rows the experts labelled pass or fail"):
        trial_rows(labelled, "docs", other, 3)


def test_a_trial_calls_the_provider_for_every_row_and_stores_nothing(
    labelled: LabelStore, oneshot: JudgeConfig, fake_server: FakeLLMServer,
) -> None:
    config = with_changes(oneshot, swap=True)
    # A stored run of the same config: a trial still makes its own calls, and adds no row.
    run_judge(config, "docs", workspace=Workspace.of(labelled), provider=ScriptedProvider("demo"),
              item_ids=["row-000"])
    before = stored(labelled)
    ids = trial_rows(labelled, "docs", config, 4)
    provider = OpenAIProvider("fake-judge", api_key=DUMMY_KEY,
                              base_url=fake_server.openai_base_url)
    trial = try_judge(config, "docs", ids, workspace=Workspace.of(labelled), provider=provider)
    assert stored(labelled) == before
    assert trial.calls == len(fake_server.calls) == 8  # 4 rows x 2 orders, row-000 included
    assert [r.item_id for r in trial.rows] == ids
    assert [r.expert for r in trial.rows] == ["pass", "fail", "pass", "fail"]
    assert all(r.judge in ("pass", "fail", "unsure", "unscored") for r in trial.rows)
    assert trial.n_agree == sum(r.judge == r.expert for r in trial.rows)
    assert trial.agreement.n == sum(r.judge in ("pass", "fail") for r in trial.rows)
    assert not trial.stand_in and trial.model == "openai/fake-judge"
    assert f"{trial.n_agree} of {trial.n_judged} rows agree with the experts" in trial.describe()


def test_failed_calls_leave_rows_without_a_verdict_and_out_of_the_rate(
    labelled: LabelStore, oneshot: JudgeConfig, fake_server: FakeLLMServer,
) -> None:
    from judges.calls import CallPolicy

    fake_server.script_for("plan 0 include", "500")  # row-000's question
    provider = OpenAIProvider("fake-judge", api_key=DUMMY_KEY,
                              base_url=fake_server.openai_base_url)
    trial = try_judge(oneshot, "docs", ["row-000", "row-003"], workspace=Workspace.of(labelled),
                      provider=provider, policy=CallPolicy(max_retries=0, backoff=0.01))
    first = trial.rows[0]
    assert first.judge == "unscored" and not first.agrees and first.problem
    assert trial.failed == 1 and trial.agreement.n == 1
    assert "1 of 2 rows got no verdict to compare; 1 of 2 calls failed" in trial.describe()


def test_model_choices_name_providers_by_the_presence_of_a_key_never_the_key() -> None:
    key = "sk-never-shown-0123456789"
    nothing = Settings()  # the tests' environment holds no key (conftest's _isolated_env)
    assert [c.spec for c in model_choices(nothing)] == [STAND_IN_SPEC]
    (stand_in,) = model_choices(nothing)
    assert stand_in.stand_in and stand_in.ready and "not a model" in stand_in.label
    current = model_choices(nothing, current="anthropic/claude-haiku-4-5")[0]
    assert not current.ready and "set ANTHROPIC_API_KEY" in current.label
    choices = model_choices(Settings(openai_api_key=key, local_base_url="http://127.0.0.1:9"))
    specs = [c.spec for c in choices]
    assert "openai/gpt-4o-mini" in specs and specs[-1] == STAND_IN_SPEC
    assert not [s for s in specs if s.startswith("anthropic/")]
    assert any(s.startswith("local/") for s in specs)
    assert all(c.ready for c in choices)
    assert not any(key in c.label for c in choices)
    assert missing_setting("nowhere/x", nothing) == (
        "unknown provider 'nowhere' (known: anthropic, local, openai, scripted)")


def test_a_pairwise_trial_compares_with_the_most_common_vote(
    store: LabelStore, make_dataset: Any,
) -> None:
    from judge_helpers import pairwise_rows

    from judges.config import builtin_names, load_builtin

    make_dataset("pairs", pairwise_rows(4))
    name = next(n for n in builtin_names() if load_builtin(n).kind == "pairwise")
    config = with_changes(load_builtin(name), model="scripted/demo")
    votes = {"pair-000": ["a", "a", "b"], "pair-001": ["b"], "pair-002": ["a", "b"],
             "pair-003": ["tie"]}
    for item_id, chosen in votes.items():
        for k, vote in enumerate(chosen):
            store.add_label("pairs", item_id, f"ann{k}", vote, criterion=config.criterion)
    # pair-002's votes are split evenly: no verdict to agree with, so it is not tried.
    ids = trial_rows(store, "pairs", config, 4)
    assert ids == ["pair-000", "pair-001", "pair-003"]
    trial = try_judge(config, "pairs", ids, workspace=Workspace.of(store),
                      provider=ScriptedProvider("demo"))
    assert [r.expert for r in trial.rows] == ["a", "b", "tie"]
    assert all(r.judge in ("a", "b", "tie", "unscored") for r in trial.rows)
    assert stored(store) == (0, 0, 0)
