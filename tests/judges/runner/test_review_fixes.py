"""Secrets in provider errors, usage figures of any JSON type, and the writer's deadline."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fake_llm_server import FakeLLMServer
from judge_helpers import faithfulness_rows

from judges import runner as runner_module
from judges.config import JudgeConfig
from judges.providers._sdk import redact_secrets
from judges.providers.anthropic import AnthropicProvider
from judges.providers.base import token_count
from judges.providers.openai import OpenAIProvider
from judges.runner import WRITE_INTERVAL, _CallWriter, run_judge
from judges.stores.judge_store import CallRecord, JudgeStore
from judges.verdicts import export_verdicts
from judges.workspace import Workspace
from labels import LabelStore

SECRET = "plain-secret-key-0f3a9c"  # not sk-like: only the run's own key gives it away


def _dump(store: LabelStore) -> str:
    with store.db.cursor() as cur:
        return " ".join(str(cur.execute(
            f"SELECT string_agg(CAST(t AS VARCHAR), ' ') FROM {table} t").fetchone()[0])
            for table in ("judge_calls", "judge_runs"))


@pytest.mark.parametrize("adapter", ["openai", "anthropic"])
def test_a_key_echoed_in_a_401_body_is_stored_nowhere(
    adapter: str, store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer,
    oneshot: JudgeConfig, tmp_path: Path,
) -> None:
    make_dataset("docs", faithfulness_rows(2))
    provider = (OpenAIProvider("fake-judge", api_key=SECRET, base_url=fake_server.openai_base_url)
                if adapter == "openai" else
                AnthropicProvider("fake-judge", api_key=SECRET,
                                  base_url=fake_server.anthropic_base_url))
    fake_server.script("401_echo", "401_echo")
    summary = run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider)
    assert summary.failed == 2 and summary.failure_kinds == {"auth": 2}
    dump = _dump(store)
    # The echo arrived, the key in it redacted (sent as a Bearer token, or as x-api-key by
    # anthropic releases before 2.x: the run's own key is redacted wherever it appears).
    assert "invalid credentials (Authorization: " in dump and "[redacted]" in dump
    assert SECRET not in dump and SECRET not in str(summary) and SECRET not in repr(summary)
    exported = export_verdicts(Workspace.of(store), "docs", "faithfulness-oneshot",
                               tmp_path / "v.jsonl")
    assert SECRET not in exported.read_text(encoding="utf-8")


def test_redaction_covers_bearer_tokens_and_sk_keys_but_not_short_keys() -> None:
    assert redact_secrets("bad key abcdefgh12 here", "abcdefgh12") == "bad key [redacted] here"
    assert redact_secrets("Authorization: Bearer tok.en-1") == "Authorization: Bearer [redacted]"
    assert redact_secrets("key sk-proj-AbCdEf123456 refused") == "key [redacted] refused"
    # A local server's key such as "local" is no secret: messages stay readable.
    assert redact_secrets("local server refused", "local") == "local server refused"


def test_token_counts_of_any_json_type_become_ints() -> None:
    assert [token_count(v) for v in (12, "12", 12.0, " 7 ", None, "n/a", 1.5, True, [])] == [
        12, 12, 12, 7, None, None, None, None, None]
    completion = OpenAIProvider.completion({
        "choices": [{"message": {"content": "VERDICT: PASS"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": "31", "completion_tokens": 4}})
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (31, 4)


def _record(i: int, **fields: Any) -> CallRecord:
    return CallRecord(run_id="r1", config_id="c1", item_id=f"x{i}", item_hash=f"i{i}", repeat=0,
                      ordering="original", status="scored", **fields)


def test_a_batch_insert_keeps_the_table_types(store: LabelStore) -> None:
    judges = JudgeStore(store.db)
    # A batch over the executemany size with NaN costs (NULL, as the pandas frame stored
    # them) and a token column that starts with None (typed by the table, not the values).
    records = [_record(i, cost=float("nan") if i % 2 else 0.5, latency_ms=float("nan"),
                       input_tokens=i or None, output_tokens=None) for i in range(8)]
    judges.write_calls(records)
    small = [_record(100 + i, cost=float("nan")) for i in range(2)]  # the executemany path
    judges.write_calls(small)
    with store.db.cursor() as cur:
        rows = cur.execute("SELECT item_id, cost, latency_ms, input_tokens FROM judge_calls "
                           "ORDER BY call_id").fetchall()
    assert [r[1] for r in rows] == [0.5, None] * 4 + [None, None]
    assert all(r[2] is None for r in rows)
    assert [r[3] for r in rows] == [None, *range(1, 8), None, None]


def test_rows_queued_during_a_slow_commit_wait_no_further_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A fake clock: the first commit takes 1 s; rows queued meanwhile are past their deadline
    # when it ends, so the writer takes them without waiting (no get with a timeout).
    now = [100.0]
    clock = type("Clock", (), {"monotonic": staticmethod(lambda: now[0])})
    monkeypatch.setattr(runner_module, "time", clock)
    writing, release = threading.Event(), threading.Event()
    batches: list[int] = []

    class SlowStore:
        def write_calls(self, batch: list[CallRecord]) -> None:
            batches.append(len(batch))
            if len(batches) == 1:
                writing.set()
                release.wait(5)
                now[0] += 1.0

    writer = _CallWriter(SlowStore(), batch_size=100)  # type: ignore[arg-type]
    timeouts: list[float] = []
    real_get = writer._queue.get

    def get(block: bool = True, timeout: float | None = None) -> Any:
        if timeout is not None:
            timeouts.append(timeout)
        return real_get(block, timeout)

    monkeypatch.setattr(writer._queue, "get", get)
    writer.put(_record(0))
    assert writing.wait(5)
    writer.put(_record(1))
    writer.put(_record(2))
    release.set()
    deadline = time.monotonic() + 5
    while len(batches) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    writer.close()
    assert batches == [1, 2] and timeouts == [], (batches, timeouts, WRITE_INTERVAL)
