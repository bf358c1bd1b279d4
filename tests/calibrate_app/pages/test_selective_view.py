"""The Calibration page's "Abstain and escalate" section and "Drift" panel (AppTest).

The database of ``tests/support/selective_data.py``: the cheap judge under its own rule (all
must agree, imported verdicts) gives its 80 agreeing rows of ``sel`` a verdict (2 wrong) and
leaves the 40 hard ones unsure; the rule certifies its 53 agreeing passes (its agreeing fails
are too few for a threshold of their own) and accepts the 26 agreeing passes of the unlabelled
target ``tgt``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_pages import app_page
from repo_paths import APP_SCRIPT
from streamlit.testing.v1 import AppTest

from judges.stores.judge_store import external_config_id
from labels import LabelStore


@pytest.fixture(scope="module")
def template_db(selective_template: Path) -> Path:
    return selective_template


def test_abstain_and_drift_sections(store_copy: LabelStore, app_env: Path) -> None:
    at = app_page("app_pages/calibration.py", timeout=90)
    assert at.selectbox(key="cal_dataset").value == "sel"  # the one labelled dataset
    assert not at.toggle(key="cal_abstain_on").value  # off by default: the page pays nothing
    assert not [m for m in at.metric if m.label == "Accepted"]
    at.selectbox(key="cal_judge").select(external_config_id("cheap", "pointwise"))
    at.toggle(key="cal_abstain_on").set_value(True).run()
    assert at.selectbox(key="cal_target").value == "tgt"  # the page opens on the judged target
    assert not at.exception, at.exception
    shown = {m.label: m.value for m in at.metric}
    # Certified on sel's labels (53 agreeing passes, 1 wrong; its 27 agreeing fails are too few
    # for their own threshold), applied to tgt: its 26 agreeing passes are accepted.
    assert shown["Accepted"] == "43.3%" and shown["Escalated to experts"] == "34"
    assert shown["Error among accepted"] == "≤ 0.1"
    at.button(key="cal_escalate").click().run()
    assert not at.exception, at.exception
    escalation = store_copy.escalation("tgt", "faithfulness")
    assert escalation is not None and len(escalation.item_ids) == 34
    assert store_copy.queue_settings("tgt", "faithfulness").order == "escalated"
    assert "These escalated rows are the Label queue already." in [c.value for c in at.caption]
    # Drift: this judge's card, its anchor rows as stored, the target's verdicts.
    assert at.selectbox(key="cal_drift_anchor").value == "sel"
    at.button(key="cal_drift_run").click().run()
    assert not at.exception, at.exception
    sentences = [s.value for s in [*at.success, *at.error]]
    assert any(s.startswith("No drift") for s in sentences), sentences
    # One click away: the Label page serves only the escalated rows.
    label = AppTest.from_file(str(APP_SCRIPT), default_timeout=30)
    for name, value in {"user": "bob", "dataset": "tgt", "criterion": "faithfulness"}.items():
        label.query_params[name] = value
    label.switch_page("app_pages/label.py")
    label.run()
    assert not label.exception, label.exception
    shown_questions = [t.value for t in label.text if str(t.value).startswith("How do I set")]
    number = int(shown_questions[0].rsplit(" ", 1)[1].rstrip("?")) if shown_questions else -1
    assert f"t{number:03d}" in escalation.item_ids
    assert any("0 / 34 labelled" in str(p.text) for p in label.get("progress"))
