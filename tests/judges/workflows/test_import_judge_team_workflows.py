"""The workflows the CLI and the app share (judges.workflows): import, judges, queue, team.

The commands and pages are tested through their front ends; these hold what each workflow
gives a caller that holds nothing but a Workspace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judges.config import load_builtin
from judges.providers.scripted import ScriptedProvider
from judges.workflows import importing, judging, queue, team
from judges.workspace import Workspace
from labels.errors import CalibrateError, NotFoundError


def _rows(path: Path, n: int = 6) -> Path:
    path.write_text("".join(
        json.dumps({"id": f"r{k}", "question": f"Is {k} even?", "answer": f"answer {k}",
                    "sources": [f"{k} is a number"]}) + "\n"
        for k in range(n)
    ), encoding="utf-8")
    return path


def test_import_and_export_go_through_one_workspace(workspace: Workspace, tmp_path: Path) -> None:
    summary = importing.import_rows(workspace, _rows(tmp_path / "rows.jsonl"), "d")
    assert (summary.added, summary.dataset) == (6, "d")
    labels = tmp_path / "labels.csv"
    labels.write_text("id,label\nr0,pass\nr1,fail\n", encoding="utf-8")
    assert importing.import_labels(workspace, labels, "d", annotator="ann").added == 2
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("".join(["id,verdict\n", *(f"r{k},pass\n" for k in range(6))]),
                        encoding="utf-8")
    with pytest.raises(importing.JudgeNotNamedError):
        importing.import_verdicts(workspace, verdicts, dataset="d")
    found = importing.import_verdicts(workspace, verdicts, dataset="d", judge="ext")
    assert (found.added, found.judge) == (6, "ext")
    count, path = importing.export_labels(workspace, "d", tmp_path / "out.csv")
    assert count == 2 and path.read_text(encoding="utf-8").count("\n") == 3
    assert importing.export_verdicts(workspace, "d", "ext", tmp_path / "v.jsonl").exists()
    assert importing.row_mapping(["question=prompt"]) == {"question": "prompt"}
    assert importing.label_mapping(["label=feedback.value"]) == {"label": "feedback.value"}


def test_the_preview_is_the_import_without_storing(workspace: Workspace, tmp_path: Path) -> None:
    table = importing.read_file(_rows(tmp_path / "rows.jsonl"))
    assert importing.detected_columns(table, ragas=False)["question"] == ["question"]
    preview = importing.preview_rows(table, {}, ragas=False, rows=4)
    assert (preview.rows, preview.kind, list(preview.frame["id"])) == \
        (4, "pointwise", ["r0", "r1", "r2", "r3"])
    assert workspace.labels.datasets() == []
    importing.save_criterion(workspace, "tone", "pointwise", "Polite?", "rude, curt", False)
    assert workspace.labels.criterion("tone").failure_tags == ("rude", "curt")


def test_judges_are_found_listed_run_and_browsed(workspace: Workspace, tmp_path: Path) -> None:
    importing.import_rows(workspace, _rows(tmp_path / "rows.jsonl"), "d")
    assert judging.find_config("faithfulness", None).name == "faithfulness"
    with pytest.raises(NotFoundError, match="not stored in this database"):
        judging.find_config("nobody", workspace)
    config = load_builtin("faithfulness-oneshot")
    plan = judging.plan(workspace, config, "d")
    assert plan.estimate.calls_to_make == 6
    summary = judging.run(workspace, config, "d", provider=ScriptedProvider("x"))
    assert summary.status == "completed"
    assert judging.plan(workspace, config, "d").estimate.calls_to_make == 0  # all cached
    assert [r.config_id for r in judging.runs(workspace, dataset="d")] == [config.config_id]
    assert judging.run_providers(workspace, "d", config) == ["scripted/x"]
    assert len(judging.verdicts(workspace, "d", config.config_id)) == 6
    assert len(judging.calls(workspace, "d", config.config_id)) == 6
    rows = judging.judge_rows(workspace)  # a built-in run is listed once, as the built-in
    assert [r["source"] for r in rows if r["config_id"] == config.config_id] == ["built-in"]
    assert judging.find_config(config.config_id, workspace) == config
    assert judging.batches(workspace, open_only=True) == []
    assert "Is 0 even?" in judging.render_row(workspace, config, "d", "r0").as_text()


def test_a_revision_is_numbered_and_saved_once(workspace: Workspace) -> None:
    base = load_builtin("faithfulness-oneshot")
    edited = base.with_revision(system="Be strict.")
    numbered = judging.as_revision(workspace, edited, base, name="strict")
    assert (numbered.name, numbered.revision) == ("strict", 1)
    assert judging.save_config(workspace, numbered) is True
    assert judging.save_config(workspace, numbered) is False  # nothing new
    assert judging.as_revision(workspace, edited, base, name="strict") == numbered
    assert numbered.config_id in judging.saved_config_ids(workspace)
    assert any(c == numbered for c in judging.config_choices(workspace).values())


def test_rows_are_dealt_in_queue_order_and_withdrawn(workspace: Workspace,
                                                     tmp_path: Path) -> None:
    importing.import_rows(workspace, _rows(tmp_path / "rows.jsonl"), "d")
    assert queue.judge_run_counts(workspace) == {}
    assert team.assignment_progress(workspace, "d", "faithfulness") == []
    for email in ("ann@example.org", "bea@example.org"):
        team.set_role(workspace, email, "annotator", actor="cli:test")
    dealt = queue.assign_batch(workspace, "d", "faithfulness",
                               ["ann@example.org", "bea@example.org"], batch=2, overlap=1,
                               actor="cli:test")
    settings = workspace.labels.queue_settings("d", "faithfulness")
    plan = queue.build_queue_plan(workspace, "d", settings.order, settings.seed)
    # everybody's rows together are the head of the queue (its provenance stays valid)
    assert {row for rows in dealt.rows.values() for row in rows} == set(plan.item_ids[:4])
    assert {r["annotator"]: r["assigned"]
            for r in team.assignment_progress(workspace, "d", "faithfulness")} == \
        {"ann@example.org": 2, "bea@example.org": 2}
    assert team.withdraw(workspace, "d", "faithfulness", "ann@example.org",
                          actor="cli:test") == 2
    with pytest.raises(ValueError):
        queue.assign_batch(workspace, "d", "faithfulness", ["bea@example.org"], batch=0,
                           overlap=1, actor="cli:test")


def test_team_roles_sign_in_and_audit(workspace: Workspace) -> None:
    assert team.members(workspace) == []  # no team tables: none made by reading
    assert team.set_role(workspace, "Ann@Example.org", "owner", actor="cli:test") is None
    assert team.sign_in(workspace, "ann@example.org", issuer="idp", subject="1") == "owner"
    with pytest.raises(CalibrateError):
        team.sign_in(workspace, "ann@example.org", issuer="idp", subject="2")
    assert team.release_identity(workspace, "ann@example.org", actor="cli:test") is True
    team.sign_out(workspace, "ann@example.org", at=2_000_000_000.0)
    assert team.signed_out_since(workspace, "ann@example.org", 1_000_000_000.0)
    team.record(workspace, "ann@example.org", "export", "labels.csv")
    team.set_role(workspace, "bea@example.org", "annotator", actor="cli:test")
    assert [m.email for m in team.members(workspace)] == ["ann@example.org", "bea@example.org"]
    assert team.remove_member(workspace, "bea@example.org", actor="cli:test") == "annotator"
    assert [m.email for m in team.members(workspace)] == ["ann@example.org"]
    assert "export" in [e.action for e in team.audit(workspace)]
    assert len(team.audit(workspace, limit=1)) == 1
