"""The demo's alignment cycle and stress run (`make demo-align`) with the scripted stand-ins."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from cli_runner import run
from repo_paths import REPO

from judges.demo import LABELLED_DATASET, _check_replaceable

DEMO_JUDGE = str(REPO / "judges" / "demo" / "data" / "judges" / "qwen1.5b-oneshot.yaml")


def test_demo_cycle_is_marked_stand_in_and_the_demo_rebuilds_after_it(
    tmp_path: Path, copy_demo: Callable[[Path], Path]
) -> None:
    db = copy_demo(tmp_path / "demo.duckdb")
    aligned = run(db, "judge", "align", DEMO_JUDGE, "--dataset", LABELLED_DATASET,
                     "--model", "scripted/demo-judge")
    assert aligned.exit_code == 0, aligned.output
    out = aligned.stdout
    assert "STAND-IN: the judge (scripted/demo-judge)" in out
    assert "STAND-IN: the proposer (scripted/proposer)" in out
    split = re.search(r"(\d+) dev and (\d+) test rows", aligned.output)
    assert split is not None and int(split.group(1)) + int(split.group(2)) == 200
    assert re.search(r"McNemar exact \(candidate vs current, \d+ test rows\).*p = [01]\.\d{4}",
                     out)
    assert "Nothing adopted." in out
    stressed = run(db, "judge", "stress", DEMO_JUDGE, "--dataset", LABELLED_DATASET,
                      "--model", "scripted/demo-judge", "--limit", "60")
    assert stressed.exit_code == 0, stressed.output
    for test in ("source_deletion", "source_order", "answer_padding", "embedded_instructions"):
        assert re.search(rf"{test} \(must [a-z ]+; right flip rate [01]\): flip rate "
                         r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\], n=\d+", stressed.stdout)
    # The perturbed copies belong to the demo: the file may still be rebuilt (no refusal).
    _check_replaceable(db, 0.0)
