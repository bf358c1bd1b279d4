"""The Calibration page's comparison of two target datasets (AppTest) equals `calibrate compare`.

On the demo: the scripted stand-in judge has verdicts on the production week and on the week
after the fix. The page's numbers must be the ones ``calibrate compare --json`` prints for the
card and verdict files exported from the same database.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_pages import calibration_page
from click.testing import CliRunner

from calibrate_app.cli import cli
from judges.calibration import format_interval, format_point
from judges.demo import AFTER_FIX_DATASET, LABELLED_DATASET, PRODUCTION_DATASET

STANDIN = "standin-simulated"


@pytest.fixture
def demo_db(demo_app_db: Path) -> Path:
    return demo_app_db


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _cli_compare(db: Path, folder: Path) -> dict[str, Any]:
    """Card and verdicts exported from ``db``, then ``calibrate compare --json`` on the files."""
    card, week, after = folder / "card.json", folder / "week.jsonl", folder / "after.jsonl"
    # A stand-in's card is refused unless forced (the app's comparison uses it the same way).
    _cli("--db", str(db), "card", "export", "--dataset", LABELLED_DATASET, "--judge", STANDIN,
         "-o", str(card), "--force")
    for dataset, path in ((PRODUCTION_DATASET, week), (AFTER_FIX_DATASET, after)):
        _cli("--db", str(db), "verdicts", "export", "--dataset", dataset, "--judge", STANDIN,
             "-o", str(path))
    return json.loads(_cli("compare", "--card", str(card), str(week), str(after), "--json"))


def test_the_page_compares_the_two_weeks_as_the_cli_does(demo_db: Path, tmp_path: Path) -> None:
    data = _cli_compare(demo_db, tmp_path)
    assert data["n_paired"] == 200 and data["excluded"]["baseline_only"] == 400

    at = calibration_page()
    # The page opens on the real claim-split judge, which judged one target only: the section
    # says what it needs and which judge has two targets.
    assert "claimsplit" in at.selectbox(key="cal_judge").format_func(
        at.selectbox(key="cal_judge").value)
    assert any(t.value == f"Judges with verdicts on two target datasets: {STANDIN}."
               for t in at.text)
    assert not any(m.label == "Rows paired" for m in at.metric)

    at.selectbox(key="cal_judge").select(data["card"]["config_id"]).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="cmp_baseline").value == PRODUCTION_DATASET
    assert at.selectbox(key="cmp_candidate").value == AFTER_FIX_DATASET
    assert any("scripted stand-in, not a judge" in w.value for w in at.warning)

    shown = {m.label: m.value for m in at.metric}
    assert shown["Baseline corrected pass rate"] == format_point(data["baseline"])
    assert shown["Candidate corrected pass rate"] == format_point(data["candidate"])
    assert shown["Difference (candidate − baseline)"] == format_point(data["difference"],
                                                                        signed=True)
    assert shown["McNemar p"] == f"{data['mcnemar_p']:.4g}"
    assert shown["Rows paired"] == str(data["n_paired"])
    assert shown["Only in the baseline"] == str(data["excluded"]["baseline_only"])
    assert shown["Only in the candidate"] == str(data["excluded"]["candidate_only"])
    captions = [c.value for c in at.caption]
    for key in ("baseline", "candidate"):
        assert f"CI {format_interval(data[key])} · n={data[key]['n']}" in captions
    assert (f"CI {format_interval(data['difference'], signed=True)} · "
            f"n={data['difference']['n']}") in captions

    segments = next(d.value for d in at.dataframe if "McNemar p" in d.value.columns)
    assert list(segments["segment"]) == [s["segment"] for s in data["segments"]]
    assert list(segments["n paired"]) == [s["n_paired"] for s in data["segments"]]
    assert list(segments["difference"]) == [
        format_interval(s["difference"], signed=True) for s in data["segments"]]
    assert list(segments["McNemar p"]) == pytest.approx(
        [s["mcnemar_p"] for s in data["segments"]])
    texts = [t.value for t in at.text]
    assert data["warnings"] and all(warning in texts for warning in data["warnings"])

    # Swapping the two datasets flips the sign of the difference.
    at.selectbox(key="cmp_baseline").select(AFTER_FIX_DATASET).run()
    at.selectbox(key="cmp_candidate").select(PRODUCTION_DATASET).run()
    assert not at.exception, at.exception
    flipped = {m.label: m.value for m in at.metric}
    assert flipped["Difference (candidate − baseline)"] == format_point(
        {"estimate": -data["difference"]["estimate"]}, signed=True)
    assert flipped["Only in the candidate"] == str(data["excluded"]["baseline_only"])


def _write(path: Path, lines: list[dict[str, Any]] | str) -> str:
    text = lines if isinstance(lines, str) else "".join(json.dumps(r) + "\n" for r in lines)
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_hostile_segments_stay_literal_and_unpaired_datasets_are_refused(
    app_env: Path, tmp_path: Path
) -> None:
    """Segment names reach the page as data only; datasets with no shared id get a message."""
    hostile = "**bold** <b>x</b> ![t](http://127.0.0.1:9/t.png)"
    db = str(app_env)

    def rows(dataset: str, prefix: str, n: int) -> list[dict[str, Any]]:
        return [{"id": f"{prefix}{i}", "question": f"q{i}", "answer": f"{dataset} answer {i}",
                 "sources": ["s"], "segment": hostile if i % 2 else "plain"}
                for i in range(n)]

    def verdicts(prefix: str, n: int, fails: set[int]) -> str:
        return "id,verdict\n" + "".join(
            f"{prefix}{i},{'fail' if i in fails else 'pass'}\n" for i in range(n))

    for dataset, prefix, n, fails in (("cal", "r", 40, set(range(0, 40, 3))),
                                      ("v1", "r", 30, {1, 2, 5, 9, 11}),
                                      ("v2", "r", 30, {2, 9}),
                                      ("other", "x", 5, {0})):
        _cli("--db", db, "import", _write(tmp_path / f"{dataset}.jsonl", rows(dataset, prefix, n)),
             "--dataset", dataset)
        _cli("--db", db, "verdicts", "import", _write(tmp_path / f"{dataset}.csv",
                                                      verdicts(prefix, n, fails)),
             "--dataset", dataset, "--judge", "jx")
    labels = "id,label\n" + "".join(f"r{i},{'fail' if i % 3 == 0 else 'pass'}\n"
                                    for i in range(40))
    _cli("--db", db, "labels", "import", _write(tmp_path / "labels.csv", labels),
         "--dataset", "cal", "--annotator", "zoe")

    at = calibration_page()
    at.selectbox(key="cal_dataset").select("cal").run()
    at.selectbox(key="cmp_baseline").select("v1").run()
    at.selectbox(key="cmp_candidate").select("v2").run()
    assert not at.exception, at.exception
    assert {m.label: m.value for m in at.metric}["Rows paired"] == "30"
    segments = next(d.value for d in at.dataframe if "McNemar p" in d.value.columns)
    assert hostile in segments["segment"].tolist()
    assert not any("127.0.0.1:9" in m.value or "<b>" in m.value for m in at.markdown)

    at.selectbox(key="cmp_candidate").select("other").run()
    assert not at.exception, at.exception
    assert any("compare needs the same rows" in w.value for w in at.warning)
    assert not any(m.label == "Rows paired" for m in at.metric)
