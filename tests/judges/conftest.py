"""Fixtures for the judge engine tests: datasets, the local fake LLM server, providers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from judges.config import JudgeConfig, load_builtin
from judges.providers.anthropic import AnthropicProvider
from judges.providers.openai import OpenAIProvider
from judges.runner import CallPolicy
from labels import LabelStore, import_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, with_changes

DatasetFactory = Callable[..., str]


@pytest.fixture
def make_dataset(store: LabelStore, tmp_path: Path) -> DatasetFactory:
    """Import rows (a list of dicts) into a dataset through the real importer."""

    def make(name: str, rows: list[dict[str, Any]]) -> str:
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
        import_rows(store, path, name)
        return name

    return make


@pytest.fixture
def fake_server() -> Iterator[FakeLLMServer]:
    """A fake OpenAI + Anthropic server on 127.0.0.1 (fast: 50 ms retry-after, 1 s slow reply)."""
    with FakeLLMServer(retry_after=0.05, slow_seconds=1.0) as server:
        yield server


@pytest.fixture
def openai_provider(fake_server: FakeLLMServer) -> OpenAIProvider:
    """The real OpenAI SDK pointed at the fake server."""
    return OpenAIProvider("fake-judge", api_key=DUMMY_KEY, base_url=fake_server.openai_base_url)


@pytest.fixture
def anthropic_provider(fake_server: FakeLLMServer) -> AnthropicProvider:
    """The real Anthropic SDK pointed at the fake server."""
    return AnthropicProvider(
        "fake-claude", api_key=DUMMY_KEY, base_url=fake_server.anthropic_base_url
    )


@pytest.fixture
def fast_policy() -> CallPolicy:
    """Short timeouts and backoff, so fault tests take milliseconds."""
    return CallPolicy(timeout=0.4, max_retries=3, backoff=0.01, max_backoff=0.05)


@pytest.fixture
def oneshot() -> JudgeConfig:
    """The built-in one-shot faithfulness judge (marker contract) on an OpenAI model, seed 7."""
    return with_changes(
        load_builtin("faithfulness-oneshot"), model="openai/gpt-4o-mini",
        generation={"temperature": 0.0, "max_tokens": 600, "seed": 7, "json_mode": False},
    )
