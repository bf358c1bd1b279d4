"""A hostile judge server cannot exhaust memory (issue 25).

The red team's server sent a 40 MB reply (stored whole: 755 MB RSS for 10 calls) and 10 MB of
reasoning.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_llm_server import FakeLLMServer, prompt_text
from judge_helpers import DUMMY_KEY

from judges.calls import MAX_REASONING_CHARS, MAX_REPLY_CHARS, CallPolicy
from judges.providers.anthropic import AnthropicProvider
from judges.providers.openai import OpenAIProvider
from judges.runner import run_judge
from judges.stores.judge_store import JudgeStore
from judges.workspace import Workspace
from labels import LabelStore

HUGE = "x" * 40_000_000  # 40 MB: past the 8 MB a call may take
LONG_REASONING = "because " * 250_000  # 2 MB of reasoning, then the verdict


def _responder(path: str, body: dict[str, Any]) -> str:
    return HUGE if "huge-row" in prompt_text(body) else f"{LONG_REASONING}\nVERDICT: FAIL"


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_hostile_server_cannot_make_a_reply_exhaust_memory(
    store: LabelStore, make_dataset: Any, oneshot: Any, sdk: str
) -> None:
    make_dataset("docs", [
        {"id": "huge", "question": "huge-row", "answer": "a", "sources": ["s"]},
        {"id": "long", "question": "long-row", "answer": "a", "sources": ["s"]},
    ])
    with FakeLLMServer(responder=_responder) as server:
        provider: Any = (
            OpenAIProvider("m", api_key=DUMMY_KEY, base_url=server.openai_base_url)
            if sdk == "openai" else
            AnthropicProvider("m", api_key=DUMMY_KEY, base_url=server.anthropic_base_url))
        run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider,
                  policy=CallPolicy(timeout=30, max_retries=2, backoff=0.01))
        requests = len(server.calls)
    calls = JudgeStore(store.db).calls_frame().set_index("item_id")
    huge, long = calls.loc["huge"], calls.loc["long"]
    # Not read past 8 MB, not retried (the same server would send it again), nothing stored.
    assert huge["status"] == "failed" and huge["error_kind"] == "oversized_response"
    assert "sent more than 8 MB for one call; not read further" in huge["error"]
    assert not isinstance(huge["reply"], str) and requests == 2
    # Parsed whole, stored cut, with the marker.
    assert long["status"] == "scored" and long["verdict"] == "fail"
    assert long["reply"].endswith("more characters]") and "[cut by calibrate: " in long["reply"]
    assert len(long["reply"]) < MAX_REPLY_CHARS + 100
    assert len(long["reasoning"]) < MAX_REASONING_CHARS + 100
    assert long["reasoning"].endswith("more characters]")
    assert len(long["raw_response"]) < 2 * MAX_REPLY_CHARS
