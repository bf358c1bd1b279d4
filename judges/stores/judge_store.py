"""JudgeStore: the only SQL on judge configs, runs and calls (tables: :mod:`.judge_schema`).

Every call a judge makes is one row of ``judge_calls``, written as soon as the reply (or the
final error) is in: the rendered request without keys or headers, the raw reply and the full raw
response, then the parsed verdict or the unscored reason, tokens, cost, latency, retries and
each failed attempt. A call stored with a reply (``scored`` or ``unscored``) is the cache for
its key ``(config_id, item_hash, repeat, ordering)`` and is never paid for again; a ``failed``
row is kept for the record and retried by the next run.

Rows are written in small transactions (at most ~4 a second, see
:data:`judges.runner.WRITE_INTERVAL`), so a ``kill -9`` loses at most the replies of the last
quarter second and the calls in flight; a resumed run picks up from the last commit.

The tables live in the same DuckDB file as the label store; ``item_id`` is the dataset's id
for the item, ``item_hash`` is the call's key. A call the tool makes is keyed by the item's
content (:func:`item_hash`, ``i…``), so rows with the same text, in one dataset or two, share
it: the judge saw the same thing. A verdict someone else made (``verdicts import``, a tool's
export) belongs to its row: it is keyed by :func:`bound_key` of the row's id and content
(``v…``), so two ids with identical content each keep their own imported verdict, and an
imported verdict never stands in for another row. :meth:`JudgeStore.keys_for` gives each
dataset row the key its verdicts are stored under for a config.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from judges.config import JudgeConfig, canonical_json, parse_config
from judges.stores import judge_keys
from judges.stores.judge_aggregates import item_aggregates
from labels.errors import NotFoundError
from labels.models import Item
from labels.stores.db import Database, equal_conditions
from labels.validation import check_name

from .judge_schema import CALL_COLUMNS, JUDGE_MIGRATIONS, JUDGE_TABLES

_SMALL_BATCH = 3

_CALL_ARROW_TYPES = {
    **dict.fromkeys(CALL_COLUMNS, pa.string()),
    "repeat": pa.int64(), "input_tokens": pa.int64(), "output_tokens": pa.int64(),
    "retries": pa.int64(), "cost": pa.float64(), "latency_ms": pa.float64(),
    "created_at": pa.timestamp("us", tz="UTC"),
}
"""The Arrow type of each ``judge_calls`` column of a batch insert: types inferred from one
batch's values would change with them (a NaN stored as NaN, an ``int`` and a ``str`` in one
column refused)."""

# Per (item hash, repeat, order) of config $config, the stored call that counts (rank 1): the
# latest reply, or the latest failure where no reply exists.
_LATEST_CALLS = """
    WITH ranked AS (
        SELECT c.*, row_number() OVER (
            PARTITION BY c.item_hash, c.repeat, c.ordering
            ORDER BY (c.status <> 'failed') DESC, c.call_id DESC) AS rank
        FROM judge_calls c WHERE c.config_id = $config
    )
"""


# Runs of this process that are still executing (a 'running' row not in here, from this pid or
# a dead one, was interrupted).
_ACTIVE_RUNS: set[str] = set()
_ACTIVE_LOCK = threading.Lock()


def item_hash(item: Item) -> str:
    """The cache identity of an item: a hash of what a judge can see (not its id or metadata)."""
    judged = {
        "question": item.question, "answer": item.answer, "answer_a": item.answer_a,
        "answer_b": item.answer_b, "reference": item.reference,
        "sources": [{"text": s.text, "source_id": s.source_id} for s in item.sources],
    }
    return "i" + hashlib.blake2b(canonical_json(judged).encode(), digest_size=12).hexdigest()


def bound_key(item_id: str, content_hash: str) -> str:
    """The key of a verdict that belongs to one row: ``v`` + 96 bits of a SHA-256.

    Of the row's content hash (:func:`item_hash`, fixed length) followed by its id, so two
    ids with the same content get two keys, and the same id with other content another.
    Imported verdicts are stored under it (see the module docstring).
    """
    return "v" + hashlib.sha256((content_hash + item_id).encode()).hexdigest()[:24]


@dataclass
class CallRecord:
    """One row of ``judge_calls`` (see the module docstring for what each field holds)."""

    run_id: str
    config_id: str
    item_id: str
    item_hash: str
    repeat: int
    ordering: str
    status: str
    request: dict[str, Any] | None = None
    reply: str | None = None
    raw_response: Any = None
    finish_reason: str | None = None
    verdict: str | None = None
    reply_label: str | None = None
    reasoning: str | None = None
    unscored_reason: str | None = None
    detail: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    latency_ms: float | None = None
    error: str | None = None
    error_kind: str | None = None
    retries: int = 0
    attempts: list[dict[str, Any]] = field(default_factory=list)
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def key(self) -> tuple[str, int, str]:
        """``(item_hash, repeat, ordering)``: the cache key within one config."""
        return (self.item_hash, self.repeat, self.ordering)

    def row(self) -> list[Any]:
        """Values in :data:`CALL_COLUMNS` order, JSON fields serialised."""
        values = []
        for name in CALL_COLUMNS:
            value = getattr(self, name)
            if name in ("request", "raw_response", "attempts"):
                value = None if value is None else json.dumps(value, ensure_ascii=False,
                                                              default=str)
            elif value != value:  # NaN (cost, latency): NULL, as the Arrow insert stores it
                value = None
            values.append(value)
        return values


@dataclass(frozen=True)
class RunRecord:
    """One row of ``judge_runs``; ``status`` reads ``interrupted`` for a run that died."""

    run_id: str
    config_id: str
    dataset: str
    origin: str
    status: str
    options: dict[str, Any]
    planned: int
    summary: dict[str, Any] | None
    started_at: datetime
    finished_at: datetime | None
    name: str
    revision: int


@dataclass(frozen=True)
class StoredConfig:
    """A config as saved: its id, name, revision, origin and the config itself (if any)."""

    config_id: str
    name: str
    revision: int
    kind: str
    criterion: str
    model: str
    origin: str
    created_at: datetime
    config: JudgeConfig | None
    source: dict[str, Any] | None = None
    """An external judge's source (tool, metric, score rule), when its import recorded one."""


def _pid_alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def external_body(
    name: str, kind: str, source: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What an external judge's config row holds, and its id is the hash of.

    ``source`` says where its verdicts came from when that is known (the tool, its metric,
    the rule that made scores verdicts): part of the identity, so a threshold of 0.7 and one
    of 0.5 are two judges. Without one the body (and so the id) is what it always was.
    """
    body: dict[str, Any] = {"external": True, "name": name, "kind": kind}
    if source:
        body["source"] = dict(source)
    return body


def external_config_id(name: str, kind: str, source: Mapping[str, Any] | None = None) -> str:
    """The id of the external judge ``name`` (verdicts imported from files): ``ext:<hash>``."""
    body = external_body(name, kind, source)
    return "ext:" + hashlib.blake2b(canonical_json(body).encode(), digest_size=12).hexdigest()


def new_run_id() -> str:
    """A sortable, unique run id: ``r20261129T120501-1a2b3c``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"r{stamp}-{uuid.uuid4().hex[:6]}"


def insert_calls(cur: Any, calls: Sequence[CallRecord]) -> None:
    """Insert ``calls`` with ``cur`` (inside the caller's transaction, e.g. a batch collection)."""
    if not calls:
        return
    columns = ", ".join(CALL_COLUMNS)
    if len(calls) <= _SMALL_BATCH:
        placeholders = ", ".join("?" for _ in CALL_COLUMNS)
        cur.executemany(f"INSERT INTO judge_calls ({columns}) VALUES ({placeholders})",
                        [c.row() for c in calls])
        return
    # executemany costs ~1 ms a row; a registered Arrow table inserts 16 rows in ~4 ms of CPU
    # (a pandas frame of objects took ~8 ms). Each column has the table column's type; None
    # is NULL, and CallRecord.row() has turned NaN into None, as the frame stored it.
    rows = [c.row() for c in calls]
    batch = pa.table({
        name: pa.array([row[i] for row in rows], type=_CALL_ARROW_TYPES[name])
        for i, name in enumerate(CALL_COLUMNS)})
    cur.register("judge_call_batch", batch)
    try:
        cur.execute(f"INSERT INTO judge_calls ({columns}) SELECT * FROM judge_call_batch")
    finally:
        # After a failed insert the transaction is aborted and unregister fails too;
        # the cursor is discarded anyway, and the insert's error is the one to report.
        with contextlib.suppress(duckdb.Error):
            cur.unregister("judge_call_batch")


class JudgeStore:
    """Judge configs, runs and calls in the label store's DuckDB file.

    Every method takes its own cursor, so one store may be shared by threads (a run's writer
    thread, Streamlit sessions).

    Args:
        db: the open :class:`~labels.stores.db.Database`; the ``judges`` migrations are applied.
    """

    TABLES = JUDGE_TABLES
    """The tables this store owns: no other store's SQL names them."""

    def __init__(self, db: Database) -> None:
        """Use ``db``, applying the ``judges`` migrations it lacks."""
        self.db = db
        db.ensure_migrated("judges", JUDGE_MIGRATIONS)

    # -- configs ----------------------------------------------------------------------------

    def save_config(self, config: JudgeConfig) -> str:
        """Store ``config`` (idempotent) and return its id."""
        self._insert_config(self.db, config)
        return config.config_id

    @staticmethod
    def _insert_config(cur: Any, config: JudgeConfig) -> None:
        cur.execute(
            "INSERT INTO judge_configs (config_id, name, revision, kind, criterion, model, "
            "origin, config) VALUES (?, ?, ?, ?, ?, ?, 'config', ?) ON CONFLICT DO NOTHING",
            [config.config_id, config.name, config.revision, config.kind, config.criterion,
             config.model, config.canonical_json()],
        )

    def save_external(
        self, name: str, kind: str, criterion: str, source: Mapping[str, Any] | None = None
    ) -> str:
        """Register an external judge (verdicts imported from a file) and return its id.

        Raises:
            InvalidNameError: ``name`` breaks :data:`labels.validation.NAME_RULE`.
        """
        with self.db.cursor() as cur:
            return self._insert_external(cur, name, kind, criterion, source)

    @staticmethod
    def _insert_external(
        cur: Any, name: str, kind: str, criterion: str,
        source: Mapping[str, Any] | None = None,
    ) -> str:
        name = check_name(name, "judge")
        body = external_body(name, kind, source)
        config_id = external_config_id(name, kind, source)
        cur.execute(
            "INSERT INTO judge_configs (config_id, name, revision, kind, criterion, model, "
            "origin, config) VALUES (?, ?, 1, ?, ?, 'external', 'external', ?) "
            "ON CONFLICT DO NOTHING",
            [config_id, name, kind, criterion, canonical_json(body)],
        )
        return config_id

    def save_imported_run(
        self, *, judge: str, kind: str, criterion: str, dataset: str, run_id: str,
        options: dict[str, Any], calls: Sequence[CallRecord], summary: dict[str, Any],
        config_id: str | None = None, register_external: bool = True,
        config: JudgeConfig | None = None, source: Mapping[str, Any] | None = None,
    ) -> str:
        """Store verdicts imported from a file in one transaction.

        The external judge's config row, a completed run and its calls are written together;
        a failure leaves none of them behind.

        Args:
            judge: the external judge's name.
            kind: ``pointwise`` or ``pairwise``.
            criterion: what the verdicts judge.
            dataset: the dataset the verdicts are about.
            run_id: the new run's id.
            options: the run's options (where the verdicts came from).
            calls: the verdicts, one call record each.
            summary: the run's summary counts.
            config_id: the config the verdicts are stored under (default: the external
                judge's own id).
            register_external: store the external judge's config row (not needed when the
                verdicts belong to a config already stored).
            config: the judge config that made the verdicts, stored in the same transaction
                (``verdicts import --config``); the verdicts go under its id.
            source: where an external judge's verdicts came from (:func:`external_body`).

        Returns:
            The config id the verdicts were stored under.
        """
        with self.db.transaction() as cur:
            if config is not None:
                self._insert_config(cur, config)
                config_id, register_external = config.config_id, False
            if register_external:
                external = self._insert_external(cur, judge, kind, criterion, source)
                config_id = config_id or external
            elif config_id is None:
                raise ValueError("a config_id is needed when no external judge is registered")
            cur.execute(
                "INSERT INTO judge_runs (run_id, config_id, dataset, origin, status, options, "
                "planned, pid, summary, finished_at) VALUES (?, ?, ?, 'import', 'completed', ?, "
                "?, ?, ?, current_timestamp)",
                [run_id, config_id, dataset, canonical_json(options), len(calls), os.getpid(),
                 json.dumps(summary, default=str)],
            )
            insert_calls(cur, calls)
        return config_id

    def configs(self, *, name: str | None = None) -> list[StoredConfig]:
        """Stored configs (optionally one name), newest first."""
        where, params = ("WHERE name = ?", [name]) if name else ("", [])
        rows = self.db.fetchall(
            "SELECT config_id, name, revision, kind, criterion, model, origin, created_at, "
            f"config FROM judge_configs {where} ORDER BY created_at DESC, revision DESC",
            params,
        )
        return [
            StoredConfig(
                config_id=r[0], name=r[1], revision=r[2], kind=r[3], criterion=r[4], model=r[5],
                origin=r[6], created_at=r[7],
                config=parse_config(json.loads(r[8]), source=r[0]) if r[6] == "config" else None,
                source=json.loads(r[8]).get("source") if r[6] == "external" else None,
            )
            for r in rows
        ]

    def stored_config(self, config_id: str) -> StoredConfig:
        """One stored config by id, or :class:`NotFoundError`."""
        for stored in self.configs():
            if stored.config_id == config_id:
                return stored
        raise NotFoundError(f"no judge config with id {config_id!r}")

    # -- runs -------------------------------------------------------------------------------

    def create_run(
        self, config_id: str, dataset: str, *, options: dict[str, Any], planned: int,
        origin: str = "run", run_id: str | None = None,
    ) -> str:
        """Start a run row (status ``running``) and return its id."""
        run_id = run_id or new_run_id()
        # Active before the row is visible: a reader in between would take a 'running' row of
        # this process that is not active for an interrupted run.
        with _ACTIVE_LOCK:
            _ACTIVE_RUNS.add(run_id)
        try:
            self.db.execute(
                "INSERT INTO judge_runs (run_id, config_id, dataset, origin, status, options, "
                "planned, pid) VALUES (?, ?, ?, ?, 'running', ?, ?, ?)",
                [run_id, config_id, dataset, origin, canonical_json(options), planned,
                 os.getpid()],
            )
        except BaseException:
            with _ACTIVE_LOCK:
                _ACTIVE_RUNS.discard(run_id)
            raise
        return run_id

    def finish_run(self, run_id: str, status: str, summary: dict[str, Any]) -> None:
        """Record a run's final status and summary."""
        try:
            self.db.execute(
                "UPDATE judge_runs SET status = ?, summary = ?, finished_at = current_timestamp "
                "WHERE run_id = ?",
                [status, json.dumps(summary, default=str), run_id],
            )
        finally:
            # Left active after a failed update, the run would read 'running' until the process
            # exits; its row is still 'running', so it now reads interrupted, as it is.
            with _ACTIVE_LOCK:
                _ACTIVE_RUNS.discard(run_id)

    def runs(
        self, *, dataset: str | None = None, config_id: str | None = None,
        name: str | None = None,
    ) -> list[RunRecord]:
        """Runs, newest first; a ``running`` run whose process is gone reads ``interrupted``."""
        where, params = equal_conditions(
            {"r.dataset": dataset, "r.config_id": config_id, "c.name": name})
        # The active set is read both before and after the rows. create_run joins the set before
        # its row is visible, so a run that starts while the query runs is in the set read after;
        # finish_run commits the final status before leaving the set, so a run that finishes
        # meanwhile is in the set read before (or finished in the rows). Either read alone would
        # take one of them for an interrupted run.
        with _ACTIVE_LOCK:
            active = set(_ACTIVE_RUNS)
        rows = self.db.fetchall(
            "SELECT r.run_id, r.config_id, r.dataset, r.origin, r.status, r.options, "
            "r.planned, r.summary, r.started_at, r.finished_at, r.pid, c.name, c.revision "
            "FROM judge_runs r JOIN judge_configs c USING (config_id) "
            f"WHERE {' AND '.join(where)} ORDER BY r.started_at DESC, r.run_id DESC",
            params,
        )
        with _ACTIVE_LOCK:
            active |= _ACTIVE_RUNS
        out = []
        for r in rows:
            status = r[4]
            if status == "running" and r[0] not in active and (
                r[10] == os.getpid() or not _pid_alive(r[10])
            ):
                status = "interrupted"
            out.append(
                RunRecord(
                    run_id=r[0], config_id=r[1], dataset=r[2], origin=r[3], status=status,
                    options=json.loads(r[5]), planned=r[6],
                    summary=json.loads(r[7]) if r[7] else None, started_at=r[8],
                    finished_at=r[9], name=r[11], revision=r[12],
                )
            )
        return out

    # -- calls ------------------------------------------------------------------------------

    def completed_keys(self, config_id: str) -> set[tuple[str, int, str]]:
        """Keys ``(item_hash, repeat, ordering)`` that already have a reply for ``config_id``."""
        rows = self.db.fetchall(
            "SELECT DISTINCT item_hash, repeat, ordering FROM judge_calls "
            "WHERE config_id = ? AND status <> 'failed'",
            [config_id],
        )
        return {(r[0], int(r[1]), r[2]) for r in rows}

    def has_bound(self, config_id: str) -> bool:
        """Whether ``config_id`` has verdicts bound to their rows (imported ones)."""
        row = self.db.fetchone(
            "SELECT 1 FROM judge_calls WHERE config_id = ? AND starts_with(item_hash, 'v') "
            "LIMIT 1", [config_id])
        return row is not None

    def keys_for(self, config_id: str, keys: pa.Table) -> pa.Table:
        """``keys`` with each row's ``item_hash`` the key its verdicts of ``config_id`` have.

        ``keys`` holds a dataset's rows (``item_id``, content ``item_hash``, any other
        columns, in order). A row with a verdict of its own under ``config_id`` (imported:
        :func:`bound_key`) is keyed by it; every other row by its content, the key of the
        calls the tool makes and shares between rows of the same content. A config without
        imported verdicts returns ``keys`` as they are, without a query over them.
        """
        if not self.has_bound(config_id):
            return keys
        return judge_keys.bound_keys(self.db, config_id, keys)

    def uncached(self, config_id: str | None, keys: pa.Table) -> np.ndarray:
        """Indexes of the planned ``keys`` rows to call (:func:`.judge_keys.uncached`).

        No stored reply for ``config_id`` (``None``: no cache), and the first of equal keys.
        """
        return judge_keys.uncached(self.db, config_id, keys)

    def stored_outcomes(self, config_id: str) -> dict[tuple[str, int, str], tuple[str, str | None]]:
        """Per key with a reply: ``(status, verdict)`` of the latest stored reply."""
        rows = self.db.fetchall(
            "SELECT item_hash, repeat, ordering, status, verdict FROM judge_calls "
            "WHERE config_id = ? AND status <> 'failed' QUALIFY row_number() OVER "
            "(PARTITION BY item_hash, repeat, ordering ORDER BY call_id DESC) = 1",
            [config_id],
        )
        return {(r[0], int(r[1]), r[2]): (r[3], r[4]) for r in rows}

    def add_calls(self, cur: Any, calls: Sequence[CallRecord]) -> None:
        """Insert ``calls`` with ``cur``, inside the caller's transaction.

        For a store whose own rows must change in the same transaction (a batch is marked
        collected as its calls are stored: :meth:`judges.stores.batch_store.BatchStore.collect`).
        """
        insert_calls(cur, calls)

    def write_calls(self, calls: Sequence[CallRecord]) -> None:
        """Insert ``calls`` in one transaction (all or none)."""
        if not calls:
            return
        with self.db.transaction() as cur:
            insert_calls(cur, calls)

    def calls_frame(
        self, *, run_id: str | None = None, config_id: str | None = None,
        item_ids: Iterable[str] | None = None, columns: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """Stored calls as a DataFrame (every column of ``judge_calls`` unless ``columns``)."""
        where, params = equal_conditions({"run_id": run_id, "config_id": config_id})
        if item_ids is not None:
            where.append("list_contains(?, item_id)")
            params.append(list(item_ids))
        selected = ", ".join(columns) if columns else "*"
        return self.db.frame(
            f"SELECT {selected} FROM judge_calls WHERE {' AND '.join(where)} "
            "ORDER BY call_id",
            params,
        )

    def latest_calls(self, config_id: str, items: pd.DataFrame) -> pd.DataFrame:
        """Per (item, repeat, order): the latest stored reply of ``config_id`` on ``items``.

        A failed call counts only where no reply exists. ``items`` has columns ``item_id``,
        ``item_hash`` and ``position`` (a dataset's rows, in order); the result has
        ``item_id``, ``repeat``, ``order``, ``verdict`` (``unscored`` unless scored),
        ``reasoning``, ``unscored_reason`` (``failed:<kind>`` for a failed call), ``run_id``
        and ``config_id``, ordered by position, repeat and order.
        """
        with self.db.cursor() as cur:
            cur.register("dataset_items", items)
            frame = cur.execute(
                _LATEST_CALLS + """
                SELECT d.item_id, r.repeat, r.ordering AS "order",
                       CASE WHEN r.status = 'scored' THEN r.verdict ELSE 'unscored' END AS verdict,
                       CASE WHEN r.status = 'scored' THEN r.reasoning END AS reasoning,
                       CASE WHEN r.status = 'unscored' THEN r.unscored_reason
                            WHEN r.status = 'failed'
                            THEN 'failed:' || coalesce(r.error_kind, 'error')
                       END AS unscored_reason,
                       r.run_id, r.config_id
                FROM dataset_items d JOIN ranked r ON r.item_hash = d.item_hash AND r.rank = 1
                ORDER BY d.position, r.repeat, r.ordering = 'swapped'
                """,
                {"config": config_id},
            ).df()
            cur.unregister("dataset_items")
        return frame

    def call_layout(self, config_id: str, items: pd.DataFrame | pa.Table) -> tuple[int, bool]:
        """``(repeats, swapped)`` of ``config_id``'s stored calls on ``items``.

        ``repeats`` is one more than the highest repeat number (0 without calls); ``swapped``
        says whether any call saw the two answers swapped. ``items`` has an ``item_hash``
        column (a dataset's :func:`judges.verdicts.dataset_keys`).
        """
        with self.db.cursor() as cur:
            cur.register("dataset_items", items)
            try:
                [(repeats, swapped)] = cur.execute(
                    "SELECT coalesce(max(c.repeat) + 1, 0), "
                    "coalesce(bool_or(c.ordering = 'swapped'), false) FROM judge_calls c "
                    "SEMI JOIN dataset_items d ON d.item_hash = c.item_hash "
                    "WHERE c.config_id = $config", {"config": config_id},
                ).fetchall()
            finally:
                cur.unregister("dataset_items")
        return int(repeats), bool(swapped)

    def item_aggregates(
        self, config_id: str, items: pd.DataFrame | pa.Table, *, categories: Sequence[str],
        inconsistent: str, rule: str, texts_for: Collection[str] | None = None,
    ) -> pa.Table:
        """Per item: the calls of :meth:`latest_calls` combined in SQL.

        The SQL twin of :func:`judges.calibration.self_consistency`; see
        :func:`judges.stores.judge_aggregates.item_aggregates` for the arguments and the columns.
        """
        return item_aggregates(self.db, config_id, items, categories=categories,
                               inconsistent=inconsistent, rule=rule, texts_for=texts_for)

    def call_costs(self, config_id: str, items: pd.DataFrame | pa.Table) -> dict[str, Any]:
        """What ``config_id``'s calls on ``items`` (a dataset's keys) cost, as logged.

        Over the call that counts per (item, repeat, order), as :meth:`latest_calls`: ``items``
        (judged), ``calls``, ``input_tokens`` and ``output_tokens`` (sums over the calls that
        logged them), ``tokens_logged`` (such calls), ``cost`` (the sum of the logged costs)
        and ``cost_logged`` (calls with a cost).
        """
        with self.db.cursor() as cur:
            cur.register("dataset_items", items)
            try:
                [row] = cur.execute(
                    _LATEST_CALLS + """
                    SELECT count(DISTINCT r.item_hash), count(*),
                           coalesce(sum(r.input_tokens), 0), coalesce(sum(r.output_tokens), 0),
                           count(*) FILTER (WHERE r.input_tokens IS NOT NULL
                                            OR r.output_tokens IS NOT NULL),
                           coalesce(sum(r.cost), 0), count(r.cost)
                    FROM ranked r SEMI JOIN dataset_items d ON d.item_hash = r.item_hash
                    WHERE r.rank = 1
                    """, {"config": config_id},
                ).fetchall()
            finally:
                cur.unregister("dataset_items")
        names = ("items", "calls", "input_tokens", "output_tokens", "tokens_logged", "cost",
                 "cost_logged")
        return {n: (float(v) if n == "cost" else int(v)) for n, v in zip(names, row, strict=True)}

    def calls_on_items(self, config_id: str, items: pd.DataFrame) -> pd.DataFrame:
        """Every stored call of ``config_id`` on ``items`` (all columns, for browsing).

        ``items`` as for :meth:`latest_calls`; ``item_id`` is the id in that item list.
        """
        with self.db.cursor() as cur:
            cur.register("dataset_items", items)
            frame = cur.execute(
                "SELECT d.item_id AS dataset_item_id, c.* EXCLUDE (item_id) "
                "FROM dataset_items d JOIN judge_calls c ON c.item_hash = d.item_hash "
                "WHERE c.config_id = ? ORDER BY d.position, c.repeat, c.ordering, c.call_id",
                [config_id],
            ).df()
            cur.unregister("dataset_items")
        return frame.rename(columns={"dataset_item_id": "item_id"})

    def run_counts(self) -> dict[str, int]:
        """Dataset name → number of judge runs (and verdict imports) on it."""
        rows = self.db.fetchall(
            "SELECT dataset, count(*) FROM judge_runs GROUP BY dataset"
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def latest_config_on(self, dataset: str) -> str | None:
        """The config of the newest run (or import) on ``dataset``; ``None`` before any."""
        row = self.db.fetchone(
            "SELECT config_id FROM judge_runs WHERE dataset = ? "
            "ORDER BY started_at DESC, run_id DESC LIMIT 1",
            [dataset],
        )
        return None if row is None else str(row[0])

    def calls_fingerprint(self, dataset: str) -> str:
        """Changes whenever a call is stored by a run on ``dataset`` (one cheap aggregate)."""
        row = self.db.fetchone(
            "SELECT count(*), max(c.call_id) FROM judge_calls c "
            "JOIN judge_runs r USING (run_id) WHERE r.dataset = ?",
            [dataset],
        )
        return "none" if row is None or not row[0] else f"{row[0]}:{row[1]}"

    def mean_output_tokens(self, config_id: str) -> float | None:
        """Mean output tokens of the stored calls of ``config_id`` (``None`` before any)."""
        row = self.db.fetchone(
            "SELECT avg(output_tokens) FROM judge_calls WHERE config_id = ? "
            "AND output_tokens IS NOT NULL",
            [config_id],
        )
        return None if row is None or row[0] is None else float(row[0])

    def call_counts(self, config_id: str) -> dict[str, int]:
        """Number of stored calls per status for ``config_id``."""
        rows = self.db.fetchall(
            "SELECT status, count(*) FROM judge_calls WHERE config_id = ? GROUP BY status",
            [config_id],
        )
        return {r[0]: int(r[1]) for r in rows}


__all__ = [
    "CALL_COLUMNS", "JUDGE_MIGRATIONS", "CallRecord", "JudgeStore",
    "RunRecord", "StoredConfig", "bound_key", "external_body", "external_config_id",
    "insert_calls", "item_hash", "new_run_id",
]
