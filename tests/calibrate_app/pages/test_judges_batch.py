"""The Judges page's Batch API option under AppTest, against the fake server's batch API."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_llm_server import FakeLLMServer
from judge_helpers import DUMMY_KEY, faithfulness_rows
from repo_paths import APP_SCRIPT
from streamlit.testing.v1 import AppTest

from judges.batch import BatchStore
from judges.store import JudgeStore
from labels import LabelStore


@pytest.fixture
def page_store(store: LabelStore, db_path: Path, make_dataset: Any, fake_server: FakeLLMServer,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[LabelStore]:
    from calibrate_app import resources

    make_dataset("docs", faithfulness_rows(3))
    monkeypatch.setenv("CALIBRATE_DB_PATH", str(db_path))
    monkeypatch.setenv("CALIBRATE_LOCK_TIMEOUT", "0")
    monkeypatch.setenv("CALIBRATE_ANTHROPIC_BASE_URL", fake_server.anthropic_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    yield store
    resources.release_store()


def test_batch_option_estimates_both_prices_and_runs_in_batches(
    page_store: LabelStore, fake_server: FakeLLMServer,
) -> None:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=30)
    at.switch_page("app_pages/judges.py")
    at.run()
    at.selectbox(key="judge_config").set_value("faithfulness-oneshot (built-in)").run()
    at.checkbox(key="judge_labelled_only").uncheck().run()
    assert not at.exception, at.exception
    texts = "\n".join(str(t.value) for t in at.text)
    assert "online about $" in texts and "batch API (50% of the price" in texts
    at.checkbox(key="judge_batch").check().run()
    at.button(key="judge_run").click().run()
    assert not at.exception, at.exception
    judges = JudgeStore(page_store.db)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        runs = judges.runs(dataset="docs")
        if runs and runs[0].status not in ("running",):
            break
        time.sleep(0.1)
    assert runs[0].status == "completed" and runs[0].options["mode"] == "batch"
    assert len(judges.calls_frame()) == 3 and fake_server.calls
    assert {c.action for c in fake_server.calls} == {"batch"}
    assert [b.state for b in BatchStore(page_store.db).batches()] == ["collected"]
