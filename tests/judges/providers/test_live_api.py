"""Live calls to the real provider APIs: opt-in only.

Set ``CALIBRATE_RUN_LIVE_API=1`` and ``ANTHROPIC_API_KEY`` and/or ``OPENAI_API_KEY`` in the
environment. The values are read when this module is collected, before the suite's fixtures
remove every ``CALIBRATE_*``/``ANTHROPIC_*``/``OPENAI_*`` variable from the test environment.
Optional: ``CALIBRATE_LIVE_ANTHROPIC_MODEL`` / ``CALIBRATE_LIVE_OPENAI_MODEL``. The batch-API
test also needs ``CALIBRATE_RUN_LIVE_BATCH=1``: a real batch may take minutes (up to 24 hours).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from judge_helpers import faithfulness_rows, with_changes

from judges.calls import CallPolicy
from judges.config import JudgeConfig, load_builtin
from judges.runner import run_judge
from judges.settings import Settings
from judges.workspace import Workspace
from labels import LabelStore

LIVE = os.environ.get("CALIBRATE_RUN_LIVE_API") == "1"
LIVE_BATCH = LIVE and os.environ.get("CALIBRATE_RUN_LIVE_BATCH") == "1"
KEYS = {p: os.environ.get(f"{p.upper()}_API_KEY") for p in ("anthropic", "openai")}
MODELS = {
    "anthropic": os.environ.get("CALIBRATE_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5"),
    "openai": os.environ.get("CALIBRATE_LIVE_OPENAI_MODEL", "gpt-4.1-mini"),
}

pytestmark = pytest.mark.api


def _live_judge(provider: str) -> tuple[JudgeConfig, Settings]:
    """The built-in one-shot judge on ``provider``'s live model and its key (skip without one)."""
    if not KEYS[provider]:
        pytest.skip(f"{provider.upper()}_API_KEY is not set")
    config = with_changes(load_builtin("faithfulness-oneshot"),
                          model=f"{provider}/{MODELS[provider]}")
    return config, Settings(**{f"{provider}_api_key": KEYS[provider]})  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_real_judge_call(provider: str, store: LabelStore, make_dataset: Any) -> None:
    if not LIVE:
        pytest.skip("live API tests run only with CALIBRATE_RUN_LIVE_API=1")
    config, settings = _live_judge(provider)
    make_dataset("live", faithfulness_rows(1))
    summary = run_judge(config, "live", workspace=Workspace.of(store), settings=settings,
                        policy=CallPolicy(timeout=60, max_retries=2))
    assert summary.failed == 0, summary.describe()
    assert summary.scored + summary.unscored == 1
    assert summary.input_tokens > 0 and summary.output_tokens > 0


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_real_batch(provider: str, store: LabelStore, make_dataset: Any) -> None:
    if not LIVE_BATCH:
        pytest.skip("live batch tests run only with CALIBRATE_RUN_LIVE_API=1 and "
                    "CALIBRATE_RUN_LIVE_BATCH=1")
    config, settings = _live_judge(provider)
    from judges.batch import BatchPolling, run_judge_batch

    make_dataset("live", faithfulness_rows(2))
    summary = run_judge_batch(config, "live", workspace=Workspace.of(store), settings=settings,
                              polling=BatchPolling(interval=10, max_interval=60))
    assert summary.status == "completed" and summary.failed == 0, summary.describe()
    assert summary.scored + summary.unscored == 2 and summary.batches_collected == 1
