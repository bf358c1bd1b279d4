"""BatchStore: the only SQL on provider batches (migration set ``judge_batches``).

A submission is written down **before** its request leaves: one transaction stores the batch
row (``state = 'submitting'``, a key of ours) and one row per call it carries (the key of the
call and the exact request). Only then is the batch created at the provider; its id is stored
at once (``submitted``). A run killed in between leaves a ``submitting`` row: the next run asks
the provider whether that batch exists (:meth:`judges.batch.api.BatchAPI.find`) and adopts it,
or marks the submission ``abandoned`` when it never arrived. Collecting a batch writes its
calls to ``judge_calls`` (through the judge store, whose table it is) and marks the batch
``collected`` in one transaction, so a kill -9 either leaves the batch to be collected again
or finds it collected, never half of it.

A call is *in flight* while it belongs to a ``submitting`` or ``submitted`` batch: runs do not
submit it again; they collect it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd

from judges.stores.judge_store import CallRecord, JudgeStore
from labels.stores.db import Database
from labels.stores.migrations import Migration

M001_BATCHES = """
CREATE TABLE judge_batches (
    batch_key VARCHAR PRIMARY KEY,
    config_id VARCHAR NOT NULL,
    provider VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL,
    state VARCHAR NOT NULL
        CHECK (state IN ('submitting', 'submitted', 'collected', 'abandoned')),
    batch_id VARCHAR,
    input_file_id VARCHAR,
    calls INTEGER NOT NULL,
    status VARCHAR,
    counts JSON,
    error VARCHAR,
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    submitted_at TIMESTAMPTZ,
    ended_at TIMESTAMPTZ,
    collected_at TIMESTAMPTZ,
    collected_by VARCHAR
);
CREATE TABLE judge_batch_calls (
    batch_key VARCHAR NOT NULL,
    custom_id VARCHAR NOT NULL,
    item_id VARCHAR NOT NULL,
    item_hash VARCHAR NOT NULL,
    repeat INTEGER NOT NULL,
    ordering VARCHAR NOT NULL,
    request JSON NOT NULL,
    outcome VARCHAR CHECK (outcome IN ('stored', 'retry', 'failed')),
    PRIMARY KEY (batch_key, custom_id)
)
"""

BATCH_MIGRATIONS = [Migration("m001_batches", M001_BATCHES)]
OPEN_STATES = ("submitting", "submitted")


@dataclass(frozen=True)
class BatchCall:
    """One call a batch carries: our custom id, the call's cache key, and the request sent."""

    custom_id: str
    item_id: str
    item_hash: str
    repeat: int
    ordering: str
    request: dict[str, Any]

    @property
    def key(self) -> tuple[str, int, str]:
        """``(item_hash, repeat, ordering)``, the cache key within the config."""
        return (self.item_hash, self.repeat, self.ordering)


@dataclass(frozen=True)
class StoredBatch:
    """One row of ``judge_batches``."""

    batch_key: str
    config_id: str
    provider: str
    run_id: str
    state: str
    batch_id: str | None
    input_file_id: str | None
    calls: int
    status: str | None
    counts: dict[str, int] | None
    error: str | None
    created_at: datetime
    submitted_at: datetime | None
    ended_at: datetime | None
    collected_at: datetime | None


_BATCH_COLUMNS = (
    "batch_key, config_id, provider, run_id, state, batch_id, input_file_id, calls, status, "
    "counts, error, created_at, submitted_at, ended_at, collected_at"
)


def new_batch_key() -> str:
    """A short unique key of ours (it prefixes every custom id: ``k1a2b3c4d5e6f_17``)."""
    return "k" + uuid.uuid4().hex[:16]


class BatchStore:
    """Provider batches in the label store's DuckDB file (a cursor per method, thread-safe).

    Args:
        db: the open :class:`~labels.stores.db.Database`; the ``judge_batches`` migrations are
            applied.
        judges: the judge store of the same database, which a collected batch's calls are
            stored through.
    """

    TABLES = ("judge_batch_calls", "judge_batches")
    """The tables this store owns: no other store's SQL names them."""

    def __init__(self, db: Database, judges: JudgeStore) -> None:
        """Use ``db``, applying the ``judge_batches`` migrations it lacks."""
        self.db = db
        self.judges = judges
        db.ensure_migrated("judge_batches", BATCH_MIGRATIONS)

    def begin(self, key: str, *, config_id: str, provider: str, run_id: str,
              calls: Sequence[BatchCall]) -> None:
        """Record submission ``key`` and its calls (``submitting``) before anything is sent."""
        frame = pd.DataFrame(
            [[key, c.custom_id, c.item_id, c.item_hash, c.repeat, c.ordering,
              json.dumps(c.request, ensure_ascii=False)] for c in calls],
            columns=["batch_key", "custom_id", "item_id", "item_hash", "repeat", "ordering",
                     "request"],
        )
        with self.db.transaction() as cur:
            cur.execute(
                "INSERT INTO judge_batches (batch_key, config_id, provider, run_id, state, calls)"
                " VALUES (?, ?, ?, ?, 'submitting', ?)",
                [key, config_id, provider, run_id, len(calls)],
            )
            cur.register("new_batch_calls", frame)
            cur.execute(
                "INSERT INTO judge_batch_calls (batch_key, custom_id, item_id, item_hash, "
                "repeat, ordering, request) SELECT * FROM new_batch_calls"
            )
            cur.unregister("new_batch_calls")

    def submitted(self, batch_key: str, batch_id: str, input_file_id: str | None) -> None:
        """The provider accepted the submission: store its batch id."""
        self.db.execute(
            "UPDATE judge_batches SET state = 'submitted', batch_id = ?, input_file_id = ?, "
            "submitted_at = current_timestamp WHERE batch_key = ?",
            [batch_id, input_file_id, batch_key],
        )

    def abandon(self, batch_key: str, reason: str) -> None:
        """The submission never reached the provider (or was refused): its calls are free."""
        self.db.execute(
            "UPDATE judge_batches SET state = 'abandoned', error = ? WHERE batch_key = ?",
            [reason[:2000], batch_key],
        )

    def update_status(self, batch_key: str, status: str, counts: dict[str, int],
                      ended_at: datetime | None) -> None:
        """What the last poll said (shown by ``calibrate judge batches`` and the app)."""
        self.db.execute(
            "UPDATE judge_batches SET status = ?, counts = ?, ended_at = ? "
            "WHERE batch_key = ?",
            [status, json.dumps(counts), ended_at, batch_key],
        )

    def collect(self, batch_key: str, run_id: str, records: Sequence[CallRecord],
                outcomes: dict[str, str], *, error: str | None = None) -> bool:
        """Store a batch's final call rows and mark it collected, in one transaction.

        ``outcomes`` maps each custom id to ``stored`` (a reply row written), ``failed`` (a
        failed row written) or ``retry`` (no row; the call is free to be sent again).
        Returns False, writing nothing, when another run collected the batch first (two runs
        of one judge on two datasets both polling it); DuckDB refuses the slower of two
        concurrent collections as a write conflict.
        """
        frame = pd.DataFrame(list(outcomes.items()), columns=["custom_id", "outcome"])
        with self.db.transaction() as cur:
            claimed = cur.execute(
                "UPDATE judge_batches SET state = 'collected', collected_at = current_timestamp,"
                " collected_by = ?, error = coalesce(?, error) "
                "WHERE batch_key = ? AND list_contains(?, state) RETURNING batch_key",
                [run_id, error, batch_key, list(OPEN_STATES)],
            ).fetchall()
            if not claimed:
                return False
            self.judges.add_calls(cur, records)
            cur.register("batch_outcomes", frame)
            cur.execute(
                "UPDATE judge_batch_calls SET outcome = o.outcome FROM batch_outcomes o "
                "WHERE judge_batch_calls.batch_key = ? "
                "AND judge_batch_calls.custom_id = o.custom_id",
                [batch_key],
            )
            cur.unregister("batch_outcomes")
        return True

    def open_batches(self, config_id: str, provider: str) -> list[StoredBatch]:
        """Submissions of ``config_id`` on ``provider`` not yet collected, oldest first."""
        return self.batches(config_id=config_id, provider=provider, states=OPEN_STATES)

    def batches(self, *, config_id: str | None = None, provider: str | None = None,
                states: Sequence[str] | None = None) -> list[StoredBatch]:
        """Stored submissions (optionally filtered), oldest first."""
        where: list[str] = ["true"]
        params: list[Any] = []
        for column, value in (("config_id", config_id), ("provider", provider)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if states is not None:
            where.append("list_contains(?, state)")
            params.append(list(states))
        rows = self.db.fetchall(
            f"SELECT {_BATCH_COLUMNS} FROM judge_batches WHERE {' AND '.join(where)} "
            "ORDER BY created_at, batch_key",
            params,
        )
        return [
            StoredBatch(
                batch_key=r[0], config_id=r[1], provider=r[2], run_id=r[3], state=r[4],
                batch_id=r[5], input_file_id=r[6], calls=int(r[7]), status=r[8],
                counts=json.loads(r[9]) if r[9] else None, error=r[10], created_at=r[11],
                submitted_at=r[12], ended_at=r[13], collected_at=r[14],
            )
            for r in rows
        ]

    def known_batch_ids(self, provider: str) -> set[str]:
        """Every provider batch id recorded for ``provider`` (any config, any state)."""
        rows = self.db.fetchall(
            "SELECT batch_id FROM judge_batches WHERE provider = ? AND batch_id IS NOT NULL",
            [provider],
        )
        return {str(r[0]) for r in rows}

    def calls(self, batch_key: str) -> list[BatchCall]:
        """The calls a submission carries."""
        rows = self.db.fetchall(
            "SELECT custom_id, item_id, item_hash, repeat, ordering, request "
            "FROM judge_batch_calls WHERE batch_key = ? ORDER BY custom_id",
            [batch_key],
        )
        return [BatchCall(r[0], r[1], r[2], int(r[3]), r[4], json.loads(r[5])) for r in rows]

    def in_flight_keys(self, config_id: str) -> set[tuple[str, int, str]]:
        """Call keys of ``config_id`` carried by a batch not yet collected."""
        rows = self.db.fetchall(
            "SELECT DISTINCT c.item_hash, c.repeat, c.ordering FROM judge_batch_calls c "
            "JOIN judge_batches b USING (batch_key) "
            "WHERE b.config_id = ? AND list_contains(?, b.state)",
            [config_id, list(OPEN_STATES)],
        )
        return {(r[0], int(r[1]), r[2]) for r in rows}


__all__ = [
    "BATCH_MIGRATIONS", "OPEN_STATES", "BatchCall", "BatchStore", "StoredBatch", "new_batch_key",
]
