"""Each item's cache hash, computed once when it is imported and stored in ``items.item_hash``.

The judge cache keys a reply on a hash of what a judge sees of an item (question, answers,
reference, passages; not its id or metadata): ``"i"`` + blake2b-96 of the item's canonical JSON,
as :func:`judges.stores.judge_store.item_hash` computes it from an :class:`~labels.models.Item`.
Reports and
run planning read the stored column instead of hashing every item again; this module writes the
same digest from the stored columns, without building an ``Item``:

* :func:`judged_hashes` for stored rows of text that lack one (an older file, or a tool that
  wrote ``items`` directly): :func:`labels.stores.item_store.fill_item_hashes` page by page, and
  run planning; their sources JSON is parsed and written canonically first;
* the importer writes the same JSON by whole columns
  (:func:`labels.stores.item_store.hash_columns`);
* :func:`content_hashes` and :func:`text_lengths` read a page of what a judge sees
  (:meth:`labels.stores.label_store.LabelStore.content_batches`) for run planning.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from json.encoder import encode_basestring as _encode
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

JUDGED_FIELDS = ("question", "answer", "answer_a", "answer_b", "reference", "sources")
"""The item columns a judge sees (``sources`` as stored JSON), in the order the hash reads them."""
JUDGED_COLUMNS = ("item_id", *JUDGED_FIELDS)
"""An item's id and the columns a judge sees: the columns of a content batch."""


def _json_text(value: str | None) -> str:
    return "null" if value is None else _encode(value)


def canonical_sources(stored: str) -> str:
    r"""The stored sources JSON in the hashed form (sorted keys, compact, real unicode).

    Always parsed and written again: these are rows stored without a hash, by an older
    version or another tool, whose JSON may start like the importer's canonical text and still
    differ (``", "`` separators, ``\u00e9`` escapes). The importer hashes its own canonical
    text by whole columns (:func:`labels.stores.item_store.hash_columns`).
    """
    if stored == "[]":
        return stored
    passages = [{"source_id": p.get("source_id"), "text": p["text"]} for p in json.loads(stored)]
    return json.dumps(passages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def judged_text(
    question: str, answer: str | None, answer_a: str | None, answer_b: str | None,
    reference: str | None, sources: str,
) -> str:
    """The canonical JSON that is hashed: sorted keys, compact separators, real unicode."""
    return (f'{{"answer":{_json_text(answer)},"answer_a":{_json_text(answer_a)},'
            f'"answer_b":{_json_text(answer_b)},"question":{_json_text(question)},'
            f'"reference":{_json_text(reference)},"sources":{canonical_sources(sources)}}}')


def judged_hashes(columns: Sequence[Sequence[Any]]) -> list[str]:
    """The cache hash of each row, given the :data:`JUDGED_FIELDS` columns in that order.

    Equal to :func:`judges.stores.judge_store.item_hash` of the stored item (tests check it on
    tricky text).
    """
    blake = hashlib.blake2b
    return ["i" + blake(judged_text(*values).encode(), digest_size=12).hexdigest()
            for values in zip(*columns, strict=True)]


def table_hashes(table: pa.Table | pa.RecordBatch) -> list[str]:
    """:func:`judged_hashes` of an Arrow table or batch holding the :data:`JUDGED_FIELDS`."""
    return judged_hashes([table.column(name).to_pylist() for name in JUDGED_FIELDS])


def content_hashes(batch: pa.RecordBatch) -> list[str]:
    """:func:`judges.stores.judge_store.item_hash` of each row of a content batch.

    The digest stored with each item at import (``items.item_hash``); a row stored without one
    (written by another tool) is hashed from its text, without building an
    :class:`~labels.models.Item`.
    """
    import pyarrow as pa

    stored = batch.column("item_hash")
    if stored.null_count == 0:
        return cast(list[str], stored.to_pylist())
    hashes = stored.to_pylist()
    missing = [i for i, h in enumerate(hashes) if h is None]
    computed = table_hashes(batch.take(pa.array(missing, type=pa.int64())))
    for index, value in zip(missing, computed, strict=True):
        hashes[index] = value
    return cast(list[str], hashes)


def text_lengths(batch: pa.RecordBatch) -> np.ndarray:
    """Characters of judged text per row of a content batch."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    total = np.zeros(batch.num_rows, dtype=np.int64)
    for name in JUDGED_FIELDS:
        lengths = pc.utf8_length(cast(pa.StringArray, batch.column(name)))
        total += np.nan_to_num(lengths.to_numpy(zero_copy_only=False)).astype(np.int64)
    return total


__all__ = ["JUDGED_COLUMNS", "JUDGED_FIELDS", "canonical_sources", "content_hashes",
           "judged_hashes", "judged_text", "table_hashes", "text_lengths"]
