"""The ``labels`` migration set: datasets, items, annotators, criteria, labels.

Statements are split on semicolons, so string literals here must not contain one.
"""

from __future__ import annotations

from labels.migrations import Migration

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

LABEL_MIGRATIONS = [Migration("m001_core", M001_CORE)]

EXPECTED_TABLES = ("annotators", "criteria", "datasets", "items", "labels")
