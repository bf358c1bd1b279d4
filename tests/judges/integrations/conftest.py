"""A real judge card of the demo, exported once per session, and its judge's verdicts.

The demo's claim-split judge (a 1.5B local model's recorded verdicts, imported with its config)
is the one judge of the demo whose card meets every rule. Its card, with the verdicts of its
calibration run (the same run: corrected pass rate 0.673 [0.640, 0.685], n = 91) and of the
production week (segment-aware, not identified: [0, 1]) as ``calibrate verdicts export``
writes them, are what the integrations gate on.
"""

from __future__ import annotations

import shutil

import pytest
from demo_card import DemoCard
from stores import opened_workspace

from judges.demo import DemoSummary
from judges.outputs.card import export_card
from judges.verdicts import export_verdicts

JUDGE = "qwen1.5b-claimsplit"


@pytest.fixture(scope="session")
def demo_card(demo_build: DemoSummary, tmp_path_factory: pytest.TempPathFactory) -> DemoCard:
    folder = tmp_path_factory.mktemp("demo-card")
    db = folder / "demo.duckdb"
    shutil.copyfile(demo_build.db_path, db)
    with opened_workspace(db) as workspace:
        export_card(workspace, "demo-labelled", JUDGE, folder / "card.json")
        export_verdicts(workspace, "demo-labelled", JUDGE, folder / "calibration.csv")
        export_verdicts(workspace, "demo-production-week", JUDGE, folder / "week.csv")
    return DemoCard(db, folder / "card.json", folder / "calibration.csv", folder / "week.csv")
