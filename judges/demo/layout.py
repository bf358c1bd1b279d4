"""Names shared by the generator and the loader: datasets, files, annotators, criteria."""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"

LABELLED_DATASET = "demo-labelled"
PRODUCTION_DATASET = "demo-production-week"
AFTER_FIX_DATASET = "demo-week-after-fix"
LABELLED_FILE = "labelled.jsonl"
PRODUCTION_FILE = "production_week.jsonl"
AFTER_FIX_FILE = "week_after_fix.jsonl"
KB_FILE = "kb.jsonl"
README_FILE = "README.md"
LABELS_DIR = "labels"
VERDICTS_DIR = "verdicts"
STANDIN_CONFIG = "standin-simulated.yaml"
"""The stand-in judge's config in VERDICTS_DIR: simulated verdicts, not a judge."""
JUDGES_DIR = "judges"
"""Judge configs of the recorded verdicts: ``judges/<judge>.yaml`` (imported with them)."""
ANNOTATORS = ("dana", "emeka")
CRITERIA = ("faithfulness", "correctness")
MTBENCH_DATASET = "mtbench"
"""The second story: MT-Bench's expert votes and GPT-4's pairwise verdicts (CC BY 4.0)."""
MTBENCH_DIR = "mtbench"
