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


# Labels drawn from the rows an acceptance rule escalated (issue 30: ``calibrate judge
# select``): a new selection, ``escalated``. DuckDB cannot change a CHECK constraint in place
# (nor ALTER a table with an index): rebuild the table with the wider CHECK.
M004_ESCALATED_SELECTION = """
CREATE TABLE label_provenance_new (
    label_id BIGINT PRIMARY KEY,
    selection VARCHAR NOT NULL CHECK (selection IN ('random', 'by_verdict', 'flips_first',
        'active', 'file', 'imported', 'all', 'unknown', 'escalated')),
    stratum VARCHAR,
    inclusion_probability DOUBLE CHECK (inclusion_probability > 0 AND inclusion_probability <= 1),
    selection_share DOUBLE CHECK (selection_share > 0 AND selection_share <= 1),
    judge VARCHAR
);
INSERT INTO label_provenance_new SELECT * FROM label_provenance;
DROP TABLE label_provenance;
ALTER TABLE label_provenance_new RENAME TO label_provenance
"""

LABEL_MIGRATIONS = [
    Migration("m001_core", M001_CORE),
    Migration("m002_label_provenance", M002_LABEL_PROVENANCE),
    Migration("m003_item_hash", m003_item_hash),
    Migration("m004_escalated_selection", M004_ESCALATED_SELECTION),
]

EXPECTED_TABLES = ("annotators", "criteria", "datasets", "items", "label_provenance", "labels")
QUEUE_TABLES = ("queue_escalations", "queue_settings", "queue_skips")

QUEUE_MIGRATIONS = [
    Migration(
        "m001_queue_settings",
        """
        CREATE TABLE queue_settings (
            dataset VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            queue_order VARCHAR NOT NULL
                CHECK (queue_order IN ('random', 'stratified', 'flips_first', 'file')),
            seed BIGINT NOT NULL,
            overlap INTEGER NOT NULL CHECK (overlap >= 1),
            updated_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (dataset, criterion)
        )
        """,
    ),
]
"""The ``queue`` migration set: the owner's queue settings per (dataset, criterion), and each
annotator's skipped rows (kept across reloads, so a skipped row stays at the end of the queue)."""

QUEUE_MIGRATIONS.append(
    Migration(
        "m002_active_order",
        # DuckDB cannot change a CHECK constraint in place: rebuild the table with the new order.
        """
        CREATE TABLE queue_settings_new (
            dataset VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            queue_order VARCHAR NOT NULL
                CHECK (queue_order IN ('random', 'stratified', 'flips_first', 'file', 'active')),
            seed BIGINT NOT NULL,
            overlap INTEGER NOT NULL CHECK (overlap >= 1),
            updated_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (dataset, criterion)
        );
        INSERT INTO queue_settings_new SELECT * FROM queue_settings;
        DROP TABLE queue_settings;
        ALTER TABLE queue_settings_new RENAME TO queue_settings
        """,
    )
)
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
        """
        CREATE TABLE queue_settings_new (
            dataset VARCHAR NOT NULL,
            criterion VARCHAR NOT NULL,
            queue_order VARCHAR NOT NULL CHECK (queue_order IN ('random', 'stratified',
                'flips_first', 'file', 'active', 'escalated')),
            seed BIGINT NOT NULL,
            overlap INTEGER NOT NULL CHECK (overlap >= 1),
            updated_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (dataset, criterion)
        );
        INSERT INTO queue_settings_new SELECT * FROM queue_settings;
        DROP TABLE queue_settings;
        ALTER TABLE queue_settings_new RENAME TO queue_settings;
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
