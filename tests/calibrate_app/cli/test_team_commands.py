"""``calibrate users`` and ``calibrate audit``: roles from the CLI, kept append-only.

The audit trail lists every role change, sign-in binding and label with what it was before.
"""

from __future__ import annotations

import getpass
import json
from pathlib import Path

from cli_runner import run

from labels import LabelStore
from labels.importing import import_rows
from labels.stores.db import Database
from labels.stores.team_store import TeamStore


def test_roles_from_the_cli_with_their_history_in_the_audit_trail(db_path: Path,
                                                                  tmp_path: Path) -> None:
    empty = run(db_path, "users", "list")
    assert "Make yourself the first owner" in empty.output
    assert run(db_path, "users", "add", "Alice@Example.org", "--role", "owner").output == (
        "alice@example.org is now owner.\n")
    run(db_path, "users", "add", "bob+qa@example.org", "--role", "annotator")
    changed = run(db_path, "users", "add", "bob+qa@example.org", "--role", "viewer")
    assert changed.output == "bob+qa@example.org: annotator -> viewer.\n"
    same = run(db_path, "users", "add", "bob+qa@example.org", "--role", "viewer")
    assert "already viewer: nothing changed" in same.output

    listed = json.loads(run(db_path, "users", "list", "--json").output)
    actor = f"cli:{getpass.getuser()}"
    assert [(m["email"], m["role"], m["added_by"], m["signed_in"]) for m in listed] == [
        ("alice@example.org", "owner", actor, False),
        ("bob+qa@example.org", "viewer", actor, False)]

    bad = run(db_path, "users", "add", "not-an-address", "--role", "viewer")
    assert bad.exit_code == 2 and "is not an e-mail address" in bad.output
    last_owner = run(db_path, "users", "remove", "alice@example.org")
    assert last_owner.exit_code == 1 and "the only owner" in last_owner.output
    nobody = run(db_path, "users", "remove", "carol@example.org")
    assert nobody.exit_code == 2 and "has no role" in nobody.output

    # A label, a sign-in and a removal, then the whole trail, oldest first.
    db = Database(db_path)
    try:
        rows = tmp_path / "rows.jsonl"
        rows.write_text(json.dumps({"id": "r1", "question": "Q?", "answer": "A.",
                                    "sources": ["S."]}) + "\n", encoding="utf-8")
        store = LabelStore(db)
        import_rows(store, rows, "ds")
        TeamStore(db, store).sign_in("bob+qa@example.org", issuer="https://idp", subject="b-1")
        store.add_label("ds", "r1", "bob+qa@example.org", "fail", note="first look")
        store.add_label("ds", "r1", "bob+qa@example.org", "pass")
    finally:
        db.close()
    removed = run(db_path, "users", "remove", "bob+qa@example.org")
    assert removed.output == "bob+qa@example.org was viewer; now has no role.\n"
    trail = json.loads(run(db_path, "audit", "--json").output)
    assert [(e["actor"], e["action"], e["subject"]) for e in trail] == [
        (actor, "role", "alice@example.org"),
        (actor, "role", "bob+qa@example.org"),
        (actor, "role", "bob+qa@example.org"),
        ("bob+qa@example.org", "sign-in", "bob+qa@example.org"),
        ("bob+qa@example.org", "label", "ds/r1/faithfulness"),
        ("bob+qa@example.org", "label", "ds/r1/faithfulness"),
        (actor, "role", "bob+qa@example.org"),
        (actor, "sign-in", "bob+qa@example.org"),
    ]
    assert [(e["before"], e["after"]) for e in trail if e["action"] == "role"] == [
        (None, "owner"), (None, "annotator"), ("annotator", "viewer"), ("viewer", None)]
    first, second = (e for e in trail if e["action"] == "label")
    assert first["before"] is None and first["after"]["verdict"] == "fail"
    assert second["before"] == {"verdict": "fail", "note": "first look"}
    assert second["after"]["verdict"] == "pass"
    assert trail[-1]["before"] == {"issuer": "https://idp", "subject": "b-1"}
    assert trail[-1]["after"] is None
    assert json.loads(run(db_path, "users", "list", "--json").output) == [
        {**listed[0]}]
    newest = run(db_path, "audit", "--limit", "2").output.splitlines()
    assert len(newest) == 2 and "viewer -> -" in newest[0]


def test_nothing_in_the_team_tables_is_updated_in_place(db_path: Path) -> None:
    db = Database(db_path)
    try:
        team = TeamStore(db, LabelStore(db))
        team.set_role("a@example.org", "owner", actor="cli:t")
        team.set_role("b@example.org", "annotator", actor="cli:t")
        team.set_role("b@example.org", "viewer", actor="cli:t")
        team.sign_in("b@example.org", issuer="i", subject="s1")
        team.release_identity("b@example.org", actor="cli:t")
        team.sign_in("b@example.org", issuer="i", subject="s2")
        roles = db.fetchall("SELECT email, role FROM team_roles ORDER BY event_id")
        bindings = db.fetchall("SELECT subject FROM team_identities ORDER BY binding_id")
    finally:
        db.close()
    assert roles == [("a@example.org", "owner"), ("b@example.org", "annotator"),
                     ("b@example.org", "viewer")]
    assert bindings == [("s1",), (None,), ("s2",)]


def test_assignments_are_dealt_listed_and_withdrawn_from_the_cli(db_path: Path,
                                                                  tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": f"r{k}", "question": f"Q{k}?", "answer": "A.",
                                        "sources": ["S."]}) + "\n" for k in range(10)),
                    encoding="utf-8")
    db = Database(db_path)
    try:
        store = LabelStore(db)
        import_rows(store, rows, "ds")
        team = TeamStore(db, LabelStore(db))
        for email, role in (("o@example.org", "owner"), ("a@example.org", "annotator"),
                            ("b@example.org", "annotator"), ("v@example.org", "viewer")):
            team.set_role(email, role, actor="cli:test")  # type: ignore[arg-type]
        store.add_label("ds", "r0", "a@example.org", "pass")  # labelled rows are not dealt
    finally:
        db.close()
    dealt = run(db_path, "assignments", "add", "ds", "--to", "a@example.org",
                      "--to", "B@example.org", "--batch", "3", "--overlap", "all")
    assert dealt.output.startswith("Batch 1 (random order): a@example.org 3 rows, "
                                   "b@example.org 3 rows; 3 assignment(s) overlap.")
    listed = json.loads(run(db_path, "assignments", "list", "ds", "--json").output)
    assert listed == [{"annotator": "a@example.org", "assigned": 3, "labelled": 0},
                      {"annotator": "b@example.org", "assigned": 3, "labelled": 0}]
    # A second batch takes the next free rows: no row is dealt twice, r0 never.
    run(db_path, "assignments", "add", "ds", "--to", "a@example.org", "--batch", "20")
    db = Database(db_path)
    try:
        got = TeamStore(db, LabelStore(db)).assignments("ds", "faithfulness")
    finally:
        db.close()
    assert len(got["a@example.org"]) == 3 + 6 and "r0" not in got["a@example.org"]
    assert len(set(got["a@example.org"])) == 9
    viewer = run(db_path, "assignments", "add", "ds", "--to", "v@example.org",
                       "--batch", "1")
    assert viewer.exit_code == 1 and "only annotators and owners label" in viewer.output
    full = run(db_path, "assignments", "add", "ds", "--to", "b@example.org", "--batch", "1")
    assert full.exit_code == 1 and "no row of 'ds' is free" in full.output
    too_many = run(db_path, "assignments", "add", "ds", "--to", "a@example.org",
                         "--batch", "1", "--overlap", "2")
    assert too_many.exit_code == 2 and "overlap must be between 1 and the 1" in too_many.output
    out = run(db_path, "assignments", "withdraw", "ds", "a@example.org")
    assert out.output == "9 row(s) withdrawn from a@example.org.\n"
    trail = json.loads(run(db_path, "audit", "--json").output)
    assert [e["action"] for e in trail if e["action"] in ("assign", "withdraw")] == [
        "assign", "assign", "withdraw"]
    assert trail[-1]["before"] == {"annotator": "a@example.org", "rows": 9}
