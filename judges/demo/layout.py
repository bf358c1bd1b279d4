"""Names shared by the generator and the loader: datasets, files, annotators, criteria."""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"

LABELLED_DATASET = "demo-labelled"
PRODUCTION_DATASET = "demo-production-week"
LABELLED_FILE = "labelled.jsonl"
PRODUCTION_FILE = "production_week.jsonl"
KB_FILE = "kb.jsonl"
README_FILE = "README.md"
LABELS_DIR = "labels"
VERDICTS_DIR = "verdicts"
ANNOTATORS = ("dana", "emeka")
CRITERIA = ("faithfulness", "correctness")
