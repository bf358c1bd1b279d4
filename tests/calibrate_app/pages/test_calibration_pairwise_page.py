"""The Calibration page on a pairwise dataset (AppTest) shows what ``calibrate report`` says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from repo_paths import APP_SCRIPT
from streamlit.testing.v1 import AppTest

from calibrate_app.cli import cli
from judges.calibration import describe_interval, format_point
from judges.demo.layout import DATA_DIR
from judges.demo.mtbench import MTBENCH_JUDGE, load_mtbench
from judges.workspace import Workspace
from labels import open_store


@pytest.fixture
def pairwise_db(app_env: Path, tmp_path: Path) -> Path:
    store = open_store(str(app_env))
    try:
        load_mtbench(Workspace.of(store), DATA_DIR / "mtbench", tmp_path / "work")
        # A hostile annotator note is data too: it must never reach markdown.
        store.add_label("mtbench", "q81-t1-alpaca-13b-vs-gpt-3.5-turbo", "hostile", "b",
                        criterion="preference", note="**x** <b>y</b> [link](http://127.0.0.1:9/)")
    finally:
        store.db.close()
    return app_env


def test_calibration_page_shows_the_pairwise_report(pairwise_db: Path) -> None:
    out = CliRunner().invoke(cli, ["--db", str(pairwise_db), "report", "--json", "--dataset",
                                   "mtbench", "--judge", MTBENCH_JUDGE], catch_exceptions=False)
    data = json.loads(out.output)
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=90)
    at.run()
    at.switch_page("app_pages/calibration.py").run()
    at.selectbox(key="cal_dataset").select("mtbench").run()
    assert not at.exception, at.exception
    shown = {m.label: m.value for m in at.metric}
    assert shown["Agreement (with ties)"] == format_point(data["agreement"]["with_ties"])
    assert shown["Agreement (without ties)"] == format_point(data["agreement"]["without_ties"])
    assert shown["Cohen's kappa (a/b/tie)"] == format_point(data["kappa"])
    assert shown["Human–human (with ties)"] == format_point(
        data["human_agreement"]["with_ties"])
    assert shown["Position flip rate"] == "—"  # GPT-4's two orders were not published
    assert data["n_votes"] == 1752  # the 1,751 MT-Bench votes and the hostile one
    captions = " ".join(c.value for c in at.caption)
    w = data["agreement"]["with_ties"]
    assert f"CI {w['low']:.3f}–{w['high']:.3f} · n=1752 votes" in captions
    win = next(d.value for d in at.dataframe if "corrected a" in d.value.columns)
    assert list(win["rows"])[:2] == ["all rows", "alpaca-13b vs claude-v1"]
    assert len(win) == 16
    corrected = data["win_rate"]["corrected"]["b"]
    # Every MT-Bench row is labelled: the share is a census, its interval has no width, and the
    # table says so in words rather than as a certain-looking [0.571, 0.571].
    assert corrected["low"] == corrected["high"]
    assert win["corrected b"][0] == describe_interval(corrected)
    assert win["corrected b"][0] == f"{corrected['estimate']:.3f} on all 1,232 rows (no spread)"
    assert any(h.value.startswith("Votes the judge disagrees with") for h in at.subheader)
    assert not any("127.0.0.1:9" in m.value or "<b>" in m.value for m in at.markdown)
    # Switching back to a pass/fail dataset is the other story (not present in this file).
    assert [o for o in at.selectbox(key="cal_dataset").options] == ["mtbench"]
