"""The Judges page's Batch API option under AppTest, against the fake server's batch API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_pages import app_page, finished_run
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, faithfulness_rows

from judges.batch import BatchStore
from judges.stores.judge_store import JudgeStore
from labels import LabelStore


@pytest.fixture
def page_store(store: LabelStore, app_env: Path, make_dataset: Any, fake_server: FakeLLMServer,
               monkeypatch: pytest.MonkeyPatch) -> LabelStore:
    make_dataset("docs", faithfulness_rows(3))
    monkeypatch.setenv("CALIBRATE_ANTHROPIC_BASE_URL", fake_server.anthropic_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    return store


def test_batch_option_estimates_both_prices_and_runs_in_batches(
    page_store: LabelStore, fake_server: FakeLLMServer,
) -> None:
    at = app_page("app_pages/judges.py")
    at.selectbox(key="judge_config").set_value("faithfulness-oneshot (built-in)").run()
    at.checkbox(key="judge_labelled_only").uncheck().run()
    assert not at.exception, at.exception
    texts = "\n".join(str(t.value) for t in at.text)
    assert "online about $" in texts and "batch API (50% of the price" in texts
    at.checkbox(key="judge_batch").check().run()
    at.button(key="judge_run").click().run()
    assert not at.exception, at.exception
    run = finished_run(page_store.db, "docs", timeout=30)
    assert run.status == "completed" and run.options["mode"] == "batch"
    assert len(JudgeStore(page_store.db).calls_frame()) == 3 and fake_server.calls
    assert {c.action for c in fake_server.calls} == {"batch"}
    batches = BatchStore(page_store.db, JudgeStore(page_store.db)).batches()
    assert [b.state for b in batches] == ["collected"]
