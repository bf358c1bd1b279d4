"""Every fault kind, mixed at random in one run of >= 1,000 calls: nothing silently dropped."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, faithfulness_rows, with_changes

from judges.calls import CallPolicy
from judges.config import load_builtin
from judges.providers.anthropic import AnthropicProvider
from judges.providers.openai import OpenAIProvider
from judges.runner import run_judge
from judges.stores.judge_store import JudgeStore
from judges.workspace import Workspace
from labels import LabelStore, import_rows

FAULT_MIX = {
    "429": 0.03,
    "500": 0.03,
    "503": 0.03,
    "529": 0.02,
    "reset": 0.02,
    "slow": 0.01,
    "malformed": 0.03,
    "empty": 0.02,
    "refusal": 0.02,
    "truncated": 0.02,
}
CONTENT = {"empty": "empty_reply", "refusal": "refusal", "truncated": "truncated"}


def _mixed_fault_run(
    store: LabelStore, tmp_path: Path, *, items: int, repeats: int, seed: int, sdk: str
) -> None:
    rows = faithfulness_rows(items)
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    import_rows(store, path, "docs")
    config = with_changes(
        load_builtin("faithfulness-oneshot"),
        model=f"{sdk}/fake",
        generation={"temperature": 0.0, "max_tokens": 200, "seed": 3, "json_mode": False},
    )
    # Few retries on purpose: some calls must exhaust them and fail with their reason.
    policy = CallPolicy(timeout=0.3, max_retries=1, backoff=0.01, max_backoff=0.02)
    with FakeLLMServer(faults=FAULT_MIX, seed=seed, retry_after=0.01, slow_seconds=0.6) as server:
        provider = (
            OpenAIProvider("fake", api_key=DUMMY_KEY, base_url=server.openai_base_url)
            if sdk == "openai"
            else AnthropicProvider("fake", api_key=DUMMY_KEY, base_url=server.anthropic_base_url)
        )
        summary = run_judge(
            config,
            "docs",
            workspace=Workspace.of(store),
            provider=provider,
            policy=policy,
            concurrency=16,
            repeats=repeats,
            swap=True,
        )
        requests = len(server.calls)
        actions = server.action_counts()
    planned = items * repeats * 2
    print(f"{sdk}: {requests} requests, faults {dict(actions)}; {summary.describe()}")
    assert summary.planned == planned >= 1000 or items < 250
    # Every planned call is accounted for, in exactly one bucket.
    assert summary.scored + summary.unscored + summary.failed == planned
    assert summary.cached == 0 and summary.not_run == 0
    assert summary.retried_ok > 0 and summary.failed > 0 and summary.unscored > 0
    # Every request the server saw is counted; on a loaded machine a timed-out or reset
    # attempt can end before the server logs it, so the runner may count a few more.
    stored_attempts = JudgeStore(store.db).calls_frame()["attempts"].map(json.loads)
    lost_in_transit = sum(
        a.get("kind") in ("timeout", "connection") for tries in stored_attempts for a in tries
    )
    assert requests <= summary.provider_requests <= requests + lost_in_transit
    assert sum(actions[a] for a in FAULT_MIX) > 0.15 * requests

    stored = JudgeStore(store.db).calls_frame()
    assert len(stored) == planned, "nothing silently dropped: one stored row per planned call"
    by_status = Counter(stored["status"])
    assert by_status == {
        "scored": summary.scored,
        "unscored": summary.unscored,
        "failed": summary.failed,
    }
    unscored = stored[stored["status"] == "unscored"]
    assert set(unscored["unscored_reason"]) <= set(CONTENT.values()) | {"parse_error", "no_verdict"}
    assert (unscored["unscored_reason"].notna()).all()
    failed = stored[stored["status"] == "failed"]
    assert failed["error_kind"].notna().all() and (failed["retries"] == 1).all()
    assert Counter(summary.unscored_reasons) == Counter(unscored["unscored_reason"])

    # The failed calls are retried by the next run, and only they are.
    again = run_judge(
        config,
        "docs",
        workspace=Workspace.of(store),
        provider=provider_for_rerun(sdk),
        policy=policy,
        concurrency=16,
        repeats=repeats,
        swap=True,
    )
    assert again.cached == planned - summary.failed
    assert again.scored + again.unscored + again.failed == summary.failed


def provider_for_rerun(sdk: str) -> OpenAIProvider | AnthropicProvider:
    server = FakeLLMServer().start()
    _servers.append(server)
    if sdk == "openai":
        return OpenAIProvider("fake", api_key=DUMMY_KEY, base_url=server.openai_base_url)
    return AnthropicProvider("fake", api_key=DUMMY_KEY, base_url=server.anthropic_base_url)


_servers: list[FakeLLMServer] = []


@pytest.fixture(autouse=True)
def _stop_rerun_servers() -> object:
    yield
    while _servers:
        _servers.pop().stop()


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_thousand_calls_with_mixed_faults_add_up(
    store: LabelStore, tmp_path: Path, sdk: str
) -> None:
    _mixed_fault_run(
        store, tmp_path, items=250, repeats=2, seed=5 if sdk == "openai" else 6, sdk=sdk
    )
