"""The runner: item × repeat × order, faults, retries, cache/resume, cancellation, threads."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from typing import Any

import pytest
from fake_llm_server import CONTENT_FAULTS, TRANSIENT, FakeLLMServer
from judge_helpers import DUMMY_KEY, faithfulness_rows, pairwise_rows, with_changes

from judges.calls import CallPolicy
from judges.config import JudgeConfig, load_builtin
from judges.pricing import Price
from judges.prompts import RenderError
from judges.providers.anthropic import AnthropicProvider
from judges.providers.base import Provider, ProviderError
from judges.providers.openai import OpenAIProvider
from judges.providers.scripted import ScriptedProvider
from judges.run_plan import plan_run
from judges.runner import RunSummary, run_judge
from judges.stores.judge_store import JudgeStore
from judges.verdicts import judge_verdicts
from judges.workspace import Workspace
from labels import LabelStore
from labels.errors import CalibrateError


def bodies(server: FakeLLMServer) -> Counter[str]:
    """Request bodies that got a reply (retried faults excluded)."""
    return Counter(c.body_key() for c in server.calls if c.action in ("ok", *CONTENT_FAULTS))


def calls(store: LabelStore) -> list[dict[str, Any]]:
    frame = JudgeStore(store.db).calls_frame()
    return frame.to_dict("records")  # type: ignore[return-value]


def assert_adds_up(summary: RunSummary) -> None:
    assert (summary.cached + summary.scored + summary.unscored + summary.failed
            + summary.not_run) == summary.planned


def test_builtin_faithfulness_with_swap_and_three_repeats(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer,
    anthropic_provider: AnthropicProvider,
) -> None:
    """The done-when run: built-in claim-split faithfulness, swap, 3 repeats, real SDK + HTTP."""
    make_dataset("docs", faithfulness_rows(5, sources=3))
    config = load_builtin("faithfulness")
    progress: list[tuple[int, int]] = []
    summary = run_judge(config, "docs", workspace=Workspace.of(store), provider=anthropic_provider,
                        swap=True,
                        repeats=3, concurrency=4,
                        on_progress=lambda done, total, s: progress.append((done, total)))
    assert summary.status == "completed" and summary.planned == 5 * 3 * 2
    assert summary.scored == 30 and summary.failed == summary.unscored == 0
    assert_adds_up(summary)
    assert progress[0] == (0, 30) and progress[-1] == (30, 30)
    assert [d for d, _ in progress] == sorted(d for d, _ in progress)
    # Every (item, order) prompt went out exactly 3 times (one per repeat), nothing more.
    assert sorted(bodies(fake_server).values()) == [3] * 10
    frame = judge_verdicts(Workspace.of(store), "docs", "faithfulness")
    assert len(frame) == 30 and set(frame["verdict"]) == {"pass"}
    assert list(frame.columns) == ["item_id", "repeat", "order", "verdict", "reasoning",
                                   "unscored_reason", "run_id", "config_id"]
    # A second run pays for nothing.
    fake_server.reset_log()
    again = run_judge(config, "docs", workspace=Workspace.of(store), provider=anthropic_provider,
                      swap=True,
                      repeats=3)
    assert again.cached == 30 and again.provider_requests == 0 and fake_server.calls == []


def test_every_call_is_stored_with_prompt_reply_and_no_secret(
    store: LabelStore, make_dataset: Any, openai_provider: OpenAIProvider, oneshot: JudgeConfig,
) -> None:
    make_dataset("docs", faithfulness_rows(2))
    run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=openai_provider, swap=True,
              repeats=2)
    rows = calls(store)
    assert len(rows) == 8
    for row in rows:
        request = json.loads(row["request"])
        assert request["messages"][-1]["content"].startswith("<question>")
        assert request["model"] == "fake-judge" and request["max_tokens"] == 600
        assert row["reply"].endswith("VERDICT: PASS") and row["verdict"] == "pass"
        assert json.loads(row["raw_response"])["choices"]
        assert row["input_tokens"] > 0 and row["output_tokens"] > 0 and row["latency_ms"] > 0
        assert row["item_hash"].startswith("i") and row["status"] == "scored"
    # Repeat r is sampled with seed + r, so repeats are distinct requests.
    assert sorted({json.loads(r["request"])["seed"] for r in rows}) == [7, 8]
    with store.db.cursor() as cur:
        dump = cur.execute(
            "SELECT string_agg(CAST(t AS VARCHAR), ' ') FROM judge_calls t").fetchall()
        runs = cur.execute(
            "SELECT string_agg(CAST(r AS VARCHAR), ' ') FROM judge_runs r").fetchall()
    assert DUMMY_KEY not in dump[0][0] and DUMMY_KEY not in runs[0][0]
    assert "authorization" not in dump[0][0].lower()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_every_fault_kind_ends_as_a_retry_or_an_unscored_row(
    kind: str, store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer,
    fast_policy: CallPolicy,
) -> None:
    faults = [*TRANSIENT, "529", *CONTENT_FAULTS]
    rows = faithfulness_rows(len(faults) + 2)
    make_dataset("docs", rows)
    for fault, row in zip(faults, rows, strict=False):
        fake_server.script_for(row["question"], fault)
    provider: Provider = (
        OpenAIProvider("f", api_key=DUMMY_KEY, base_url=fake_server.openai_base_url)
        if kind == "openai"
        else AnthropicProvider("f", api_key=DUMMY_KEY, base_url=fake_server.anthropic_base_url)
    )
    summary = run_judge(load_builtin("faithfulness-oneshot"), "docs", workspace=Workspace.of(store),
                        provider=provider, policy=fast_policy, concurrency=4)
    assert_adds_up(summary)
    by_item = {r["item_id"]: r for r in calls(store)}
    for fault, row in zip(faults, rows, strict=False):
        stored = by_item[row["id"]]
        if fault in CONTENT_FAULTS:
            reason = {"empty": "empty_reply", "refusal": "refusal", "truncated": "truncated"}
            assert stored["status"] == "unscored", fault
            assert stored["unscored_reason"] == reason[fault] and stored["retries"] == 0
        else:
            assert stored["status"] == "scored" and stored["retries"] == 1, fault
            (attempt,) = json.loads(stored["attempts"])
            assert attempt["kind"] in ("rate_limit", "server_error", "overloaded",
                                       "connection", "timeout", "malformed_response")
    transient = len(faults) - len(CONTENT_FAULTS)
    assert summary.retried_ok == transient and summary.retries == transient
    assert summary.unscored == len(CONTENT_FAULTS) and summary.failed == 0
    assert summary.scored == len(rows) - len(CONTENT_FAULTS)
    assert summary.unscored_reasons == {"empty_reply": 1, "refusal": 1, "truncated": 1}
    assert summary.provider_requests == len(rows) + transient


def test_persistent_faults_fail_with_their_reason_then_resume(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer,
    openai_provider: OpenAIProvider, oneshot: JudgeConfig,
) -> None:
    rows = faithfulness_rows(4)
    make_dataset("docs", rows)
    fake_server.script_for(rows[0]["question"], *["503"] * 3)
    fake_server.script_for(rows[1]["question"], *["reset"] * 3)
    policy = CallPolicy(timeout=1, max_retries=2, backoff=0.01)
    summary = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=openai_provider,
                        policy=policy)
    assert summary.failed == 2 and summary.scored == 2 and summary.retries == 4
    assert summary.failure_kinds == {"server_error": 1, "connection": 1}
    failed = [r for r in calls(store) if r["status"] == "failed"]
    assert all("gave up after 3 attempts" in r["error"] for r in failed)
    frame = judge_verdicts(Workspace.of(store), "docs", "faithfulness-oneshot")
    assert sorted(frame["unscored_reason"].dropna()) == ["failed:connection",
                                                         "failed:server_error"]
    # The next run retries only the failed calls; the stored replies are not paid again.
    fake_server.reset_log()
    resumed = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=openai_provider,
                        policy=policy)
    assert resumed.cached == 2 and resumed.scored == 2 and len(fake_server.calls) == 2
    assert set(judge_verdicts(Workspace.of(store), "docs",
                              "faithfulness-oneshot")["verdict"]) == {"pass"}


def test_not_retryable_errors_fail_at_once(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(1))
    provider = ScriptedProvider("x", [ProviderError("HTTP 401: bad key", kind="auth", status=401)])
    summary = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider)
    assert summary.failed == 1 and summary.retries == 0 and len(provider.requests) == 1
    assert "not retryable" in calls(store)[0]["error"]


def test_retry_after_is_honoured(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(1))
    with FakeLLMServer(retry_after=0.3) as server:
        server.script("429")
        provider = OpenAIProvider("f", api_key=DUMMY_KEY, base_url=server.openai_base_url)
        summary = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider,
                            policy=CallPolicy(backoff=0.001))
        first, second = server.calls
    assert summary.retries == 1 and summary.scored == 1
    assert second.at - first.at >= 0.3
    assert json.loads(calls(store)[0]["attempts"])[0]["retry_after"] == pytest.approx(0.3)


def _failing_call(store: LabelStore, oneshot: JudgeConfig, scenario: str) -> float:
    """Run one call that must fail at once; check how it failed; return the seconds it took.

    ``retry_after_above_limit``: the server asks to wait an hour (the call fails instead of
    sleeping); ``timeout``: a 5 s call under a 0.1 s timeout (any provider is timed out).
    """
    if scenario == "retry_after_above_limit":
        provider = ScriptedProvider("x", [ProviderError("slow down", kind="rate_limit",
                                                        retryable=True, retry_after=3600)])
        policy = None
    else:
        provider = ScriptedProvider("x", latency=5)
        policy = CallPolicy(timeout=0.1, max_retries=1, backoff=0.01)
    started = time.monotonic()
    summary = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider,
                        policy=policy)
    elapsed = time.monotonic() - started
    if scenario == "retry_after_above_limit":
        assert summary.failed == 1
        assert "3600 s" in calls(store)[0]["error"]
    else:
        assert summary.failure_kinds == {"timeout": 1} and summary.retries == 1
    return elapsed


FAILING_CALLS = ["retry_after_above_limit", "timeout"]


@pytest.mark.parametrize("scenario", FAILING_CALLS)
def test_a_call_over_the_limits_fails_with_its_reason(
    scenario: str, store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(1))
    _failing_call(store, oneshot, scenario)


@pytest.mark.slow  # wall-clock bounds: shared machines make them flaky in the default run
@pytest.mark.parametrize(("scenario", "seconds"), list(zip(FAILING_CALLS, [5, 3], strict=True)))
def test_failing_calls_return_at_once(
    scenario: str, seconds: float, store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(1))
    assert _failing_call(store, oneshot, scenario) < seconds


def test_stop_then_resume_without_duplicate_calls(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer,
    openai_provider: OpenAIProvider, oneshot: JudgeConfig,
) -> None:
    make_dataset("docs", faithfulness_rows(10))
    fake_server.latency = 0.02
    stop = threading.Event()

    def progress(done: int, total: int, summary: RunSummary) -> None:
        if done >= 12:
            stop.set()

    first = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=openai_provider,
                      swap=True,
                      repeats=3, concurrency=4, on_progress=progress, should_stop=stop)
    assert first.status == "cancelled" and 12 <= first.done < 60 and first.not_run > 0
    assert_adds_up(first)
    assert JudgeStore(store.db).runs()[0].status == "cancelled"
    stored_first = len(calls(store))
    assert stored_first == first.done
    second = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=openai_provider,
                       swap=True,
                       repeats=3, concurrency=4)
    assert second.status == "completed" and second.cached == first.done
    assert second.scored == 60 - first.done
    # 10 items x 2 orders x 3 repeats, each request sent exactly once across both runs.
    sent = bodies(fake_server)
    assert len(sent) == 60 and set(sent.values()) == {1}
    assert len(calls(store)) == 60


def test_stop_during_backoff_records_the_attempts(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(1))
    stop = threading.Event()
    provider = ScriptedProvider("x", [ProviderError("busy", kind="overloaded", retryable=True,
                                                    retry_after=30)])
    timer = threading.Timer(1.0, stop.set)  # after planning, also on a loaded machine
    timer.start()
    summary = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider,
                        should_stop=stop)
    timer.join()
    assert summary.failed == 1
    assert "stopped while waiting to retry" in calls(store)[0]["error"]


def test_concurrency_is_bounded(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(20))
    in_flight = peak = 0
    lock = threading.Lock()

    class Counting(ScriptedProvider):
        async def complete(self, request: Any) -> Any:
            nonlocal in_flight, peak
            with lock:
                in_flight += 1
                peak = max(peak, in_flight)
            try:
                return await super().complete(request)
            finally:
                with lock:
                    in_flight -= 1

    run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=Counting("x", latency=0.01),
              concurrency=3)
    assert peak == 3


def test_runs_in_a_background_thread_while_the_db_is_read(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(30))
    JudgeStore(store.db)  # migrate before the reader starts polling
    results: list[RunSummary] = []
    worker = threading.Thread(target=lambda: results.append(run_judge(
        oneshot, "docs", workspace=Workspace.of(store),
        provider=ScriptedProvider("x", latency=0.005),
        concurrency=4)))
    worker.start()
    seen = []
    while worker.is_alive():
        with store.db.cursor() as cur:
            seen.append(cur.execute("SELECT count(*) FROM judge_calls").fetchall()[0][0])
        time.sleep(0.01)
    worker.join()
    assert results[0].scored == 30 and seen == sorted(seen)


def test_repeats_are_distinct_cache_keys(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(3))
    provider = ScriptedProvider("x")
    one = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider, repeats=1)
    three = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider, repeats=3)
    assert one.scored == 3 and three.cached == 3 and three.scored == 6
    assert len(provider.requests) == 9


def test_a_changed_config_is_a_new_judge_with_its_own_calls(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(2))
    provider = ScriptedProvider("x")
    run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider)
    edited = with_changes(oneshot, system=oneshot.system + " Be strict.")
    summary = run_judge(edited, "docs", workspace=Workspace.of(store), provider=provider)
    assert summary.cached == 0 and summary.scored == 2
    assert JudgeStore(store.db).call_counts(oneshot.config_id) == {"scored": 2}


def test_identical_rows_share_one_call(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    row = faithfulness_rows(1)[0]
    make_dataset("docs", [row, {**row, "id": "copy"}])
    provider = ScriptedProvider("x")
    summary = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider)
    assert summary.planned == 2 and summary.cached == 1 and len(provider.requests) == 1
    frame = judge_verdicts(Workspace.of(store), "docs", oneshot.config_id)
    assert list(frame["item_id"]) == ["row-000", "copy"]


def test_pairwise_swap_maps_the_verdict_back(
    store: LabelStore, make_dataset: Any
) -> None:
    make_dataset("pairs", pairwise_rows(3))
    config = load_builtin("preference")
    provider = ScriptedProvider("x", responder=lambda request: "Position one.\nVERDICT: A")
    summary = run_judge(config, "pairs", workspace=Workspace.of(store), provider=provider)
    assert summary.planned == 6
    frame = judge_verdicts(Workspace.of(store), "pairs", "preference")
    by_order = frame.groupby("order")["verdict"].agg(set).to_dict()
    assert by_order == {"original": {"a"}, "swapped": {"b"}}
    stored = calls(store)
    assert {r["reply_label"] for r in stored} == {"A"}


def test_dry_run_estimates_and_writes_nothing(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(4))
    summary = run_judge(oneshot, "docs", workspace=Workspace.of(store), swap=True, repeats=2,
                        dry_run=True,
                        prices={"openai/gpt-4o-mini": Price(1.0, 2.0)})
    estimate = summary.estimate
    assert estimate is not None and summary.status == "dry_run"
    assert estimate.calls_to_make == 16 and estimate.calls_cached == 0
    assert estimate.output_tokens_max == 16 * 600
    assert estimate.cost_max == pytest.approx(
        (estimate.input_tokens * 1.0 + estimate.output_tokens_max * 2.0) / 1e6)
    with store.db.cursor() as cur:
        tables = {r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if "judge_calls" in tables:
            assert cur.execute("SELECT count(*) FROM judge_calls").fetchall()[0][0] == 0
    unknown = run_judge(with_changes(oneshot, model="openai/some-new-model"), "docs",
                        workspace=Workspace.of(store), dry_run=True)
    assert unknown.estimate is not None and unknown.estimate.cost_max is None
    assert "cost unknown" in unknown.estimate.describe()


def test_estimate_after_a_run_counts_cached_calls(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(4))
    run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=ScriptedProvider("x"),
              limit=2)
    plan = plan_run(Workspace.of(store), oneshot, "docs", judge_store=JudgeStore(store.db))
    assert plan.estimate.calls_cached == 2 and plan.estimate.calls_to_make == 2


def test_item_selection(store: LabelStore, make_dataset: Any, oneshot: JudgeConfig) -> None:
    make_dataset("docs", faithfulness_rows(6))
    store.add_label("docs", "row-004", "alice", "pass", criterion="faithfulness")
    provider = ScriptedProvider("x")
    assert run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider,
                     limit=2).planned == 2
    labelled = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider,
                         labelled_only=True)
    assert labelled.planned == 1 and provider.requests[-1].messages[-1].content.count("plan 4")
    picked = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider,
                       item_ids=["row-005"])
    assert picked.planned == 1
    with pytest.raises(CalibrateError, match="no item 'nope'"):
        run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider,
                  item_ids=["nope"])
    with pytest.raises(CalibrateError, match="no rows labelled for criterion 'correctness'"):
        run_judge(load_builtin("correctness"), "docs", workspace=Workspace.of(store),
                  provider=provider,
                  labelled_only=True)


def test_bad_input_fails_before_any_call(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    rows = faithfulness_rows(3)
    rows[2].pop("reference")
    make_dataset("docs", rows)
    make_dataset("pairs", pairwise_rows(1))
    provider = ScriptedProvider("x")
    with pytest.raises(RenderError, match="row-002"):
        run_judge(load_builtin("correctness"), "docs", workspace=Workspace.of(store),
                  provider=provider)
    with pytest.raises(CalibrateError, match="pairwise but dataset 'docs' is pointwise"):
        run_judge(load_builtin("preference"), "docs", workspace=Workspace.of(store),
                  provider=provider)
    with pytest.raises(CalibrateError, match="pointwise but dataset 'pairs' is pairwise"):
        run_judge(oneshot, "pairs", workspace=Workspace.of(store), provider=provider)
    assert provider.requests == []
    assert JudgeStore(store.db).runs() == []


def test_a_failing_progress_callback_fails_the_run_cleanly(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(5))

    def boom(done: int, total: int, summary: RunSummary) -> None:
        if done == 2:
            raise RuntimeError("callback broke")

    with pytest.raises(RuntimeError, match="callback broke"):
        run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=ScriptedProvider("x"),
                  on_progress=boom, concurrency=1)
    (run,) = JudgeStore(store.db).runs()
    assert run.status == "failed"
    assert len(calls(store)) == 2  # calls made before the failure are kept


def test_cost_uses_the_provider_actually_called(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(2))
    summary = run_judge(oneshot, "docs", workspace=Workspace.of(store),
                        provider=ScriptedProvider("x"))
    assert summary.model == "scripted/x" and summary.cost == 0.0
    with_price = run_judge(oneshot, "docs", workspace=Workspace.of(store),
                           provider=ScriptedProvider("x"),
                           repeats=2, prices={"scripted/*": Price(1000.0, 0.0)})
    assert with_price.cost == pytest.approx(with_price.input_tokens * 1000.0 / 1e6)
