"""Alignment over real HTTP: the OpenAI SDK against the fake server plays judge and proposer.

The judge's replies follow a rule (``align_data.Scripted``), so every expected number below
follows from the rows and the split, and is computed here with statsmodels and scikit-learn.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from align_data import DATASET, N, Scripted, rows, tricky, truth
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, oneshot_judge
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from judges.alignment.dev import dev_disagreements
from judges.alignment.evaluate import TEST_REUSE_LIMIT, evaluate_revisions
from judges.alignment.propose import (
    CRITERIA_HEADING,
    LeakError,
    ProposalError,
    check_no_test_text,
    propose_revision,
)
from judges.config import JudgeConfig
from judges.providers.openai import OpenAIProvider
from judges.runner import run_judge
from judges.stores.alignment_store import AlignStore
from judges.stores.judge_store import JudgeStore
from judges.workspace import Workspace
from labels import LabelStore, NewLabel
from labels.models import Item
from labels.stores.split_store import SplitStore


@pytest.fixture
def scripted() -> Scripted:
    return Scripted()


@pytest.fixture
def server(scripted: Scripted) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=scripted) as fake:
        yield fake


@pytest.fixture
def base() -> JudgeConfig:
    return oneshot_judge("openai/fake-judge")


@pytest.fixture
def labelled(store: LabelStore, make_dataset: Any) -> LabelStore:
    make_dataset(DATASET, rows())
    store.add_labels(DATASET, [
        NewLabel(item_id=f"row-{i:03d}", annotator="dana", verdict=truth(i),
                 note="the seat count is not in the sources" if truth(i) == "fail" else "",
                 failure_tags=("contradiction",) if truth(i) == "fail" else ())
        for i in range(N)
    ])
    return store


def provider(server: FakeLLMServer) -> OpenAIProvider:
    return OpenAIProvider("fake-judge", api_key=DUMMY_KEY, base_url=server.openai_base_url)


def _run_on_split(store: LabelStore, config: JudgeConfig, server: FakeLLMServer) -> None:
    split = SplitStore(store.db, store).ensure(DATASET, "faithfulness")
    run_judge(config, DATASET, workspace=Workspace.of(store), provider=provider(server),
              item_ids=split.ids("dev") + split.ids("test"))


def test_disagreement_list_shows_dev_rows_only(
    labelled: LabelStore, server: FakeLLMServer, base: JudgeConfig
) -> None:
    _run_on_split(labelled, base, server)
    view = dev_disagreements(Workspace.of(labelled), DATASET, base)
    dev, test = set(view.split.ids("dev")), set(view.split.ids("test"))
    assert dev and test and dev.isdisjoint(test) and len(dev | test) == N
    # The current judge passes everything: the disagreements are the dev rows experts failed.
    expected = sorted(i for i in dev if truth(int(i[4:])) == "fail")
    assert [d.item_id for d in view.disagreements] == expected
    assert all(d.human == "fail" and d.judge == "pass" for d in view.disagreements)
    assert view.disagreements[0].failure_tags == ("contradiction",)
    assert "seat count" in view.disagreements[0].note


def test_proposal_round_trip_over_http_never_shows_a_test_row(
    labelled: LabelStore, server: FakeLLMServer, scripted: Scripted, base: JudgeConfig
) -> None:
    _run_on_split(labelled, base, server)
    proposal = propose_revision(Workspace.of(labelled), DATASET, base, proposer=provider(server))
    split = SplitStore(labelled.db, labelled).ensure(DATASET, "faithfulness")
    items = {i.item_id: i for i in labelled.items(DATASET)}
    # The proposer saw dev disagreements only, over HTTP.
    (prompt,) = scripted.proposer_prompts
    shown = re.findall(r'<row id="([^"]+)">', prompt)
    assert shown == [d.item_id for d in proposal.view.disagreements]
    assert set(shown) <= set(split.ids("dev"))
    for test_id in split.ids("test"):
        assert f'"{test_id}"' not in prompt and items[test_id].answer not in prompt
    # A new revision with its own content hash, criteria in the system prompt, a dev example
    # answered with the expert's verdict.
    new = proposal.config
    assert new.config_id != base.config_id and new.revision == base.revision + 1
    assert CRITERIA_HEADING in new.system and "number the sources do not have" in new.system
    (shot,) = new.few_shot
    assert shown[0] in proposal.examples
    assert items[shown[0]].answer in shot.user and shot.assistant.endswith("VERDICT: FAIL")
    for test_id in split.ids("test"):
        assert items[test_id].answer not in new.canonical_json()
    assert f"+{CRITERIA_HEADING}" in proposal.diff.replace("  ", "")
    assert [d.item_id for d in proposal.addressed] == shown
    stored = AlignStore(labelled.db).proposal(proposal.proposal_id)
    assert stored.config_id == new.config_id and stored.addressed == shown
    assert JudgeStore(labelled.db).stored_config(new.config_id).config == new
    # Nothing adopted by proposing.
    assert AlignStore(labelled.db).adopted(DATASET, "faithfulness", base.name) is None


def test_a_proposal_quoting_a_test_row_or_naming_one_is_refused_and_nothing_is_stored(
    labelled: LabelStore, server: FakeLLMServer, scripted: Scripted, base: JudgeConfig
) -> None:
    _run_on_split(labelled, base, server)
    split = SplitStore(labelled.db, labelled).ensure(DATASET, "faithfulness")
    test_id = split.ids("test")[0]
    test_answer = labelled.item(DATASET, test_id).answer
    configs_before = len(JudgeStore(labelled.db).configs())
    scripted.proposal = {"criteria": f"Pass answers like: {test_answer}", "examples": [],
                         "addresses": []}
    with pytest.raises(LeakError, match=f"test row '{test_id}'"):
        propose_revision(Workspace.of(labelled), DATASET, base, proposer=provider(server))
    scripted.proposal = {"criteria": "Check numbers.", "examples": [{"item_id": test_id}],
                         "addresses": []}
    with pytest.raises(ProposalError, match="not shown"):
        propose_revision(Workspace.of(labelled), DATASET, base, proposer=provider(server))
    scripted.proposal = {"no": "criteria"}
    with pytest.raises(ProposalError, match="no JSON object"):
        propose_revision(Workspace.of(labelled), DATASET, base, proposer=provider(server))
    assert len(JudgeStore(labelled.db).configs()) == configs_before
    assert AlignStore(labelled.db).proposals(DATASET, "faithfulness") == []


def _wilson(k: int, n: int) -> tuple[float, float]:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(lo), float(hi)


def test_revision_on_test_rows_numbers_mcnemar_certification_and_counting(
    labelled: LabelStore, server: FakeLLMServer, base: JudgeConfig
) -> None:
    _run_on_split(labelled, base, server)
    proposal = propose_revision(Workspace.of(labelled), DATASET, base, proposer=provider(server))
    result = evaluate_revisions(Workspace.of(labelled), DATASET, base, proposal.config,
                                provider_for=lambda c: provider(server))
    split = SplitStore(labelled.db, labelled).ensure(DATASET, "faithfulness")
    test = [int(i[4:]) for i in split.ids("test")]
    human = [truth(i) for i in test]
    candidate = ["pass" if tricky(i) else truth(i) for i in test]
    m1 = human.count("pass")
    m0 = len(test) - m1
    tn = sum(h == c == "fail" for h, c in zip(human, candidate, strict=True))
    nums = result.numbers[("candidate", "test")]
    assert nums.n_rows == len(test) and nums.rates.sensitivity.n == m1
    assert nums.rates.sensitivity.estimate == 1.0
    assert nums.rates.specificity.estimate == pytest.approx(tn / m0)
    assert (nums.rates.specificity.low, nums.rates.specificity.high) == pytest.approx(
        _wilson(tn, m0))
    assert nums.kappa.estimate == pytest.approx(cohen_kappa_score(human, candidate))
    assert nums.kappa.low is not None and nums.kappa.low < nums.kappa.estimate
    current = result.numbers[("current", "test")]
    assert current.rates.specificity.estimate == 0.0 and current.kappa.refused
    # Exact McNemar on the same test rows: only the fail rows the candidate gets right differ.
    assert (result.mcnemar.n_a_only, result.mcnemar.n_b_only) == (tn, 0)
    expected_p = mcnemar(np.array([[m1, tn], [0, m0 - tn]]), exact=True).pvalue
    assert result.mcnemar.pvalue == pytest.approx(expected_p)
    # Certification on test rows only: the candidate's specificity interval decides it.
    assert result.certification.status in ("not certified", "undecided")
    assert result.certification_current.status == "not certified"
    text = "\n".join(result.describe())
    assert f"p = {expected_p:.4f}" in text and "held out while tuning" in text
    # Counting: two revisions seen by test so far, no warning; a third one warns.
    assert (result.test_evaluations, result.test_revisions, result.warning) == (2, 2, None)
    again = evaluate_revisions(Workspace.of(labelled), DATASET, base, proposal.config,
                               provider_for=lambda c: provider(server))
    assert (again.test_evaluations, again.test_revisions, again.warning) == (4, 2, None)
    third = proposal.config.with_revision(description="a third revision")
    last = evaluate_revisions(Workspace.of(labelled), DATASET, proposal.config, third,
                              provider_for=lambda c: provider(server))
    assert (last.test_evaluations, last.test_revisions) == (6, TEST_REUSE_LIMIT)
    assert last.warning is not None and "fresh test set" in last.warning
    assert "WARNING:" in "\n".join(last.describe())


def test_the_leak_check_blames_only_new_test_text() -> None:
    test_row = Item(item_id="t1", question="What does the Team plan include?",
                    answer="Team includes 10 GB of storage per paid seat.")
    dev_row = Item(item_id="d1", question="What does the Team plan include?",
                   answer="Team has unlimited pages for everyone.")
    # A question asked in both halves is dev text; the answer only test has is not.
    check_no_test_text("Rows like: What does the Team plan include?", [test_row], [dev_row],
                       where="x")
    with pytest.raises(LeakError, match="the answer of test row 't1' appears in x"):
        check_no_test_text("e.g. team includes 10 GB  of storage per paid seat.", [test_row],
                           [dev_row], where="x")
    # Text the owner's revision already had is not the proposal's doing.
    check_no_test_text(test_row.answer or "", [test_row], [dev_row], where="x",
                       before=f"old prompt: {test_row.answer}")
    short = Item(item_id="t2", question="Why?", answer="Yes.")
    check_no_test_text("Why? Yes.", [short], [], where="x")
