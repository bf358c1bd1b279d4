"""AlignStore: the only SQL on test-set use, proposals, adoptions and stress results.

Migration set ``alignment`` (same DuckDB file as the label and judge stores):

* ``test_evaluations``: one row per evaluation of a judge revision on the test rows of a
  dataset and criterion. The number of distinct revisions evaluated is what makes test numbers
  optimistic (each look at test is a chance to pick the lucky revision).
* ``proposals``: a revision written by a proposer model from dev disagreements, with the
  request it was sent, its raw reply, the diff and the disagreements it addresses.
* ``adoptions``: revisions the owner adopted explicitly (the newest is the current one).
* ``stress_results``: flip counts of perturbation tests (``calibrate judge stress``).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from labels.errors import NotFoundError
from labels.stores.db import Database
from labels.stores.migrations import Migration

M001_ALIGNMENT = """
CREATE SEQUENCE test_evaluation_ids START 1;
CREATE TABLE test_evaluations (
    evaluation_id BIGINT PRIMARY KEY DEFAULT nextval('test_evaluation_ids'),
    dataset VARCHAR NOT NULL,
    criterion VARCHAR NOT NULL,
    config_id VARCHAR NOT NULL,
    n_rows INTEGER NOT NULL,
    context VARCHAR NOT NULL,
    evaluated_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
CREATE TABLE proposals (
    proposal_id VARCHAR PRIMARY KEY,
    dataset VARCHAR NOT NULL,
    criterion VARCHAR NOT NULL,
    base_config_id VARCHAR NOT NULL,
    config_id VARCHAR NOT NULL,
    proposer VARCHAR NOT NULL,
    addressed JSON NOT NULL,
    diff VARCHAR NOT NULL,
    request JSON NOT NULL,
    reply VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
CREATE TABLE adoptions (
    dataset VARCHAR NOT NULL,
    criterion VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    config_id VARCHAR NOT NULL,
    proposal_id VARCHAR,
    adopted_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
CREATE SEQUENCE stress_result_ids START 1;
CREATE TABLE stress_results (
    result_id BIGINT PRIMARY KEY DEFAULT nextval('stress_result_ids'),
    stress_run VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    config_id VARCHAR NOT NULL,
    test VARCHAR NOT NULL,
    expectation VARCHAR NOT NULL,
    n INTEGER NOT NULL,
    flips INTEGER NOT NULL,
    detail JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
)
"""

ALIGN_MIGRATIONS = [Migration("m001_alignment", M001_ALIGNMENT)]

TEST_REUSE_LIMIT = 3
"""Distinct revisions evaluated on one test set after which its numbers are called optimistic."""


def optimism_warning(test_revisions: int) -> str | None:
    """The warning once :data:`TEST_REUSE_LIMIT` revisions have seen the same test rows."""
    if test_revisions < TEST_REUSE_LIMIT:
        return None
    return (f"{test_revisions} revisions have been evaluated on these test rows (limit "
            f"{TEST_REUSE_LIMIT}): picking among them by their test numbers makes those numbers "
            "optimistic. Label a fresh test set (new rows) before trusting them.")


@dataclass(frozen=True)
class StoredProposal:
    """A proposal as stored (see the module docstring)."""

    proposal_id: str
    dataset: str
    criterion: str
    base_config_id: str
    config_id: str
    proposer: str
    addressed: list[str]
    diff: str
    created_at: datetime


@dataclass(frozen=True)
class StressCounts:
    """One perturbation test's counts, to be stored."""

    test: str
    expectation: str
    n: int
    flips: int
    detail: dict[str, Any]


@dataclass(frozen=True)
class StoredStress:
    """One perturbation test's counts, as stored."""

    stress_run: str
    dataset: str
    config_id: str
    test: str
    expectation: str
    n: int
    flips: int
    detail: dict[str, Any]
    created_at: datetime


class AlignStore:
    """Test-set use, proposals, adoptions and stress results in one DuckDB file."""

    TABLES = ("adoptions", "proposals", "stress_results", "test_evaluations")
    """The tables this store owns: no other store's SQL names them."""

    def __init__(self, db: Database) -> None:
        """Use ``db``, applying the ``alignment`` migrations it lacks."""
        self.db = db
        db.ensure_migrated("alignment", ALIGN_MIGRATIONS)

    # -- test-set use -----------------------------------------------------------------------

    def record_test_evaluation(
        self, dataset: str, criterion: str, config_id: str, *, n_rows: int, context: str
    ) -> None:
        """Count one evaluation of ``config_id`` on the test rows."""
        self.db.execute(
            "INSERT INTO test_evaluations (dataset, criterion, config_id, n_rows, context) "
            "VALUES (?, ?, ?, ?, ?)", [dataset, criterion, config_id, n_rows, context],
        )

    def reuse_warning(self, dataset: str, criterion: str) -> str | None:
        """:func:`optimism_warning` for the test rows of ``dataset``/``criterion``."""
        return optimism_warning(self.test_usage(dataset, criterion)[1])

    def test_usage(self, dataset: str, criterion: str) -> tuple[int, int]:
        """``(evaluations, distinct revisions)`` on the test rows of ``dataset``/``criterion``."""
        row = self.db.fetchone(
            "SELECT count(*), count(DISTINCT config_id) FROM test_evaluations "
            "WHERE dataset = ? AND criterion = ?", [dataset, criterion],
        )
        return (int(row[0]), int(row[1])) if row else (0, 0)

    # -- proposals and adoptions ------------------------------------------------------------

    def save_proposal(
        self, *, dataset: str, criterion: str, base_config_id: str, config_id: str,
        proposer: str, addressed: list[str], diff: str, request: dict[str, Any], reply: str,
    ) -> str:
        """Store a proposal; returns its id."""
        proposal_id = "p" + uuid.uuid4().hex[:12]
        self.db.execute(
            "INSERT INTO proposals (proposal_id, dataset, criterion, base_config_id, "
            "config_id, proposer, addressed, diff, request, reply) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [proposal_id, dataset, criterion, base_config_id, config_id, proposer,
             json.dumps(addressed), diff, json.dumps(request, ensure_ascii=False), reply],
        )
        return proposal_id

    def proposal(self, proposal_id: str) -> StoredProposal:
        """One proposal by id (or :class:`NotFoundError`)."""
        row = self.db.fetchone(
            "SELECT proposal_id, dataset, criterion, base_config_id, config_id, proposer, "
            "addressed, diff, created_at FROM proposals WHERE proposal_id = ?",
            [proposal_id],
        )
        if row is None:
            raise NotFoundError(f"no proposal {proposal_id!r}")
        return StoredProposal(row[0], row[1], row[2], row[3], row[4], row[5],
                              json.loads(row[6]), row[7], row[8])

    def proposals(self, dataset: str, criterion: str) -> list[StoredProposal]:
        """Proposals for a dataset and criterion, newest first."""
        rows = self.db.fetchall(
            "SELECT proposal_id, dataset, criterion, base_config_id, config_id, proposer, "
            "addressed, diff, created_at FROM proposals WHERE dataset = ? AND criterion = ? "
            "ORDER BY created_at DESC", [dataset, criterion],
        )
        return [StoredProposal(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7], r[8])
                for r in rows]

    def adopt(self, dataset: str, criterion: str, name: str, config_id: str,
              proposal_id: str | None) -> None:
        """Record the owner's explicit adoption of a revision."""
        self.db.execute(
            "INSERT INTO adoptions (dataset, criterion, name, config_id, proposal_id) "
            "VALUES (?, ?, ?, ?, ?)", [dataset, criterion, name, config_id, proposal_id],
        )

    def adopted(self, dataset: str, criterion: str, name: str) -> str | None:
        """The config id adopted last for this judge name, or ``None``."""
        row = self.db.fetchone(
            "SELECT config_id FROM adoptions WHERE dataset = ? AND criterion = ? "
            "AND name = ? ORDER BY adopted_at DESC LIMIT 1", [dataset, criterion, name],
        )
        return str(row[0]) if row else None

    # -- stress results ---------------------------------------------------------------------

    def save_stress(self, stress_run: str, dataset: str, config_id: str,
                    results: list[StressCounts]) -> None:
        """Store one stress run's results (one transaction)."""
        with self.db.transaction() as cur:
            cur.executemany(
                "INSERT INTO stress_results (stress_run, dataset, config_id, test, expectation, "
                "n, flips, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [[stress_run, dataset, config_id, r.test, r.expectation, r.n, r.flips,
                  json.dumps(r.detail, ensure_ascii=False, default=str)] for r in results],
            )

    def latest_stress(self, config_id: str, dataset: str | None = None) -> list[StoredStress]:
        """The newest stress run's results for a judge (optionally on one dataset)."""
        where, params = "config_id = ?", [config_id]
        if dataset is not None:
            where += " AND dataset = ?"
            params.append(dataset)
        rows = self.db.fetchall(
            "SELECT stress_run, dataset, config_id, test, expectation, n, flips, detail, "
            f"created_at FROM stress_results WHERE {where} AND stress_run = ("
            f"SELECT stress_run FROM stress_results WHERE {where} "
            "ORDER BY created_at DESC, result_id DESC LIMIT 1) ORDER BY result_id",
            params + params,
        )
        return [StoredStress(r[0], r[1], r[2], r[3], r[4], int(r[5]), int(r[6]),
                             json.loads(r[7]), r[8]) for r in rows]


__all__ = ["ALIGN_MIGRATIONS", "TEST_REUSE_LIMIT", "AlignStore",
           "StoredProposal", "StoredStress", "StressCounts", "optimism_warning"]
