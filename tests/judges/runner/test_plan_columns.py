"""Planning as columns: the same hashes, calls, cache and estimates as one object per call."""

from __future__ import annotations

from typing import Any

import pytest

import judges.run_plan as run_plan
from judges.config import JudgeConfig
from judges.prompts import RenderError, render
from judges.stores.judge_store import CallRecord, JudgeStore, item_hash
from judges.workspace import Workspace
from labels.item_hashes import content_hashes
from labels.stores.label_store import LabelStore

# Text JSON writers disagree on: control characters, quotes, backslashes, slashes, non-ASCII,
# astral characters, line separators.
TRICKY = ["plain", "tab\there", "vt\x0bthen\x1fus", 'quote " and \\ back/slash', "é ñ 中文",
          "smile \U0001f600", "line\u2028sep", "nul-ish \x01\x02", "<b>tag</b>"]


def tricky_rows(n: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(n):
        text = TRICKY[i % len(TRICKY)]
        row: dict[str, Any] = {"id": f"r{i}", "question": f"q{i} {text}?", "answer": f"a {text}",
                               "sources": [f"s{i} {text}", {"text": f"t {text}", "id": f"d{i}"}]}
        if i % 3 == 0:
            row["reference"] = f"ref {text}"
        if i % 4 == 1:
            row["sources"] = []
        rows.append(row)
    return rows


def test_content_hashes_equal_item_hash(store: LabelStore, make_dataset: Any) -> None:
    make_dataset("tricky", tricky_rows(40))
    hashes: list[str] = []
    for batch in store.content_batches("tricky", batch_rows=7):
        hashes += content_hashes(batch)
    assert hashes == [item_hash(i) for i in store.items("tricky")]


def test_plan_builds_the_same_calls(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("tricky", [r for r in tricky_rows(12) if r["sources"]])
    plan = run_plan.plan_run(Workspace.of(store), oneshot, "tricky", repeats=2, swap=True,
                             judge_store=JudgeStore(store.db))
    items = store.items("tricky")
    expected = [(i.item_id, item_hash(i), r, o) for i in items for o in ("original", "swapped")
                for r in range(2)]
    got = list(plan.calls)
    assert [(c.item.item_id, c.item_hash, c.repeat, c.order) for c in got] == expected
    assert got[5].prompt == render(oneshot, items[1], "original")
    assert plan.calls[-1].key == got[-1].key and len(plan.calls[2:4]) == 2
    assert plan.calls.keys().num_rows == len(plan.calls) == plan.planned == 36


def test_iterating_builds_chunks_growing_to_the_limit(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first calls are built a few at a time, then chunks double up to CHUNK_CALLS."""
    make_dataset("tricky", [r for r in tricky_rows(12) if r["sources"]])
    plan = run_plan.plan_run(Workspace.of(store), oneshot, "tricky", repeats=2, swap=True)
    whole = [c.key for c in plan.calls.build(range(len(plan.calls)))]
    monkeypatch.setattr(run_plan, "FIRST_CHUNK_CALLS", 2)
    monkeypatch.setattr(run_plan, "CHUNK_CALLS", 8)
    sizes: list[int] = []
    build = plan.calls.build
    monkeypatch.setattr(plan.calls, "build", lambda positions: sizes.append(len(positions))
                        or build(positions))
    assert [c.key for c in plan.calls] == whole
    assert sizes == [2, 4, 8, 8, 8, 6] and sum(sizes) == len(whole) == 36


def test_cache_and_duplicates_in_sql(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    rows = [r for r in tricky_rows(12) if r["sources"]][:4]
    rows.append({**rows[0], "id": "copy-of-r0"})  # same content: shares r0's calls
    make_dataset("docs", rows)
    judges = JudgeStore(store.db)
    first = run_plan.plan_run(Workspace.of(store), oneshot, "docs", repeats=1, swap=True,
                              judge_store=judges)
    assert (first.planned, first.cached, len(first.calls)) == (10, 2, 8)
    done = first.calls[0]
    judges.write_calls([CallRecord(
        run_id="r", config_id=oneshot.config_id, item_id=done.item.item_id,
        item_hash=done.item_hash, repeat=done.repeat, ordering=done.order, status="scored",
        reply="VERDICT: PASS", verdict="pass")])
    again = run_plan.plan_run(Workspace.of(store), oneshot, "docs", repeats=1, swap=True,
                              judge_store=judges)
    assert (again.cached, len(again.calls)) == (3, 7)
    assert done.key not in {c.key for c in again.calls}


def test_large_plan_estimates_from_a_sample_and_checks_templates(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [r for r in tricky_rows(60) if r["sources"]]
    make_dataset("docs", rows)
    exact = run_plan.plan_run(Workspace.of(store), oneshot, "docs", repeats=2, swap=True)
    monkeypatch.setattr(run_plan, "EXACT_ESTIMATE_CALLS", 10)
    monkeypatch.setattr(run_plan, "ESTIMATE_SAMPLE", 30)
    sampled = run_plan.plan_run(Workspace.of(store), oneshot, "docs", repeats=2, swap=True)
    assert sampled.estimate.input_tokens == pytest.approx(exact.estimate.input_tokens, rel=0.02)
    # A row without sources fails the template before any call, naming the row.
    make_dataset("holes", [*rows[:20], {"id": "no-sources", "question": "q", "answer": "a"}])
    with pytest.raises(RenderError, match="no-sources"):
        run_plan.plan_run(Workspace.of(store), oneshot, "holes")
