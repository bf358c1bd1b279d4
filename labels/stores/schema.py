"""The label store's schema: the ``labels`` and ``queue`` migration sets.

``labels``: datasets, items, annotators, criteria, labels and how each label's row was chosen;
``queue``: the labelling queue's settings and each annotator's skipped rows.

Statements are split on semicolons, so string literals here must not contain one.
"""

from __future__ import annotations

from typing import Any

from labels.stores.item_store import fill_item_hashes
from labels.stores.migrations import Migration

M001_CORE = """
CREATE TABLE datasets (
    name VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL CHECK (kind IN ('pointwise', 'pairwise')),
    source_file VARCHAR,
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
CREATE TABLE items (
    dataset VARCHAR NOT NULL,
    item_id VARCHAR NOT NULL,
    position BIGINT NOT NULL,
    question VARCHAR NOT NULL,
    answer VARCHAR,
    answer_a VARCHAR,
    answer_b VARCHAR,
    sources JSON NOT NULL,
    reference VARCHAR,
    segment VARCHAR,
    document_id VARCHAR,
    metadata JSON NOT NULL,
    content_hash VARCHAR NOT NULL,
    imported_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (dataset, item_id)
);
CREATE TABLE annotators (
    name VARCHAR PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
CREATE TABLE criteria (
    name VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL CHECK (kind IN ('pointwise', 'pairwise')),
    guidelines VARCHAR NOT NULL DEFAULT '',
    show_reference BOOLEAN NOT NULL DEFAULT false,
    failure_tags JSON NOT NULL DEFAULT '[]',
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
INSERT INTO criteria (name, kind, guidelines, failure_tags) VALUES
    ('faithfulness', 'pointwise',
     'Pass when every claim in the answer is supported by the numbered sources. ' ||
     'Fail when any claim is unsupported or contradicted, or a condition from the sources ' ||
     'is dropped. Unsure when you cannot tell.',
     '["unsupported claim", "contradiction", "missing condition", "wrong refusal"]'),
    ('correctness', 'pointwise',
     'Pass when the answer agrees with the reference answer and leaves out nothing ' ||
     'the question needs.',
     '["wrong fact", "incomplete", "wrong refusal"]'),
    ('preference', 'pairwise',
     'Pick the better answer (A or B), or Tie when neither is better.',
     '[]');
CREATE SEQUENCE label_ids START 1;
CREATE TABLE labels (
    label_id BIGINT PRIMARY KEY DEFAULT nextval('label_ids'),
    dataset VARCHAR NOT NULL,
    item_id VARCHAR NOT NULL,
    annotator VARCHAR NOT NULL,
    criterion VARCHAR NOT NULL,
    verdict VARCHAR NOT NULL CHECK (verdict IN ('pass', 'fail', 'unsure', 'a', 'b', 'tie')),
    note VARCHAR NOT NULL DEFAULT '',
    failure_tags JSON NOT NULL DEFAULT '[]',
    labelled_at TIMESTAMPTZ NOT NULL,
    seconds_spent DOUBLE,
    origin VARCHAR NOT NULL DEFAULT 'app'
);
CREATE INDEX labels_by_item ON labels (dataset, item_id);
CREATE VIEW current_labels AS
SELECT * FROM labels
QUALIFY row_number() OVER (
    PARTITION BY dataset, item_id, annotator, criterion ORDER BY labelled_at DESC, label_id DESC
) = 1
"""

# How each label's row was chosen (issue 13). A table beside ``labels`` rather than new columns:
# DuckDB refuses ALTER TABLE on a table with an index, and labels stay append-only.
# ``selection``: random, by_verdict, flips_first, active, file, imported, all or unknown (labels
# from before this migration, and imports that do not say); ``stratum``: the judge verdict the
# row had when served (by-verdict and active orders); ``inclusion_probability``: the chance the
# row had of being served (active order) and ``selection_share`` its share of the selection
# weight (the report rescales it to the final number of labels); ``judge``: the judge config
# the order was based on.
M002_LABEL_PROVENANCE = """
CREATE TABLE label_provenance (
    label_id BIGINT PRIMARY KEY,
    selection VARCHAR NOT NULL CHECK (selection IN ('random', 'by_verdict', 'flips_first',
        'active', 'file', 'imported', 'all', 'unknown')),
    stratum VARCHAR,
    inclusion_probability DOUBLE CHECK (inclusion_probability > 0 AND inclusion_probability <= 1),
    selection_share DOUBLE CHECK (selection_share > 0 AND selection_share <= 1),
    judge VARCHAR
);
INSERT INTO label_provenance (label_id, selection) SELECT label_id, 'unknown' FROM labels
"""



def m003_item_hash(con: Any) -> None:
    """Each item's judge-cache hash as a column (issue 16), filled for the items already stored.

    The importer writes it with every new item; reports and run planning read it instead of
    hashing every item's text on every call. The fill runs page by page, in the migration's
    transaction.
    """
    con.execute("ALTER TABLE items ADD COLUMN item_hash VARCHAR")
    fill_item_hashes(con)


def _rebuilt(table: str, columns: str) -> str:
    """SQL giving ``table`` the ``columns``, its rows kept.

    DuckDB cannot change a CHECK constraint in place (nor ALTER a table with an index): the
    table is made again under a passing name, filled, dropped and the new one renamed.
    """
    return (f"CREATE TABLE {table}_new ({columns});\n"
            f"INSERT INTO {table}_new SELECT * FROM {table};\n"
            f"DROP TABLE {table};\n"
            f"ALTER TABLE {table}_new RENAME TO {table}")


# Labels drawn from the rows an acceptance rule escalated (issue 30: ``calibrate judge
# select``): a new selection, ``escalated``, so label_provenance is rebuilt with the wider CHECK.
M004_ESCALATED_SELECTION = _rebuilt("label_provenance", """
    label_id BIGINT PRIMARY KEY,
    selection VARCHAR NOT NULL CHECK (selection IN ('random', 'by_verdict', 'flips_first',
        'active', 'file', 'imported', 'all', 'unknown', 'escalated')),
    stratum VARCHAR,
    inclusion_probability DOUBLE CHECK (inclusion_probability > 0 AND inclusion_probability <= 1),
    selection_share DOUBLE CHECK (selection_share > 0 AND selection_share <= 1),
    judge VARCHAR
""")

# A point lookup of one item by id (the Label page reads its row on every key press): DuckDB
# does not look rows up by the (dataset, item_id) key, whose index spans two columns, and scanned
# the items' ids instead, 3-5 ms at 1,000,000 items; with this index, ~1 ms. Item ids are only
# inserted, never updated. (A later migration that alters ``items`` drops it first: DuckDB
# refuses ALTER TABLE on a table with an index.)
M005_ITEMS_BY_ID = "CREATE INDEX items_by_id ON items (item_id)"

LABEL_MIGRATIONS = [
    Migration("m001_core", M001_CORE),
    Migration("m002_label_provenance", M002_LABEL_PROVENANCE),
    Migration("m003_item_hash", m003_item_hash),
    Migration("m004_escalated_selection", M004_ESCALATED_SELECTION),
    Migration("m005_items_by_id", M005_ITEMS_BY_ID),
]

LABEL_TABLES = ("annotators", "criteria", "current_labels", "datasets", "items",
                "label_provenance", "labels")
"""The tables (and the view) of migration set ``labels``."""
QUEUE_TABLES = ("queue_escalations", "queue_settings", "queue_skips")
"""The tables of migration set ``queue`` (applied on the first use of the queue)."""


def _queue_settings(orders: str) -> str:
    """The columns of ``queue_settings`` when the queue orders were ``orders`` (SQL strings)."""
    return f"""
        dataset VARCHAR NOT NULL,
        criterion VARCHAR NOT NULL,
        queue_order VARCHAR NOT NULL CHECK (queue_order IN ({orders})),
        seed BIGINT NOT NULL,
        overlap INTEGER NOT NULL CHECK (overlap >= 1),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (dataset, criterion)"""


QUEUE_MIGRATIONS = [
    Migration("m001_queue_settings", "CREATE TABLE queue_settings (" + _queue_settings(
        "'random', 'stratified', 'flips_first', 'file'") + ")"),
]
"""The ``queue`` migration set: the owner's queue settings per (dataset, criterion), and each
annotator's skipped rows (kept across reloads, so a skipped row stays at the end of the queue)."""

# The active order: queue_settings rebuilt with the wider CHECK.
QUEUE_MIGRATIONS.append(Migration("m002_active_order", _rebuilt("queue_settings", _queue_settings(
    "'random', 'stratified', 'flips_first', 'file', 'active'"))))
# Each annotator's skips (m003: after the active order, so ledgers stay in name order).
QUEUE_MIGRATIONS.append(
    Migration(
        "m003_queue_skips",
        """
        CREATE TABLE queue_skips (
            dataset VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            annotator VARCHAR NOT NULL,
            item_id VARCHAR NOT NULL,
            skipped_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (dataset, criterion, annotator, item_id)
        )
        """,
    )
)
# The escalated order (issue 30): the rows an acceptance rule abstained on, to be labelled by
# experts. ``queue_escalations`` keeps every escalation (``rule``: the rule's id; ``judge``: the
# judge config whose verdicts it abstained on); the queue serves the newest of a (dataset,
# criterion), and a label records the rule it was drawn under (``label_provenance.stratum``), so
# the report splits the rows by the escalation that drew them.
QUEUE_MIGRATIONS.append(
    Migration(
        "m004_escalated_order",
        _rebuilt("queue_settings", _queue_settings(
            "'random', 'stratified', 'flips_first', 'file', 'active', 'escalated'")) + """;
        CREATE TABLE queue_escalations (
            dataset VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            rule VARCHAR NOT NULL,
            judge VARCHAR,
            item_id VARCHAR NOT NULL,
            escalated_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (dataset, criterion, rule, item_id)
        )
        """,
    )
)
