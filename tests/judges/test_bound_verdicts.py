"""Every id keeps its own imported verdict; the tool's own calls are still shared by content."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from stores import opened_store

from judges.aggregation import aggregate_stored_calls
from judges.config import JudgeConfig
from judges.providers.scripted import ScriptedProvider
from judges.runner import run_judge
from judges.stores.judge_store import JUDGE_MIGRATIONS, JudgeStore, bound_key, item_hash
from judges.verdicts import import_verdicts, judge_verdicts
from judges.workspace import Workspace
from labels import LabelStore, open_store
from labels.errors import ImportFileError

TWIN = {"question": "Does Pro include SSO?", "answer": "Yes, SSO is on Pro.",
        "sources": ["The Pro plan includes single sign-on."]}


def _rows() -> list[dict[str, Any]]:
    return [{"id": "a", **TWIN}, {"id": "b", **TWIN},
            {"id": "c", "question": "Is there an API?", "answer": "Yes.",
             "sources": ["There is a REST API."]}]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_two_ids_with_identical_content_keep_their_own_verdicts(
    store: LabelStore, make_dataset: Any, tmp_path: Path
) -> None:
    make_dataset("mt", _rows())
    verdicts = _write(tmp_path, "v.csv", "id,verdict\na,pass\nb,fail\nc,pass\n")
    summary = import_verdicts(Workspace.of(store), verdicts, dataset="mt", judge="gpt4")
    assert summary.added == 3
    frame = judge_verdicts(Workspace.of(store), "mt", "gpt4")
    assert dict(zip(frame["item_id"], frame["verdict"], strict=True)) == {
        "a": "pass", "b": "fail", "c": "pass"}
    # the per-item SQL aggregation (what the report reads) agrees
    items, _ = aggregate_stored_calls(Workspace.of(store), "mt", summary.config_id)
    assert dict(zip(items["item_id"], items["verdict"], strict=True)) == {
        "a": "pass", "b": "fail", "c": "pass"}
    # re-importing is a no-op, row by row
    again = import_verdicts(Workspace.of(store), verdicts, dataset="mt", judge="gpt4")
    assert (again.added, again.unchanged) == (0, 3)


def test_an_imported_verdict_never_stands_in_for_another_row(
    store: LabelStore, make_dataset: Any, tmp_path: Path
) -> None:
    make_dataset("mt", _rows())
    import_verdicts(Workspace.of(store), _write(tmp_path, "v.csv", "id,verdict\na,pass\n"),
                    dataset="mt",
                    judge="gpt4")
    assert judge_verdicts(Workspace.of(store), "mt", "gpt4")["item_id"].tolist() == ["a"]


def test_a_real_duplicate_is_named_as_the_same_id(
    store: LabelStore, make_dataset: Any, tmp_path: Path
) -> None:
    make_dataset("mt", _rows())
    with pytest.raises(ImportFileError, match=r"row 3.*duplicates row 1 \(same id 'a'"):
        import_verdicts(Workspace.of(store), _write(tmp_path, "v.csv",
                                                    "id,verdict\na,pass\nb,fail\na,fail\n"),
                        dataset="mt", judge="gpt4")


def test_a_run_shares_one_call_between_twins_but_not_an_imported_verdict(
    store: LabelStore, make_dataset: Any, tmp_path: Path, oneshot: JudgeConfig
) -> None:
    make_dataset("mt", _rows())
    # a's verdict was made elsewhere by this very config (verdicts import --config)
    import_verdicts(Workspace.of(store), _write(tmp_path, "v.csv", "id,verdict\na,fail\n"),
                    dataset="mt",
                    config=oneshot)
    provider = ScriptedProvider("x", responder=lambda request: "VERDICT: PASS")
    summary = run_judge(oneshot, "mt", workspace=Workspace.of(store), provider=provider,
                        concurrency=1)
    # b (a's twin) and c are called, once each; a keeps its imported verdict
    assert len(provider.requests) == 2, summary
    frame = judge_verdicts(Workspace.of(store), "mt", oneshot.config_id)
    assert dict(zip(frame["item_id"], frame["verdict"], strict=True)) == {
        "a": "fail", "b": "pass", "c": "pass"}
    # a dataset of twins only made by the tool: one call serves both
    make_dataset("twins", [{"id": "x", **TWIN}, {"id": "y", **TWIN}])
    provider2 = ScriptedProvider("x", responder=lambda request: "VERDICT: PASS")
    run_judge(oneshot, "twins", workspace=Workspace.of(store), provider=provider2, concurrency=1)
    assert len(provider2.requests) == 0  # b's call is cached by content
    assert judge_verdicts(Workspace.of(store), "twins", oneshot.config_id)["verdict"].tolist() == [
        "pass", "pass"]


def test_migration_binds_verdicts_imported_before_it(tmp_path: Path, make_dataset: Any,
                                                     store: LabelStore) -> None:
    make_dataset("mt", _rows())
    item = next(i for i in store.items("mt") if i.item_id == "a")
    content = item_hash(item)
    store.db.close()
    path = tmp_path / "old.duckdb"
    Path(tmp_path / "test.duckdb").rename(path)
    db = open_store(str(path)).db
    # the file as the previous version left it: only m001, an import keyed by content
    with db.cursor() as cur:
        cur.execute("DELETE FROM _migrations WHERE migration_set = 'judges'")
        for table in ("judge_calls", "judge_runs", "judge_configs"):
            cur.execute(f"DROP TABLE IF EXISTS {table}")
        cur.execute("DROP SEQUENCE IF EXISTS judge_call_ids")
    db._migrated.discard("judges")
    db.ensure_migrated("judges", JUDGE_MIGRATIONS[:1])
    with db.cursor() as cur:
        cur.execute("INSERT INTO judge_runs (run_id, config_id, dataset, origin, status, "
                    "options) VALUES ('r1', 'ext:x', 'mt', 'import', 'completed', '{}')")
        cur.execute("INSERT INTO judge_runs (run_id, config_id, dataset, origin, status, "
                    "options) VALUES ('r2', 'b2:y', 'mt', 'run', 'completed', '{}')")
        cur.execute("INSERT INTO judge_calls (run_id, config_id, item_id, item_hash, repeat, "
                    "ordering, status, verdict) VALUES ('r1', 'ext:x', 'a', ?, 0, 'original', "
                    "'scored', 'pass'), ('r2', 'b2:y', 'a', ?, 0, 'original', 'scored', 'fail')",
                    [content, content])
    db.close()
    with opened_store(path) as reopened:
        JudgeStore(reopened.db)
        rows = reopened.db.fetchall("SELECT run_id, item_hash FROM judge_calls ORDER BY run_id")
        names = reopened.db.fetchall(
            "SELECT name FROM _migrations WHERE migration_set = 'judges' ORDER BY name")
    assert rows == [("r1", bound_key("a", content)), ("r2", content)]
    assert [n for (n,) in names] == ["m001_core", "m002_bound_imports"]
    assert json.dumps(bound_key("a", content)).startswith('"v')
