"""The judge facts the label queue reads (judges.workflows.queue); absent on a fresh database."""

from __future__ import annotations

import json
from pathlib import Path

from judges.config import load_builtin
from judges.providers.scripted import ScriptedProvider
from judges.runner import run_judge
from judges.workflows import queue as label_queue
from judges.workspace import Workspace
from labels import LabelStore
from labels.importing import import_rows


def test_label_queue_on_a_database_without_judge_tables(store: LabelStore) -> None:
    assert label_queue.judge_run_counts(Workspace.of(store)) == {}
    found = label_queue.queue_verdicts(Workspace.of(store), "d")
    assert found is None
    assert label_queue.flips_of(found) is None
    assert label_queue.fingerprint(Workspace.of(store), "d") == "none"


def test_label_queue_reads_one_config_per_dataset(store: LabelStore, tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(
        json.dumps({"id": k, "question": f"q {k}", "answer": f"answer {k}",
                    "sources": [f"one {k}", f"two {k}"]}) + "\n"
        for k in ("a", "b", "c")
    ))
    import_rows(store, path, "d")
    import_rows(store, path, "other")
    judge = load_builtin("faithfulness-oneshot")
    # The first config passes everything; its swap flips row a (the swapped prompt starts
    # with the second source).
    flipper = ScriptedProvider("x", responder=lambda r: (
        "VERDICT: FAIL" if "two a" in r.messages[-1].content.split("one a")[0]
        else "VERDICT: PASS"))
    run_judge(judge, "d", workspace=Workspace.of(store), provider=flipper, swap=True)
    run_judge(judge, "other", workspace=Workspace.of(store), provider=flipper)
    assert label_queue.judge_run_counts(Workspace.of(store)) == {"d": 1, "other": 1}
    first = label_queue.queue_verdicts(Workspace.of(store), "d")
    assert first is not None
    assert label_queue.flips_of(first) == frozenset({"a"})
    # The judge's own rule (majority over two calls that disagree) leaves row a unsure.
    assert first.verdicts == {"a": "unsure", "b": "pass", "c": "pass"}
    before = label_queue.fingerprint(Workspace.of(store), "d")
    # A second config, run later, fails everything and never flips: the queue now follows it
    # alone, and row a's flip under the first config is not mixed in.
    strict = judge.with_revision(system="Be strict.")
    run_judge(strict, "d", workspace=Workspace.of(store),
              provider=ScriptedProvider("x", ["VERDICT: FAIL"] * 6), swap=True)
    found = label_queue.queue_verdicts(Workspace.of(store), "d")
    assert found is not None and found.config_id == strict.config_id
    assert found.verdicts == {"a": "fail", "b": "fail", "c": "fail"}
    assert found.flips == frozenset()
    assert label_queue.fingerprint(Workspace.of(store), "d") != before
