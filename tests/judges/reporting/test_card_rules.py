"""Judge cards: refused when they would mislead unless forced, counts that add up, the config.

A card is what CI trusts, so it is refused from a stand-in (scripted) provider, from a cancelled
or partial run, and below 30 labelled rows per human class, unless forced; a forced card says so
inside. Verdicts imported with ``--config`` carry their judge config into the card, as the
demo's recorded judges do.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from stores import opened_workspace

from calibrate_app.cli import cli
from judges.config import load_builtin, load_config
from judges.demo import LABELLED_DATASET, PRODUCTION_DATASET, DemoSummary
from judges.demo.layout import DATA_DIR, JUDGES_DIR, PRODUCTION_FILE, VERDICTS_DIR
from judges.outputs.card import CardRefusedError, build_card, card_counts, card_problems, load_card
from judges.providers.scripted import ScriptedProvider
from judges.reporting import calibration_report, find_judge
from judges.runner import run_judge
from judges.workspace import Workspace
from labels import import_rows, open_store

CLAIMSPLIT = "qwen1.5b-claimsplit"
ONESHOT = "qwen1.5b-oneshot"


@pytest.fixture(scope="module")
def template_db(demo_build: DemoSummary) -> Path:
    """The demo, built once for the session (each test gets its own copy)."""
    return Path(demo_build.db_path)


def cli_run(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_demo_judge_card_carries_its_config_and_counts_that_add_up(
    workspace_copy: Workspace,
) -> None:
    card = build_card(workspace_copy, LABELLED_DATASET, CLAIMSPLIT)
    assert card.forced == [] and not card.judge.stand_in
    config = load_config(DATA_DIR / JUDGES_DIR / f"{CLAIMSPLIT}.yaml")
    assert card.judge.origin == "config" and card.judge.config is not None
    assert card.judge.config_id == config.config_id == "b2:1967089ffe21956c2b7a4d04596781e0"
    assert card.judge.config["system"] == config.system  # the prompt travels with the card
    # One vocabulary: labelled_rows is counts.labelled.rows; n is the rows used; they add up.
    m, counts = card.metrics, card.metrics.counts
    assert counts is not None
    labelled, human = counts["labelled"], counts["human"]
    assert card.calibration.labelled_rows == labelled["rows"] == human["rows"] == 200
    assert m.n == counts["used"]["rows"] == m.m0 + m.m1 == 86
    assert (m.m1, m.m0) == (54, 32)
    assert labelled["judged"] + labelled["not_judged"] == labelled["rows"]
    assert labelled["not_judged"] == (labelled["unscored"] + labelled["unsure"]
                                      + labelled["not_run"])
    assert (labelled["judged"], labelled["unscored"], labelled["unsure"],
            labelled["not_run"]) == (91, 0, 9, 100)
    assert (m.unscored, m.unsure) == (labelled["unscored"], labelled["unsure"])
    assert card_counts(card) == (
        "86 of 200 labelled rows used (human pass 54, fail 32): the 91 the judge judged, less "
        "5 the humans were unsure on; 109 not judged (0 unscored, 9 unsure, 100 not run)")


def test_below_the_small_sample_threshold_is_refused_unless_forced(
    workspace_copy: Workspace,
) -> None:
    report = calibration_report(workspace_copy, LABELLED_DATASET, ONESHOT)
    data = report.to_json()
    assert (data["m0"], data["m1"]) == (27, 51)
    problems = card_problems(workspace_copy, report)
    # The one-shot judge (a coin flip at temperature 0.8) is also worse than chance: said first.
    assert len(problems) == 2
    assert problems[0].startswith("the judge is worse than chance: the judge's sensitivity + "
                                  "specificity - 1 = -0.034")
    assert problems[1] == (
        "too few labels: 27 human-fail and 51 human-pass rows used (at least 30 of each are "
        "needed for rates worth a gate)")
    with pytest.raises(CardRefusedError, match="too few labels: 27 human-fail") as caught:
        build_card(workspace_copy, LABELLED_DATASET, ONESHOT)
    assert caught.value.reasons == problems
    card = build_card(workspace_copy, LABELLED_DATASET, ONESHOT, force=True)
    assert card.forced == problems
    assert card.warnings[0] == "FORCED: " + problems[0]
    assert report.warnings[0].startswith("WORSE THAN CHANCE:")
    assert report.to_json()["worse_than_chance"] is not None


def test_a_stand_in_judge_and_a_cancelled_run_are_refused(workspace_copy: Workspace) -> None:
    config = load_builtin("faithfulness").with_revision(model="scripted/demo")
    ids = sorted(workspace_copy.labels.labelled_item_ids(LABELLED_DATASET, "dana", "faithfulness"))

    def run(**options: object) -> None:
        # In a thread: the runner starts its own event loop.
        worker = threading.Thread(target=run_judge, args=(config, LABELLED_DATASET), kwargs={
            "workspace": workspace_copy, "provider": ScriptedProvider("demo"),
            "item_ids": ids, "concurrency": 4, **options})
        worker.start()
        worker.join()

    run()
    report = calibration_report(workspace_copy, LABELLED_DATASET, config.config_id)
    assert report.stand_in == ("scripted/demo",)
    assert report.warnings[0].startswith("STAND-IN: the verdicts come from scripted/demo")
    assert report.to_json()["judge"]["stand_in"] is True
    problems = card_problems(workspace_copy, report)
    assert problems[0].startswith("the verdicts come from scripted/demo, a stand-in")
    assert not any("latest run" in p for p in problems)  # that run completed
    # A second run with more repeats, stopped before it sends anything: cancelled.
    stop = threading.Event()
    stop.set()
    run(repeats=2, should_stop=stop)
    report = calibration_report(workspace_copy, LABELLED_DATASET, config.config_id)
    cancelled = [p for p in card_problems(workspace_copy, report) if "latest run" in p]
    assert len(cancelled) == 1 and " is cancelled (" in cancelled[0]
    assert cancelled[0].endswith(f"({len(ids)} of {2 * len(ids)} calls not run)")  # 1 cached
    card = build_card(workspace_copy, LABELLED_DATASET, config.config_id, force=True)
    assert card.judge.stand_in and len(card.forced) >= 2


def test_cli_refuses_previews_and_forces(db_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "card.json"
    code, stdout, stderr = cli_run(db_copy, "card", "export", "--dataset", LABELLED_DATASET,
                                   "--judge", ONESHOT, "-o", str(out))
    assert code == 1 and not out.exists()
    assert "no judge card: the judge is worse than chance" in stderr
    assert "too few labels: 27 human-fail and 51 human-pass" in stderr
    assert "--force" in stderr
    # Preview: the card as it would be written, and why it would be refused; nothing written.
    code, stdout, stderr = cli_run(db_copy, "card", "export", "--dataset", LABELLED_DATASET,
                                   "--judge", ONESHOT, "--preview")
    assert code == 0 and not out.exists()
    previewed = json.loads(stdout)
    assert previewed["kind"] == "calibrate.judge_card"
    assert previewed["forced"][1].startswith("too few labels")
    assert stderr.startswith("Would be refused without --force: the judge is worse than chance")
    code, stdout, stderr = cli_run(db_copy, "card", "export", "--dataset", LABELLED_DATASET,
                                   "--judge", ONESHOT, "-o", str(out), "--force")
    assert code == 0, stderr
    assert stderr.startswith("FORCED: the judge is worse than chance")
    assert load_card(out).forced == previewed["forced"]
    code, stdout, _ = cli_run(db_copy, "card", "show", str(out))
    assert code == 0 and "  FORCED: too few labels" in stdout
    assert "78 of 200 labelled rows used (human pass 51, fail 27)" in stdout
    # The demo's claim-split judge meets every rule.
    code, stdout, stderr = cli_run(db_copy, "card", "export", "--dataset", LABELLED_DATASET,
                                   "--judge", CLAIMSPLIT, "-o", str(tmp_path / "ok.yaml"))
    assert code == 0 and stderr == ""
    assert "86 of 200 labelled rows used (human pass 54, fail 32)" in stdout
    assert "--preview" in cli_run(db_copy, "card", "export", "--dataset", LABELLED_DATASET,
                                  "--judge", CLAIMSPLIT)[2]


def test_verdicts_import_with_a_config_links_them_to_it(db_path: Path) -> None:
    store = open_store(str(db_path))
    import_rows(store, DATA_DIR / PRODUCTION_FILE, "week")
    store.db.close()
    verdicts = DATA_DIR / VERDICTS_DIR / PRODUCTION_DATASET / "faithfulness" / f"{CLAIMSPLIT}.jsonl"
    config_file = DATA_DIR / JUDGES_DIR / f"{CLAIMSPLIT}.yaml"
    code, _, stderr = cli_run(db_path, "verdicts", "import", str(verdicts), "--dataset", "week",
                              "--config", str(config_file), "--judge", "someone-else")
    assert code == 1 and "the config is judge 'qwen1.5b-claimsplit', not 'someone-else'" in stderr
    code, _, stderr = cli_run(db_path, "verdicts", "import", str(verdicts), "--dataset", "week")
    assert code == 2 and "give --judge NAME or --config FILE" in stderr
    code, stdout, stderr = cli_run(db_path, "verdicts", "import", str(verdicts), "--dataset",
                                   "week", "--config", str(config_file))
    assert code == 0, stderr
    config = load_config(config_file)
    assert f"(judge '{CLAIMSPLIT}', {config.config_id})" in stdout
    with opened_workspace(db_path) as workspace:
        ref = find_judge(workspace, CLAIMSPLIT, dataset="week")
        assert ref.config_id == config.config_id and ref.config == config
        assert ref.origin == "config"
    # A file whose config_id column names another config is refused under --config.
    other = db_path.parent / "other.csv"
    other.write_text("id,verdict,config_id\nweek-0001,pass,b2:00000000000000000000000000000000\n",
                     encoding="utf-8")
    code, _, stderr = cli_run(db_path, "verdicts", "import", str(other), "--dataset", "week",
                              "--config", str(config_file))
    assert code == 2 and "not from the config given" in stderr
