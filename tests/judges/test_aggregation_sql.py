"""The SQL aggregation (one GROUP BY in DuckDB) gives exactly what the Python reference gives.

:func:`judges.aggregation.aggregate_calls` over :func:`judges.verdicts.judge_verdicts` is the
reference; :func:`judges.aggregation.aggregate_stored_calls` counts the same verdicts and flips
in SQL so a report on 10 M calls never loads them. Both run here on seeded random call tables
stored in a real DuckDB file: both rules, pass/fail and a/b/tie verdicts, ``unsure``,
unscored and failed calls, retried keys (the latest reply wins, a failure only where no reply
exists), uneven repeats, missing orders, items sharing one content hash, items never judged
and another judge's calls in the same table.
"""

from __future__ import annotations

import random
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest
from judge_helpers import faithfulness_rows, pairwise_rows

from judges.aggregation import aggregate_calls, aggregate_stored_calls
from judges.config import JudgeConfig
from judges.stores.judge_store import CallRecord, JudgeStore
from judges.verdicts import dataset_hashes, judge_verdicts
from judges.workspace import Workspace
from labels import LabelStore

_UNSCORED_REASONS = ["empty_reply", "refusal", "no_verdict", None]
_ERROR_KINDS = ["timeout", "rate_limit", None]


_RETRIES = [1, 1, 1, 2, 3]


def _random_calls(
    rng: random.Random, run_id: str, config_id: str, items: pd.DataFrame, words: list[str],
    *, retries: list[int], max_repeats: int,
) -> list[CallRecord]:
    """Calls for a random subset of ``items``; some keys stored more than once (``retries``)."""
    calls: list[CallRecord] = []
    for item_id, item_hash in zip(items["item_id"], items["item_hash"], strict=True):
        if rng.random() < 0.15:
            continue  # never judged
        repeats = rng.randint(1, max_repeats)
        for repeat in range(repeats):
            for ordering in ("original", "swapped"):
                if rng.random() < 0.2:
                    continue  # this order was not run
                for _ in range(rng.choice(retries)):  # retries: latest reply wins
                    status = rng.choices(["scored", "unscored", "failed"], [0.75, 0.15, 0.1])[0]
                    # a few items lean to one verdict, so all_agree also gives decided rows
                    verdict = (rng.choice(words[:1] + words) if status == "scored" else None)
                    calls.append(CallRecord(
                        run_id=run_id, config_id=config_id, item_id=item_id,
                        item_hash=item_hash, repeat=repeat, ordering=ordering, status=status,
                        verdict=verdict,
                        reasoning=(rng.choice([f"why {len(calls)}", None])
                                   if status == "scored" else None),
                        unscored_reason=(rng.choice(_UNSCORED_REASONS)
                                         if status == "unscored" else None),
                        error=("boom" if status == "failed" else None),
                        error_kind=(rng.choice(_ERROR_KINDS) if status == "failed" else None),
                    ))
    rng.shuffle(calls)  # call ids (the "latest" order) unrelated to item order
    return calls


def _store_calls(
    store: LabelStore, dataset: str, config_id: str, other_id: str, words: list[str], seed: int,
    *, retries: list[int] = _RETRIES, max_repeats: int = 4,
) -> None:
    judges = JudgeStore(store.db)
    rng = random.Random(seed)
    items = dataset_hashes(Workspace.of(store), dataset)
    for config in (config_id, other_id):
        run_id = judges.create_run(config, dataset, options={}, planned=0)
        judges.write_calls(_random_calls(rng, run_id, config, items, words, retries=retries,
                                         max_repeats=max_repeats))
        judges.finish_run(run_id, "completed", {})


def _assert_same(
    store: LabelStore, dataset: str, config_id: str, rule: str, kind: str,
    texts_for: list[str] | None = None,
) -> None:
    reference, expected = aggregate_calls(judge_verdicts(Workspace.of(store), dataset, config_id),
                                          rule=rule,
                                          kind=kind)
    items, consistency = aggregate_stored_calls(Workspace.of(store), dataset, config_id, rule=rule,
                                                kind=kind,
                                                texts_for=texts_for)
    assert expected is not None and consistency is not None
    assert len(items) > 20
    if texts_for is not None:  # the texts of the other items are not read
        unread = ~reference["item_id"].isin(texts_for)
        assert unread.any() and not unread.all()
        reference.loc[unread, ["reasoning", "unscored_reason"]] = np.nan
    pd.testing.assert_frame_equal(items, reference)
    assert consistency.summary() == expected.summary()
    for name in ("item_ids", "verdicts", "n_calls", "n_scored", "order_flipped",
                 "repeat_flipped", "any_flipped"):
        np.testing.assert_array_equal(getattr(consistency, name), getattr(expected, name),
                                      err_msg=name)


def _with_twins(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows plus two copies of earlier rows under new ids (same content, same hash)."""
    return [*rows, {**rows[3], "id": "twin-a"}, {**rows[7], "id": "twin-b"}]


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("rule", ["all_agree", "majority"])
def test_pointwise_sql_aggregation_equals_python(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig, seed: int, rule: str
) -> None:
    make_dataset("docs", _with_twins(faithfulness_rows(60)))
    judges = JudgeStore(store.db)
    judges.save_config(oneshot)
    other = judges.save_external("someone-else", "pointwise", "faithfulness")
    _store_calls(store, "docs", oneshot.config_id, other, ["pass", "fail", "unsure"], seed)
    _assert_same(store, "docs", oneshot.config_id, rule, "pointwise")


@pytest.mark.parametrize("seed", [11, 12, 13])
@pytest.mark.parametrize("rule", ["all_agree", "majority"])
def test_pairwise_sql_aggregation_equals_python(
    store: LabelStore, make_dataset: Any, seed: int, rule: str
) -> None:
    make_dataset("pairs", _with_twins(pairwise_rows(60)))
    judges = JudgeStore(store.db)
    config_id = judges.save_external("pair-judge", "pairwise", "preference")
    other = judges.save_external("other-judge", "pairwise", "preference")
    _store_calls(store, "pairs", config_id, other, ["a", "b", "tie", "unsure"], seed)
    _assert_same(store, "pairs", config_id, rule, "pairwise")


@pytest.mark.parametrize("seed", [21, 22, 23])
@pytest.mark.parametrize("rule", ["all_agree", "majority"])
@pytest.mark.parametrize("kind", ["pointwise", "pairwise"])
def test_bit_planes_count_what_python_counts(
    store: LabelStore, make_dataset: Any, seed: int, rule: str, kind: str
) -> None:
    """Few retried keys, so most items take the bit-plane path; texts read for some items.

    Repeat numbers reach 17, past the 12 (pairwise) or 16 (pass/fail) bits of a plane: those
    items take the exact path, as do the retried ones.
    """
    pairwise = kind == "pairwise"
    make_dataset("rows", _with_twins(pairwise_rows(80) if pairwise else faithfulness_rows(80)))
    judges = JudgeStore(store.db)
    criterion = "preference" if pairwise else "faithfulness"
    config_id = judges.save_external("judge", kind, criterion)
    other = judges.save_external("other-judge", kind, criterion)
    words = ["a", "b", "tie", "unsure"] if pairwise else ["pass", "fail", "unsure"]
    _store_calls(store, "rows", config_id, other, words, seed, retries=[1] * 60 + [2],
                 max_repeats=18)
    ids = dataset_hashes(Workspace.of(store), "rows")["item_id"].tolist()
    _assert_same(store, "rows", config_id, rule, kind,
                 texts_for=random.Random(seed).sample(ids, len(ids) // 3))


def test_no_calls_and_a_hand_checked_item(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(3))
    judges = JudgeStore(store.db)
    judges.save_config(oneshot)
    items, consistency = aggregate_stored_calls(Workspace.of(store), "docs", oneshot.config_id)
    assert items.empty and consistency is None
    hashes = dataset_hashes(Workspace.of(store), "docs")
    run_id = judges.create_run(oneshot.config_id, "docs", options={}, planned=0)

    def call(repeat: int, ordering: str, status: str, verdict: str | None) -> CallRecord:
        return CallRecord(run_id=run_id, config_id=oneshot.config_id, item_id="row-001",
                          item_hash=str(hashes["item_hash"][1]), repeat=repeat,
                          ordering=ordering, status=status, verdict=verdict,
                          reasoning=f"{verdict} at {repeat}" if verdict else None,
                          error_kind="timeout" if status == "failed" else None)

    # repeat 0: pass / fail (an order flip); repeat 1: pass / a failure retried as pass
    judges.write_calls([call(0, "original", "scored", "pass"), call(0, "swapped", "scored", "fail"),
                        call(1, "original", "scored", "pass"), call(1, "swapped", "failed", None),
                        call(1, "swapped", "scored", "pass"), call(2, "original", "failed", None)])
    for rule, verdict in (("all_agree", "unsure"), ("majority", "pass")):
        items, consistency = aggregate_stored_calls(Workspace.of(store), "docs", oneshot.config_id,
                                                    rule=rule)
        assert consistency is not None
        assert items.to_dict("records") == [{
            "item_id": "row-001", "verdict": verdict, "n_calls": 5, "n_scored": 4,
            "order_flipped": True, "repeat_flipped": True, "flipped": True,
            "both_orders": True, "reasoning": "pass at 0", "unscored_reason": "failed:timeout"}]
        assert (consistency.n_order_pairs, consistency.n_order_pairs_flipped) == (2, 1)


@pytest.mark.parametrize("texts_for", [None, []])
def test_a_verdict_word_of_another_kind_is_an_error(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig, texts_for: list[str] | None
) -> None:
    """A pairwise word among pass/fail calls is refused by both paths, as the Python path does."""
    make_dataset("docs", faithfulness_rows(3))
    judges = JudgeStore(store.db)
    judges.save_config(oneshot)
    hashes = dataset_hashes(Workspace.of(store), "docs")
    run_id = judges.create_run(oneshot.config_id, "docs", options={}, planned=0)
    judges.write_calls([
        CallRecord(run_id=run_id, config_id=oneshot.config_id, item_id=str(item_id),
                   item_hash=str(item_hash), repeat=0, ordering="original", status="scored",
                   verdict="a" if item_id == "row-002" else "pass")
        for item_id, item_hash in zip(hashes["item_id"], hashes["item_hash"], strict=True)])
    with pytest.raises(duckdb.Error, match="unknown verdict a"):
        aggregate_stored_calls(Workspace.of(store), "docs", oneshot.config_id, texts_for=texts_for)
