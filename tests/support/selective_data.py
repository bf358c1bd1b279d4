"""A small database for the judge that abstains: a cheap judge, the scripted stand-in, a target.

Dataset ``sel`` (120 rows, every row labelled at random by alice) and target ``tgt`` (60 rows,
unlabelled). Human verdict of row ``i``: fail when ``i % 3 == 0``, else pass. The cheap judge
``cheap`` is imported with three repeats per row: on the 80 "easy" rows of ``sel`` (40 of
``tgt``) its three calls agree (score 4/5) and it is wrong on rows 0 and 1; on the other, "hard"
rows only two of three agree (score 3/5) and its majority verdict is wrong on every other row.
With ``stand_in``, the scripted stand-in (``--model scripted/demo``, two repeats in both
orders, word overlap) is right on every row; on ``tgt`` it runs on the first 54 rows only.
Built with CLI commands only.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import ok
from report_data import write_csv

PASS_TEXT = ("Open alpha bravo charlie settings.", ["Open alpha bravo charlie settings delta."])
FAIL_TEXT = ("Zulu yankee xray whisky.", ["Open alpha bravo charlie settings delta."])


def human(i: int) -> str:
    """The experts' verdict on row ``i``."""
    return "pass" if i % 3 else "fail"


def _rows(prefix: str, n: int) -> list[dict[str, object]]:
    out = []
    for i in range(n):
        answer, sources = PASS_TEXT if human(i) == "pass" else FAIL_TEXT
        out.append({"id": f"{prefix}{i:03d}", "question": f"How do I set {prefix} option {i}?",
                    "answer": answer, "sources": sources})
    return out


def _cheap(prefix: str, n: int, easy: int) -> list[list[object]]:
    flip = {"pass": "fail", "fail": "pass"}
    rows: list[list[object]] = []
    for i in range(n):
        h = human(i)
        if i < easy:
            v = flip[h] if i in (0, 1) else h
            rows += [[f"{prefix}{i:03d}", v, r] for r in range(3)]
        else:
            major = h if i % 2 == 0 else flip[h]
            rows += [[f"{prefix}{i:03d}", v, r] for r, v in
                     enumerate([major, major, flip[major]])]
    return rows


def build_selective_db(folder: Path, *, stand_in: bool = True) -> Path:
    """Build the database (module docstring) in ``folder``; its path."""
    db = folder / "template.duckdb"
    (folder / "sel.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows("s", 120)))
    (folder / "tgt.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows("t", 60)))
    ok(db, "import", str(folder / "sel.jsonl"), "--dataset", "sel")
    ok(db, "import", str(folder / "tgt.jsonl"), "--dataset", "tgt")
    labels = write_csv(folder / "labels.csv", ["id", "label"],
                    [[f"s{i:03d}", human(i)] for i in range(120)])
    ok(db, "labels", "import", str(labels), "--dataset", "sel", "--annotator", "alice",
       "--selection", "random")
    for name, prefix, n, easy in (("sel", "s", 120, 80), ("tgt", "t", 60, 40)):
        f = write_csv(folder / f"cheap-{name}.csv", ["id", "verdict", "repeat"],
                   _cheap(prefix, n, easy))
        ok(db, "verdicts", "import", str(f), "--dataset", name, "--judge", "cheap")
        if stand_in:
            ok(db, "judge", "run", "faithfulness", "--dataset", name, "--model",
               "scripted/demo", "--repeats", "2", "--swap", "--limit",
               str(n if name == "sel" else 54))
    return db
