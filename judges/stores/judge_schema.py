"""The tables of :class:`.judge_store.JudgeStore`: migration set ``judges`` and its call columns.

``judge_configs`` (every config, by content hash), ``judge_runs`` and ``judge_calls`` (one row
per call, its key ``(config_id, item_hash, repeat, ordering)``), and the migrations that made
them what they are; :mod:`judges.stores.judge_store` holds the queries over them, as
:mod:`labels.stores.schema`
does for :mod:`labels.stores.label_store`.
"""

from __future__ import annotations

from typing import Any

from labels.stores.migrations import Migration

__all__ = ["CALL_COLUMNS", "JUDGE_MIGRATIONS", "JUDGE_TABLES", "M001_CORE"]

M001_CORE = """
CREATE TABLE judge_configs (
    config_id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    revision INTEGER NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('pointwise', 'pairwise')),
    criterion VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    origin VARCHAR NOT NULL CHECK (origin IN ('config', 'external')),
    config JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
CREATE TABLE judge_runs (
    run_id VARCHAR PRIMARY KEY,
    config_id VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    origin VARCHAR NOT NULL CHECK (origin IN ('run', 'import')),
    status VARCHAR NOT NULL,
    options JSON NOT NULL,
    planned INTEGER NOT NULL DEFAULT 0,
    summary JSON,
    pid INTEGER,
    started_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    finished_at TIMESTAMPTZ
);
CREATE SEQUENCE judge_call_ids START 1;
CREATE TABLE judge_calls (
    call_id BIGINT PRIMARY KEY DEFAULT nextval('judge_call_ids'),
    run_id VARCHAR NOT NULL,
    config_id VARCHAR NOT NULL,
    item_id VARCHAR NOT NULL,
    item_hash VARCHAR NOT NULL,
    repeat INTEGER NOT NULL,
    ordering VARCHAR NOT NULL CHECK (ordering IN ('original', 'swapped')),
    status VARCHAR NOT NULL CHECK (status IN ('scored', 'unscored', 'failed')),
    request JSON,
    reply VARCHAR,
    raw_response JSON,
    finish_reason VARCHAR,
    verdict VARCHAR CHECK (verdict IN ('pass', 'fail', 'unsure', 'a', 'b', 'tie')),
    reply_label VARCHAR,
    reasoning VARCHAR,
    unscored_reason VARCHAR,
    detail VARCHAR,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cost DOUBLE,
    latency_ms DOUBLE,
    error VARCHAR,
    error_kind VARCHAR,
    retries INTEGER NOT NULL DEFAULT 0,
    attempts JSON NOT NULL DEFAULT '[]',
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
)
"""

_BOUND_KEY_SQL = "'v' || left(sha256({hash} || {id}), 24)"
""":func:`bound_key` in SQL (DuckDB's ``sha256`` of the UTF-8 text, lower-case hex)."""


def _m002_bound_imports(con: Any) -> None:
    """Key every imported verdict by its row (:func:`bound_key`), not by the row's content.

    Before, an imported verdict was keyed by content like a call the tool makes, so a second
    id with identical content could not have its own (the import refused it as a duplicate)
    and inherited the first id's verdict instead. The verdicts of import runs are re-keyed
    to their own id; a twin that had borrowed one now has none, as nobody gave it one.
    """
    key = _BOUND_KEY_SQL.format(id="item_id", hash="item_hash")
    con.execute(
        f"UPDATE judge_calls SET item_hash = {key} WHERE starts_with(item_hash, 'i') AND run_id IN "
        "(SELECT run_id FROM judge_runs WHERE origin = 'import')"
    )


JUDGE_MIGRATIONS = [Migration("m001_core", M001_CORE),
                    Migration("m002_bound_imports", _m002_bound_imports)]
JUDGE_TABLES = ("judge_calls", "judge_configs", "judge_runs")
"""The tables of migration set ``judges``."""

CALL_COLUMNS = (
    "run_id", "config_id", "item_id", "item_hash", "repeat", "ordering", "status", "request",
    "reply", "raw_response", "finish_reason", "verdict", "reply_label", "reasoning",
    "unscored_reason", "detail", "input_tokens", "output_tokens", "cost", "latency_ms", "error",
    "error_kind", "retries", "attempts", "created_at",
)
