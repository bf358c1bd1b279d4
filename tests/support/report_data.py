"""Small, exactly-known calibration data written to files in the tools' import formats.

Calibration dataset ``cal`` (120 rows, two segments, three rows per source document):

* alice labels every row: 70 pass, 50 fail. Judge ``judge-a`` on those rows: of alice's 70
  passes it passes 60, of her 50 fails it passes 8; one more row (an alice pass) is unscored.
* bob labels 40 rows that alice labelled too, disagreeing with her on 4 and unsure on 2, so the
  consensus of those rows is ``unsure`` (a tie) and human-human agreement is measurable.
* ``judge-b`` is a second, worse judge on the same rows (for the leaderboard).
* ``swapper`` judged every row in both orders; 10 rows flip.

Target dataset ``tgt`` (400 rows): ``judge-a`` passes 250, fails 147, leaves 3 unscored.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from stores import opened_workspace

from judges.verdicts import import_verdicts
from judges.workspace import Workspace
from labels import import_labels, import_rows

N_CAL, N_PASS, N_TGT = 120, 70, 400


@dataclass(frozen=True)
class ReportFiles:
    """Paths of the generated files."""

    cal_items: Path
    tgt_items: Path
    alice: Path
    bob: Path
    judge_a_cal: Path
    judge_a_tgt: Path
    judge_b_cal: Path
    swapper_cal: Path
    new_verdicts: Path


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    """Write ``header`` and ``rows`` as a CSV file at ``path``; the path."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_report_files(folder: Path) -> ReportFiles:
    """Write the data described in the module docstring into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    cal_ids = [f"c{i:03d}" for i in range(N_CAL)]
    human = ["pass"] * N_PASS + ["fail"] * (N_CAL - N_PASS)
    # judge-a: pass rows 0..59 pass, 60..68 fail, 69 unscored; fail rows 70..77 pass, rest fail.
    judge_a = (["pass"] * 60 + ["fail"] * 9 + [""] + ["pass"] * 8
               + ["fail"] * (N_CAL - N_PASS - 8))
    perm = rng.permutation(N_CAL)  # spread the cells over segments and documents
    ids = [cal_ids[p] for p in perm]
    items = [
        {
            "id": cal_ids[i],
            "question": f"How do I change setting {i}?",
            "answer": f"Open settings and toggle option {i}. **bold** ![x](http://127.0.0.1:9/t.png)",
            "sources": [f"Option {i} lives under settings."],
            "segment": "billing" if i % 2 else "search",
            "doc_id": f"d{i // 3:02d}",
        }
        for i in range(N_CAL)
    ]
    cal_items = _write_jsonl(folder / "cal_items.jsonl", items)
    alice = write_csv(folder / "alice.csv", ["id", "label", "note"], [
        [ids[k], human[k], "needs a source **now**" if k == 3 else ""] for k in range(N_CAL)
    ])
    bob_rows = []
    for k in range(40):
        verdict = human[k * 3]
        if k < 4:
            verdict = "fail" if verdict == "pass" else "pass"
        elif k < 6:
            verdict = "unsure"
        bob_rows.append([ids[k * 3], verdict, ""])
    bob = write_csv(folder / "bob.csv", ["id", "label", "note"], bob_rows)
    judge_a_cal = write_csv(folder / "judge_a_cal.csv", ["id", "verdict", "reasoning"], [
        [ids[k], judge_a[k], f"reason {k}" if judge_a[k] else ""] for k in range(N_CAL)
    ])
    judge_b = [
        ("fail" if v == "pass" else "pass") if k % 4 == 0 else v
        for k, v in enumerate(human)
    ]
    judge_b_cal = write_csv(folder / "judge_b_cal.csv", ["id", "verdict"], [
        [ids[k], judge_b[k]] for k in range(N_CAL)
    ])
    swap_rows = []
    for k in range(N_CAL):
        original = human[k]
        swapped = ("fail" if original == "pass" else "pass") if k % 12 == 0 else original
        swap_rows += [[ids[k], 0, "original", original], [ids[k], 0, "swapped", swapped]]
    swapper_cal = write_csv(folder / "swapper_cal.csv", ["id", "repeat", "order", "verdict"],
                             swap_rows)
    tgt_ids = [f"t{i:03d}" for i in range(N_TGT)]
    tgt_items = _write_jsonl(folder / "tgt_items.jsonl", [
        {"id": t, "question": f"q {t}", "answer": f"a {t}", "sources": [f"s {t}"],
         "segment": "billing" if i % 2 else "search"}
        for i, t in enumerate(tgt_ids)
    ])
    tgt_verdicts = ["pass"] * 250 + ["fail"] * 147 + [""] * 3
    judge_a_tgt = write_csv(folder / "judge_a_tgt.csv", ["id", "verdict"], [
        [t, v] for t, v in zip(tgt_ids, tgt_verdicts, strict=True)
    ])
    new_verdicts = write_csv(folder / "new_verdicts.csv", ["id", "verdict"], [
        [f"n{i:03d}", "pass" if i < 180 else "fail"] for i in range(200)
    ])
    return ReportFiles(cal_items, tgt_items, alice, bob, judge_a_cal, judge_a_tgt, judge_b_cal,
                       swapper_cal, new_verdicts)


def build_workspace(workspace: Workspace, files: ReportFiles) -> None:
    """Import every file into ``workspace`` through the public import functions."""
    store = workspace.labels
    import_rows(store, files.cal_items, "cal")
    import_rows(store, files.tgt_items, "tgt")
    import_labels(store, files.alice, "cal", annotator="alice")
    import_labels(store, files.bob, "cal", annotator="bob")
    import_verdicts(workspace, files.judge_a_cal, dataset="cal", judge="judge-a")
    import_verdicts(workspace, files.judge_a_tgt, dataset="tgt", judge="judge-a")
    import_verdicts(workspace, files.judge_b_cal, dataset="cal", judge="judge-b")
    import_verdicts(workspace, files.swapper_cal, dataset="cal", judge="swapper")


def build_report_db(folder: Path) -> tuple[Path, ReportFiles]:
    """Write the files into ``folder/files`` and import them all into ``folder/template.duckdb``.

    A template for module-scoped fixtures: tests copy the file rather than import again.
    """
    files = write_report_files(folder / "files")
    db = folder / "template.duckdb"
    with opened_workspace(db) as workspace:
        build_workspace(workspace, files)
    return db, files
