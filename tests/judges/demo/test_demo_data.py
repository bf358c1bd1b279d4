"""The shipped demo files: counts, proportions, ground truth, labels, and reproducibility."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from judges.demo.layout import (
    ANNOTATORS,
    DATA_DIR,
    KB_FILE,
    LABELLED_FILE,
    LABELS_DIR,
    PRODUCTION_FILE,
)
from tools.demo import generate
from tools.demo.content import FAILURE_MODES, PAGES, SEGMENTS

PASSING_MODES = {"correct", "correct_refusal"}
BORDERLINE_MODES = {"wrong_refusal", "dropped_condition", "answered_without_source",
                    "unsupported_claim"}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _labels(criterion: str, annotator: str) -> dict[str, tuple[str, str]]:
    path = DATA_DIR / LABELS_DIR / f"{criterion}-{annotator}.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == ["id", "label", "note"]
        return {r["id"]: (r["label"], r["note"]) for r in reader}


@pytest.fixture(scope="module")
def labelled() -> list[dict[str, Any]]:
    return _jsonl(DATA_DIR / LABELLED_FILE)


@pytest.fixture(scope="module")
def production() -> list[dict[str, Any]]:
    return _jsonl(DATA_DIR / PRODUCTION_FILE)


@pytest.fixture(scope="module")
def kb() -> dict[str, str]:
    """source_id -> the passage text as given to the answerer."""
    passages = {}
    for page in _jsonl(DATA_DIR / KB_FILE):
        for p in page["passages"]:
            passages[p["source_id"]] = f"{page['title']}\n{p['text']}"
    return passages


def _pass_rate(rows: list[dict[str, Any]], criterion: str = "faithfulness") -> float:
    return sum(r["metadata"][f"true_{criterion}"] == "pass" for r in rows) / len(rows)


def test_knowledge_base_size_and_shape(kb: dict[str, str]) -> None:
    pages = _jsonl(DATA_DIR / KB_FILE)
    assert 15 <= len(pages) <= 25
    assert len({p["page_id"] for p in pages}) == len(pages)
    for page in pages:
        assert 2 <= len(page["passages"]) <= 5, page["page_id"]
    topics = {p["page_id"] for p in pages}
    assert {"plans", "sso", "seats", "billing", "security-addon", "data-retention",
            "error-codes", "api-rate-limits", "exports", "audit-log"} <= topics


def test_row_counts_fields_and_ids(
    labelled: list[dict[str, Any]], production: list[dict[str, Any]], kb: dict[str, str]
) -> None:
    assert 150 <= len(labelled) <= 250
    assert len(production) >= 500
    ids = [r["id"] for r in labelled + production]
    assert len(set(ids)) == len(ids)
    page_ids = {p.page_id for p in PAGES}
    fields = ["id", "question", "answer", "sources", "reference", "segment", "document_id",
              "metadata"]
    seen = set()
    for row in labelled + production:
        assert list(row) == fields
        assert row["question"] and row["answer"] and row["reference"]
        assert 1 <= len(row["sources"]) <= 4, row["id"]
        for source in row["sources"]:
            assert source["text"] == kb[source["source_id"]], row["id"]
        assert row["document_id"] in page_ids
        assert row["segment"] in SEGMENTS
        key = (row["question"], row["answer"], tuple(s["source_id"] for s in row["sources"]))
        assert key not in seen, f"{row['id']} repeats another row"
        seen.add(key)
    for week_row in production:
        assert week_row["metadata"]["logged_at"].startswith("2026-11-")


def test_every_segment_and_failure_mode_is_present(labelled: list[dict[str, Any]]) -> None:
    segments = Counter(r["segment"] for r in labelled)
    assert set(segments) == set(SEGMENTS)
    assert min(segments.values()) >= 20
    modes = Counter(r["metadata"]["failure_mode"] for r in labelled)
    assert set(modes) == set(FAILURE_MODES)
    assert min(modes.values()) >= 5
    # Correct answers are the largest single group, as in real traffic.
    assert modes.most_common(1)[0][0] == "correct"


def test_true_pass_rates_and_label_shift(
    labelled: list[dict[str, Any]], production: list[dict[str, Any]]
) -> None:
    labelled_rate, week_rate = _pass_rate(labelled), _pass_rate(production)
    assert 0.6 <= labelled_rate <= 0.7
    assert 0.75 <= week_rate <= 0.85
    assert week_rate - labelled_rate >= 0.1
    # The segment mix shifts too, not only the pass rate.
    share = {name: Counter(r["segment"] for r in rows)["lookup"] / len(rows)
             for name, rows in (("labelled", labelled), ("week", production))}
    assert share["week"] > share["labelled"] + 0.05


def test_ground_truth_follows_the_failure_mode(
    labelled: list[dict[str, Any]], production: list[dict[str, Any]]
) -> None:
    for row in labelled + production:
        meta = row["metadata"]
        mode, given = meta["failure_mode"], {s["source_id"] for s in row["sources"]}
        needed = set(meta["needed_sources"])
        assert (meta["true_faithfulness"] == "pass") == (mode in PASSING_MODES), row["id"]
        if row["segment"] == "unanswerable":
            assert mode in {"correct_refusal", "unsupported_claim"} and not needed
            assert meta["retrieval"] == "none_needed"
            assert meta["true_correctness"] == meta["true_faithfulness"]
        elif meta["retrieval"] == "complete":
            assert needed <= given, row["id"]
            assert mode not in {"correct_refusal", "answered_without_source"}
        else:
            assert mode in {"correct_refusal", "answered_without_source"}, row["id"]
            assert not needed <= given, row["id"]
            if meta["retrieval"] == "missing":
                assert not needed & given, row["id"]
            # Faithful refusals after a missed retrieval are still not correct answers;
            # unfaithful answers from outside the sources can still be right.
            expected = "pass" if mode == "answered_without_source" else "fail"
            assert meta["true_correctness"] == expected, row["id"]


def test_labels_refer_to_rows_and_cover_the_set(labelled: list[dict[str, Any]]) -> None:
    ids = {r["id"] for r in labelled}
    faithfulness = {a: _labels("faithfulness", a) for a in ANNOTATORS}
    correctness = {a: _labels("correctness", a) for a in ANNOTATORS}
    for per_annotator in (faithfulness, correctness):
        for labels in per_annotator.values():
            assert set(labels) <= ids
            assert {v for v, _ in labels.values()} <= {"pass", "fail", "unsure"}
            for item_id, (verdict, note) in labels.items():
                if verdict == "fail":
                    assert note.strip(), f"fail without a note on {item_id}"
    covered = set().union(*(set(v) for v in faithfulness.values()))
    assert covered == ids
    assert len(correctness["dana"]) >= 100


@pytest.mark.parametrize(("criterion", "low", "high"),
                         [("faithfulness", 0.08, 0.15), ("correctness", 0.02, 0.15)])
def test_overlap_and_realistic_disagreement(
    labelled: list[dict[str, Any]], criterion: str, low: float, high: float
) -> None:
    modes = {r["id"]: r["metadata"]["failure_mode"] for r in labelled}
    dana, emeka = _labels(criterion, "dana"), _labels(criterion, "emeka")
    shared = set(dana) & set(emeka)
    assert len(shared) >= 60
    differ = [i for i in shared if dana[i][0] != emeka[i][0]]
    assert low <= len(differ) / len(shared) <= high
    # Disagreement sits mostly on the borderline failure modes.
    borderline = sum(modes[i] in BORDERLINE_MODES | {"correct_refusal"} for i in differ)
    assert borderline >= len(differ) / 2


def test_expert_labels_mostly_match_the_truth(labelled: list[dict[str, Any]]) -> None:
    truth = {r["id"]: r["metadata"] for r in labelled}
    for criterion in ("faithfulness", "correctness"):
        for annotator in ANNOTATORS:
            labels = _labels(criterion, annotator)
            agree = sum(v == truth[i][f"true_{criterion}"] for i, (v, _) in labels.items())
            assert agree / len(labels) >= 0.9, (criterion, annotator)


def test_generator_reproduces_the_shipped_files_byte_for_byte(tmp_path: Path) -> None:
    written = generate.generate(tmp_path)
    assert written
    for path in written:
        relative = path.relative_to(tmp_path)
        assert path.read_bytes() == (DATA_DIR / relative).read_bytes(), f"{relative} differs"
    shipped = {
        p.relative_to(DATA_DIR) for p in DATA_DIR.rglob("*")
        # verdicts/ are recorded (tools/demo/record.py, tools/demo/standin.py), judges/ holds
        # the configs that recorded them, and mtbench/ is real public data
        # (judges/demo/mtbench.py): none is the generator's output.
        if p.is_file() and p.relative_to(DATA_DIR).parts[0] not in ("verdicts", "judges", "mtbench")
    }
    # kb.jsonl is the help centre as written (the generator's input), not an output.
    assert shipped == {p.relative_to(tmp_path) for p in written} | {Path(KB_FILE)}


def test_generator_cli_writes_to_the_given_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    generate.main(["--out", str(tmp_path / "out")])
    assert (tmp_path / "out" / LABELLED_FILE).exists()
    assert LABELLED_FILE in capsys.readouterr().out
