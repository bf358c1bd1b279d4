"""The Calibration and Export pages (AppTest) show what ``calibrate report --json`` says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from markup import shown as rendered
from repo_paths import APP_SCRIPT
from report_data import build_report_db
from streamlit.testing.v1 import AppTest

from calibrate_app.cli import cli
from judges.calibration import format_point
from labels import open_store


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_report_db(tmp_path_factory.mktemp("app"))[0]


@pytest.fixture
def app_db(db_copy: Path, app_env: Path) -> Path:
    """This test's copy of the module's database, with the app pointed at it."""
    assert db_copy == app_env
    return app_env


def cli_report(db: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["--db", str(db), "report", "--json", *args],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def open_page(page: str) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=60)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_calibration_page_shows_the_cli_numbers(app_db: Path) -> None:
    data = cli_report(app_db, "--dataset", "cal", "--judge", "judge-a", "--target", "tgt",
                      "--half-width", "0.1")
    at = open_page("app_pages/calibration.py")
    at.selectbox(key="cal_dataset").select("cal").run()
    at.selectbox(key="cal_judge").select(data["judge"]["config_id"]).run()
    at.selectbox(key="cal_target").select("tgt").run()
    at.number_input(key="cal_half_width").set_value(0.1).run()
    assert not at.exception, at.exception
    shown = metrics(at)
    expected = {
        "Sensitivity": data["sensitivity"],
        "False-positive rate": data["fpr"],
        "Specificity": data["specificity"],
        "Cohen's kappa": data["kappa"],
        "Human–human kappa": data["human_agreement"]["kappa"],
        "Observed (judge)": data["observed_pass_rate"],
        "Corrected": data["corrected_pass_rate"],
        "Labels only": data["labels_only_pass_rate"],
    }
    for label, value in expected.items():
        assert shown[label] == format_point(value), label
    # One vocabulary of counts: "N of M" beside every rate, the same numbers as the JSON.
    labelled, target = data["counts"]["labelled"], data["counts"]["target"]
    assert shown["Labelled rows used"] == f"{data['n']} of {labelled['rows']}"
    assert shown["Labelled rows judged"] == f"{labelled['judged']} of {labelled['rows']}"
    assert shown["Target rows judged"] == f"{target['judged']} of {target['rows']}"
    captions = " ".join(rendered(c.value) for c in at.caption)
    assert (f"{data['n']} of {labelled['rows']} labelled rows used (human pass {data['m1']}, "
            f"fail {data['m0']})") in captions
    assert (f"Judge pass rate, uncorrected, on the {target['judged']} of {target['rows']} "
            "target rows judged") in captions
    for key in ("sensitivity", "fpr", "corrected_pass_rate"):
        assert f"CI {data[key]['low']:.3f}–{data[key]['high']:.3f}" in captions
    texts = [t.value for t in at.text]
    assert data["plan"]["message"] in texts

    # The first disagreement opens with both verdicts; row text stays literal (st.text only).
    assert any(h.value.startswith("Disagreements (") for h in at.subheader)
    assert any("**bold** ![x](http://127.0.0.1:9/t.png)" in t for t in texts)
    assert not any("127.0.0.1:9" in m.value for m in at.markdown)
    assert shown["Human"] in ("pass", "fail") and shown["Judge"] in ("pass", "fail")

    # Planning: the button sets the Label page's queue to the stratified order.
    at.button(key="cal_stratify").click().run()
    assert not at.exception, at.exception
    assert any("alternates judge-pass and judge-fail" in rendered(s.value) for s in at.success)
    from calibrate_app import resources

    resources.release_store()
    s = open_store(str(app_db))
    try:
        assert s.queue_settings("cal", "faithfulness").order == "stratified"
    finally:
        s.db.close()


def test_calibration_page_leaderboard_and_refusal(app_db: Path, tmp_path: Path) -> None:
    a = cli_report(app_db, "--dataset", "cal", "--judge", "judge-a", "--judge", "judge-b")
    board = a["leaderboard"]
    mini = tmp_path / "mini.jsonl"
    mini.write_text("".join(json.dumps({"id": f"m{i}", "question": "q", "answer": f"a{i}",
                                        "sources": ["s"]}) + "\n" for i in range(6)))
    labels = tmp_path / "mini_labels.csv"
    labels.write_text("id,label\n" + "".join(f"m{i},pass\n" for i in range(6)))
    verdicts = tmp_path / "mini_verdicts.csv"
    verdicts.write_text("id,verdict\n" + "".join(f"m{i},{'pass' if i else 'fail'}\n"
                                                  for i in range(6)))
    # 14 rows two judges grade: one agrees with the expert on all 14, one misses a row.
    truth = ["pass"] * 8 + ["fail"] * 6
    (tmp_path / "few.jsonl").write_text("".join(
        json.dumps({"id": f"f{i}", "question": "q", "answer": f"a{i}", "sources": ["s"]}) + "\n"
        for i in range(14)))
    (tmp_path / "few_labels.csv").write_text(
        "id,label\n" + "".join(f"f{i},{v}\n" for i, v in enumerate(truth)))
    (tmp_path / "perfect.csv").write_text(
        "id,verdict\n" + "".join(f"f{i},{v}\n" for i, v in enumerate(truth)))
    (tmp_path / "close.csv").write_text(
        "id,verdict\n" + "".join(f"f{i},{'fail' if i == 0 else v}\n" for i, v in enumerate(truth)))
    runner = CliRunner()
    for args in (["import", str(mini), "--dataset", "mini"],
                 ["labels", "import", str(labels), "--dataset", "mini", "--annotator", "zoe"],
                 ["verdicts", "import", str(verdicts), "--dataset", "mini", "--judge", "mj"],
                 ["import", str(tmp_path / "few.jsonl"), "--dataset", "few"],
                 ["labels", "import", str(tmp_path / "few_labels.csv"), "--dataset", "few",
                  "--annotator", "zoe"],
                 ["verdicts", "import", str(tmp_path / "perfect.csv"), "--dataset", "few",
                  "--judge", "perfect"],
                 ["verdicts", "import", str(tmp_path / "close.csv"), "--dataset", "few",
                  "--judge", "close"]):
        assert runner.invoke(cli, ["--db", str(app_db), *args]).exit_code == 0

    at = open_page("app_pages/calibration.py")
    at.selectbox(key="cal_dataset").select("cal").run()
    at.selectbox(key="cal_judge").select(a["judge"]["config_id"]).run()
    # Other judges may start in the leaderboard; keep only judge-b.
    at.multiselect(key="cal_compare").set_value([board[1]["judge"]["config_id"]]).run()
    assert not at.exception, at.exception
    shown = next(d.value for d in at.dataframe if "mcnemar_p_vs_best" in d.value.columns)
    assert shown["judge"].tolist() == ["judge-a", "judge-b"]
    assert shown["kappa"].tolist()[0].startswith(format_point(board[0]["kappa"]))
    p_values = shown["mcnemar_p_vs_best"].tolist()
    assert p_values[0] == "—"  # the best judge has no p-value against itself: no raw None
    assert float(p_values[1]) == pytest.approx(board[1]["mcnemar_p_vs_best"], rel=1e-3)
    assert shown["rows used"].tolist() == [f"{r['n']} of {a['counts']['labelled']['rows']}"
                                           for r in board]

    # A kappa of 1 on 14 rows has a zero-width Wald interval: the leaderboard says "all 14
    # agree", never a certain-looking 1.000 [1.000, 1.000] (the JSON keeps the numbers).
    few = cli_report(app_db, "--dataset", "few", "--judge", "perfect", "--judge", "close")
    kappa = few["leaderboard"][0]["kappa"]
    assert (kappa["estimate"], kappa["low"], kappa["high"], kappa["n"]) == (1.0, 1.0, 1.0, 14)
    at.selectbox(key="cal_dataset").select("few").run()
    at.selectbox(key="cal_judge").select(few["judge"]["config_id"]).run()
    at.multiselect(key="cal_compare").set_value(
        [few["leaderboard"][1]["judge"]["config_id"]]).run()
    assert not at.exception, at.exception
    board = next(d.value for d in at.dataframe if "mcnemar_p_vs_best" in d.value.columns)
    assert board["judge"].tolist() == ["perfect", "close"]
    assert board["kappa"].tolist()[0] == "all 14 agree"
    assert not any("[1.000, 1.000]" in str(cell) for d in at.dataframe
                   for cell in d.value.to_numpy().ravel())
    assert not any("1.000–1.000" in c.value for c in at.caption)

    # Only passing labels: the corrected pass rate is refused, and the page says why.
    at.selectbox(key="cal_dataset").select("mini").run()
    at.selectbox(key="cal_design").select("separate_calibration").run()
    assert not at.exception, at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "No number" in warnings and "label at least one failing" in warnings
    assert "Corrected" not in metrics(at)
    # The first screen says it plainly, beside the verdict: can't say, and the refusal's reason.
    answer = at.get_by_key("cal_answer")
    assert [(rendered(m.label), m.value) for m in answer.metric] == [
        ("True pass rate of mini", "Can't say")]
    because = rendered(answer.caption[0].value)
    assert because.startswith("Because ") and "label at least one failing" in because


def test_export_page_offers_the_card(app_db: Path) -> None:
    at = open_page("app_pages/export.py")
    at.selectbox(key="export_dataset").select("cal").run()
    assert not at.exception, at.exception
    labels = [m.label for m in at.metric]
    assert labels == ["Sensitivity", "Specificity", "Labelled rows used"]


def test_export_page_previews_and_refuses_a_misleading_card(app_db: Path) -> None:
    """A stand-in judge on 24 rows: previewed, refused until "Export anyway", marked inside."""
    result = CliRunner().invoke(cli, [
        "--db", str(app_db), "judge", "run", "faithfulness", "--dataset", "cal", "--model",
        "scripted/demo", "--limit", "24"])
    assert result.exit_code == 0, result.output
    at = open_page("app_pages/export.py")
    at.selectbox(key="export_dataset").select("cal").run()
    judge = at.selectbox(key="export_judge")
    # The imported judge meets every rule: its card downloads at once, previewed.
    judge.select_index(_option_index(judge, "judge-a")).run()
    assert not at.exception, at.exception
    assert not at.error and not at.get("download_button")[0].proto.disabled
    assert any('"forced": []' in c.value for c in at.code)
    at.selectbox(key="export_judge").select_index(_option_index(judge, "faithfulness")).run()
    assert not at.exception, at.exception
    assert [rendered(e.value) for e in at.error] == [
        "This card would mislead, so it is not exported by default:"]
    reasons = [t.value for t in at.text if t.value.startswith("• ")]
    assert reasons[0].startswith("• the verdicts come from scripted/demo, a stand-in")
    assert any("too few labels" in r for r in reasons)
    assert any("Stand-in judge" in rendered(w.value) for w in at.warning)
    download = at.get("download_button")[0]
    assert download.proto.disabled
    preview = next(c.value for c in at.code if '"kind": "calibrate.judge_card"' in c.value)
    card = json.loads(preview)
    assert card["forced"] == [r.removeprefix("• ") for r in reasons]
    force = next(c for c in at.checkbox if c.key.startswith("export_card_force_"))
    force.check().run()
    assert not at.exception, at.exception
    assert not at.get("download_button")[0].proto.disabled



def _option_index(box: Any, name: str) -> int:
    """The index of the selectbox option whose shown label starts with ``name``."""
    return next(i for i, o in enumerate(box.options) if o.startswith(name + " "))
