"""Convert the MT-Bench human judgments into files ``calibrate`` imports (a script, not installed).

Usage::

    python tools/import_mtbench.py SOURCE_DIR OUT_DIR

``SOURCE_DIR`` holds ``votes.jsonl``, ``conversations.jsonl`` and (optionally) ``question.jsonl``
as described in ``judges/demo/data/mtbench/SOURCE.md``. The script writes ``rows.jsonl``,
``labels.csv`` and ``gpt4.csv`` into ``OUT_DIR`` and prints the three commands that import them
(see ``docs/recipes/mtbench.md`` and :mod:`judges.demo.mtbench`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judges.demo.mtbench import MTBENCH_JUDGE, convert_mtbench


def main(argv: list[str] | None = None) -> int:
    """Convert, report what was written, and print the import commands."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--dataset", default="mtbench", help="dataset name in the commands")
    ns = parser.parse_args(argv)
    files = convert_mtbench(ns.source_dir, ns.out_dir)
    print(f"{files.n_items} pairwise rows -> {files.rows}")
    print(f"{files.n_votes} human votes -> {files.labels}")
    print(f"{files.n_verdicts} GPT-4 verdicts ({files.inconsistent} inconsistent across orders, "
          f"imported as tie) -> {files.verdicts}")
    for empty in files.empty_answers:
        print(f"warning: empty answer {empty} (imported as empty: a judge should fail it)")
    for conflict in files.conflicts:
        print(f"warning: {conflict}: GPT-4's published verdicts differ for the same text; the "
              "first is kept")
    print("\nImport them with:")
    print(f"  calibrate import {files.rows} --dataset {ns.dataset}")
    print(f"  calibrate labels import {files.labels} --dataset {ns.dataset} --selection all")
    print(f"  calibrate verdicts import {files.verdicts} --dataset {ns.dataset} "
          f"--judge {MTBENCH_JUDGE}")
    print(f"  calibrate report --dataset {ns.dataset} --judge {MTBENCH_JUDGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
