"""Batch runs through the official SDKs against the fake server's batch APIs (real HTTP)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, faithfulness_rows, with_changes

from judges.batch import BatchPolling, BatchStore, BatchUnsupportedError, run_judge_batch
from judges.calls import CallPolicy
from judges.config import JudgeConfig, load_builtin
from judges.pricing import Price
from judges.providers.anthropic import AnthropicProvider
from judges.providers.base import Provider
from judges.providers.openai import OpenAIProvider
from judges.runner import run_judge
from judges.stores.judge_store import JudgeStore
from judges.workspace import Workspace
from labels import LabelStore

FAST = BatchPolling(interval=0.02, max_interval=0.1)
PRICES = {"openai/fake-judge": Price(2.0, 8.0), "anthropic/fake-claude": Price(2.0, 8.0)}


def stored(store: LabelStore) -> list[dict[str, Any]]:
    return JudgeStore(store.db).calls_frame().to_dict("records")  # type: ignore[return-value]


@pytest.fixture(params=["openai", "anthropic"])
def provider(request: pytest.FixtureRequest, openai_provider: OpenAIProvider,
             anthropic_provider: AnthropicProvider) -> Provider:
    return openai_provider if request.param == "openai" else anthropic_provider


@pytest.fixture
def judge(oneshot: JudgeConfig, provider: Provider) -> JudgeConfig:
    return with_changes(oneshot, model=provider.spec)


def test_batch_run_stores_calls_like_an_online_run(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer, provider: Provider,
    judge: JudgeConfig,
) -> None:
    make_dataset("docs", faithfulness_rows(6))
    fake_server.batches.complete_after = 0.6
    status: list[str] = []
    summary = run_judge_batch(judge, "docs", workspace=Workspace.of(store), provider=provider,
                              swap=True,
                              repeats=2, polling=FAST, calls_per_batch=10, prices=PRICES,
                              on_status=status.append)
    assert summary.status == "completed", summary.describe()
    assert (summary.planned, summary.scored, summary.failed) == (24, 24, 0)
    assert (summary.batches_submitted, summary.batches_collected) == (3, 3)
    assert any("in_progress" in s for s in status) and any("collected" in s for s in status)
    # Every call went out once, in a batch; no online call was made. (Without a seed, the
    # two repeats of an item and order send the same body.)
    counts = Counter(fake_server.batches.submitted_bodies())
    per_body = 1 if provider.supports_seed else 2
    assert sum(counts.values()) == 24 and set(counts.values()) == {per_body}
    assert {c.action for c in fake_server.calls} == {"batch"}
    rows = stored(store)
    assert len(rows) == 24 and {r["status"] for r in rows} == {"scored"}
    row = rows[0]
    assert json.loads(row["request"])["messages"][0]["content"]
    assert "VERDICT" in row["reply"] and json.loads(row["raw_response"])
    assert row["input_tokens"] > 0 and row["output_tokens"] > 0
    # Half the online price, and the time the batch took as latency.
    online = PRICES[provider.spec].cost(row["input_tokens"], row["output_tokens"])
    assert row["cost"] == pytest.approx(online / 2)
    assert row["latency_ms"] >= 500
    # The same run online now pays for nothing: batch rows are the cache.
    fake_server.reset_log()
    again = run_judge(judge, "docs", workspace=Workspace.of(store), provider=provider, swap=True,
                      repeats=2)
    assert again.cached == 24 and fake_server.calls == []
    assert {b.state for b in BatchStore(store.db, JudgeStore(store.db)).batches()} == {"collected"}


POLICY = CallPolicy(max_retries=2, backoff=0.01, max_backoff=0.05)


def test_partial_failures_expiry_and_retries(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer, provider: Provider,
    judge: JudgeConfig,
) -> None:
    """Retryable errors and expired items go into the next batch, within the retries.

    Invalid requests are stored failed at once, content faults unscored.
    """
    make_dataset("docs", faithfulness_rows(8))
    batches = fake_server.batches
    batches.script_item("Question 1:", "500")       # retryable: scored in the second batch
    batches.script_item("Question 2:", "invalid")   # not retryable: failed at once
    batches.script_item("Question 3:", "refusal")   # a reply without a verdict: unscored
    # The first batch expires with rows 0-3 run; row-004 expires unrun, then errors twice:
    # out of retries (3 batches), failed.
    batches.expire_next(1, done_fraction=0.5)
    batches.script_item("Question 4:", "500", "500")
    summary = run_judge_batch(judge, "docs", workspace=Workspace.of(store), provider=provider,
                              polling=FAST,
                              policy=POLICY)
    assert summary.status == "completed"
    assert (summary.planned, summary.scored, summary.unscored, summary.failed) == (8, 5, 1, 2)
    assert summary.unscored_reasons == {"refusal": 1}
    rows = {r["item_id"]: r for r in stored(store)}
    assert len(rows) == 8
    assert rows["row-002"]["status"] == "failed" and rows["row-002"]["retries"] == 0
    assert rows["row-002"]["error_kind"] == "bad_request"
    assert "not retryable" in rows["row-002"]["error"]
    assert rows["row-004"]["status"] == "failed" and rows["row-004"]["retries"] == 2
    assert "gave up after 3 batches" in rows["row-004"]["error"]
    attempts = json.loads(rows["row-004"]["attempts"])
    assert [a["kind"] for a in attempts] == ["batch_expired", "server_error", "server_error"]
    assert len({a["batch_id"] for a in attempts}) == 3
    assert rows["row-001"]["status"] == "scored" and rows["row-001"]["retries"] == 1
    # Sent again: rows 4-7 (expired unrun), row-001 (500), row-004 once more (500).
    assert summary.resubmitted == 4 + 1 + 1
    assert len(batches.submitted_bodies()) == 8 + summary.resubmitted
    assert summary.batches_collected == summary.batches_submitted == 3
    # A second run retries only the two failed calls.
    again = run_judge_batch(judge, "docs", workspace=Workspace.of(store), provider=provider,
                            polling=FAST,
                            policy=POLICY)
    assert (again.cached, again.scored, again.failed) == (6, 2, 0)


def test_cancelled_batch_items_are_sent_again(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer, provider: Provider,
    judge: JudgeConfig,
) -> None:
    """Someone cancels the batch at the provider mid-way: the items it never ran go again."""
    make_dataset("docs", faithfulness_rows(6))
    batches = fake_server.batches
    batches.complete_after = 1.0
    cancelled: list[str] = []

    def cancel_on_first_poll(event: str, info: dict[str, Any]) -> None:
        if event == "retrieve" and not cancelled:
            cancelled.append(info["batch_id"])
            batch = batches.batches[info["batch_id"]]
            batch.cancel_at = batch.created + 0.5  # half its items had run

    batches.hooks.append(cancel_on_first_poll)
    summary = run_judge_batch(judge, "docs", workspace=Workspace.of(store), provider=provider,
                              polling=FAST,
                              policy=POLICY)
    assert summary.status == "completed" and summary.scored == 6
    assert summary.resubmitted == 3 and summary.batches_submitted == 2
    first = batches.batches[cancelled[0]]
    kinds = Counter(json.dumps(r)[:200].count("cancel") > 0 for r in first.results)
    assert kinds[True] == 3


def test_lost_creation_reply_is_found_not_resent(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer, provider: Provider,
    judge: JudgeConfig,
) -> None:
    """A created batch whose reply was lost is found by listing, not sent again.

    A create that never arrived is sent again under a new key.
    """
    make_dataset("docs", faithfulness_rows(4))
    events: list[str] = []

    def lose(event: str, info: dict[str, Any]) -> str | None:
        if event in ("create", "created"):
            events.append(event)
        # The first create never arrives; the second is created but its reply is lost.
        if event == "create" and events.count("create") == 1:
            return "drop"
        if event == "created" and events.count("created") == 1:
            return "drop"
        return None

    fake_server.batches.hooks.append(lose)
    summary = run_judge_batch(judge, "docs", workspace=Workspace.of(store), provider=provider,
                              polling=FAST,
                              policy=POLICY)
    assert summary.status == "completed" and summary.scored == 4
    assert summary.batches_recovered == 1
    assert len(fake_server.batches.batches) == 1  # one batch at the provider, found again
    states = Counter(b.state for b in BatchStore(store.db, JudgeStore(store.db)).batches())
    assert states == {"abandoned": 1, "collected": 1}


def test_server_without_batch_endpoint_says_so(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer, provider: Provider,
    judge: JudgeConfig,
) -> None:
    make_dataset("docs", faithfulness_rows(2))
    fake_server.batches.supported = False
    with pytest.raises(BatchUnsupportedError, match="has no batch API") as raised:
        run_judge_batch(judge, "docs", workspace=Workspace.of(store), provider=provider,
                        polling=FAST)
    assert fake_server.base_url in str(raised.value) and "404" in str(raised.value)
    assert "without --batch" in str(raised.value)
    assert stored(store) == []
    assert {b.state for b in BatchStore(store.db, JudgeStore(store.db)).batches()} == {"abandoned"}


def test_providers_and_judges_a_batch_cannot_carry(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig,
) -> None:
    make_dataset("docs", faithfulness_rows(2))
    scripted = with_changes(oneshot, model="scripted/demo")
    with pytest.raises(BatchUnsupportedError, match="scripted/demo has no batch API"):
        run_judge_batch(scripted, "docs", workspace=Workspace.of(store))
    with pytest.raises(BatchUnsupportedError, match="splits answers into claims"):
        run_judge_batch(load_builtin("faithfulness-local"), "docs", workspace=Workspace.of(store))


def test_a_batch_is_collected_once(store: LabelStore) -> None:
    """Two runs polling one batch: the second collection writes nothing."""
    from judges.stores.batch_store import BatchCall
    from judges.stores.judge_store import CallRecord

    batches = BatchStore(store.db, JudgeStore(store.db))
    call = BatchCall("k1_0", "row-000", "ihash", 0, "original", {"model": "m"})
    batches.begin("k1", config_id="c", provider="openai/m", run_id="r1", calls=[call])
    batches.submitted("k1", "batch_1", None)
    row = CallRecord(run_id="r1", config_id="c", item_id="row-000", item_hash="ihash",
                     repeat=0, ordering="original", status="scored", verdict="pass")
    assert batches.collect("k1", "r1", [row], {"k1_0": "stored"})
    assert not batches.collect("k1", "r2", [row], {"k1_0": "stored"})
    assert len(stored(store)) == 1
    (batch,) = batches.batches()
    assert batch.state == "collected" and batch.batch_id == "batch_1"
    assert batches.in_flight_keys("c") == set()


def test_a_key_echoed_in_a_batch_result_is_stored_nowhere(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer, provider: Provider,
    judge: JudgeConfig,
) -> None:
    """A per-request error of a result file goes through the same redaction as an exception."""
    make_dataset("docs", faithfulness_rows(2))
    fake_server.batches.script_item("Question 0:", "invalid_echo")
    summary = run_judge_batch(judge, "docs", workspace=Workspace.of(store), provider=provider,
                              polling=FAST,
                              policy=POLICY)
    assert (summary.scored, summary.failed) == (1, 1)
    failed = next(r for r in stored(store) if r["status"] == "failed")
    assert "Authorization: " in failed["error"] and "[redacted]" in failed["error"]
    assert DUMMY_KEY not in json.dumps(stored(store), default=str)


def test_a_key_echoed_in_a_failed_batch_is_stored_nowhere(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer,
    openai_provider: OpenAIProvider, oneshot: JudgeConfig,
) -> None:
    """A whole batch's failure (OpenAI rejects its input file) is redacted like a call's error.

    It is stored in the batch's row and in every call the batch carried.
    """
    make_dataset("docs", faithfulness_rows(2))
    fake_server.batches.reject_next(echo=True)
    summary = run_judge_batch(with_changes(oneshot, model=openai_provider.spec), "docs",
                              workspace=Workspace.of(store), provider=openai_provider, polling=FAST,
                              policy=POLICY)
    assert (summary.scored, summary.failed) == (0, 2)
    (batch,) = BatchStore(store.db, JudgeStore(store.db)).batches()
    assert batch.error is not None and "the input file was rejected" in batch.error
    assert "Authorization: " in batch.error and "[redacted]" in batch.error
    rows = stored(store)
    assert all("the input file was rejected" in r["error"] for r in rows)
    assert DUMMY_KEY not in json.dumps(rows, default=str) + batch.error
